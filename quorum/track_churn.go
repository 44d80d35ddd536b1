package quorum

import "time"

// How the loss watch keeps a master whose invalidations change nothing from
// making it read without end (track_node.go).

// trackChurn is how many times a tracker reads a key at once, between two
// ticks (trackPoll), after an invalidation that changed nothing it watches (the
// key was held there before and still is) when the master is busy so (trackBusy);
// later invalidations of it are read together, trackSlow after the first. A
// master whose tracking table is full (tracking-table-max-keys below the keys
// watched there) evicts a tracked key, with an invalidation, for every key
// read: answering each at once would read without end. On a master that is not
// busy so, every change is read at once however often a key changes (a name
// many clients contend for or share), and so is any invalidation of a key
// whose reads showed a change.
const trackChurn = 4

// trackSlow is how long a churning key's invalidations on a busy master wait
// to be read, together: a loss there is heard within trackSlow more.
const trackSlow = 100 * time.Millisecond

// trackBusy is how many reads that changed nothing make a master busy between
// two ticks: more than trackChurn per watched key (an extension invalidates
// its key once) plus a margin for a few hot keys.
func trackBusy(keys int) int { return trackChurn*keys + 64 }

// reread marks k to be read again: at once, unless the master is busy and k's
// reads found it unchanged trackChurn times since the last tick. t.mu must be
// held.
func (t *tracker) reread(k string) {
	if t.churn[k] < trackChurn || t.churned <= trackBusy(len(t.keys)) {
		t.dirty[k] = struct{}{}
		return
	}
	t.slow[k] = struct{}{}
	if !t.slowAt {
		t.slowAt = true
		time.AfterFunc(trackSlow, t.readSlow)
	}
}

// readSlow marks the churning keys put off to be read again.
func (t *tracker) readSlow() {
	t.mu.Lock()
	t.slowAt = false
	for k := range t.slow {
		if _, ok := t.keys[k]; ok {
			t.dirty[k] = struct{}{}
		}
	}
	clear(t.slow)
	t.mu.Unlock()
	t.poke()
}

// steady counts a read of k that found it held as before.
func (t *tracker) steady(k string) {
	t.mu.Lock()
	t.churn[k]++
	t.churned++
	t.mu.Unlock()
}

// flushed marks every key to be read again after a null invalidation push: at
// once, unless one was read at once within trackSlow, then trackSlow after
// that one (flushes pushed meanwhile read together). The master pushes one for
// a FLUSHALL, and for a FLUSHDB of any database (tracking names keys, not
// databases): another database's client flushing it in a loop, thousands of
// times a second, made the watch read every key it watches as often.
func (t *tracker) flushed() {
	now := time.Now()
	t.mu.Lock()
	defer t.mu.Unlock()
	switch {
	case t.flushIn:
	case now.Sub(t.flushAt) >= trackSlow:
		t.flushAt, t.all = now, true
		t.poke()
	default:
		t.flushIn = true
		time.AfterFunc(t.flushAt.Add(trackSlow).Sub(now), func() {
			t.mu.Lock()
			t.flushIn, t.flushAt, t.all = false, time.Now(), true
			t.mu.Unlock()
			t.poke()
		})
	}
}
