package quorum

import (
	"context"
	"crypto/rand"
	_ "embed"
	"encoding/base64"
	"strconv"
	"time"

	"github.com/redlock/redlock/internal/wire"
)

// Waiter markers. A release publishes a wake-up only where somebody waits: where
// the lock's queue key ("<key>:queue") exists (release.lua). A fair waiter is in
// that queue anyway; every other waiter that relies on a wake-up keeps a marker
// there, the member "h:<id>" with score -(deadline), the form of a fair waiter's
// heartbeat without a place in the queue, which every script that prunes the queue
// drops once it expired. So the common release, with nobody waiting, costs GET, DEL
// and EXISTS on the master, without the PUBLISH.
//
// No wake-up is lost to it, on each master where a waiter's round found the key
// held:
//   - a plain lock's waiting rounds (wait_round.lua) write the marker in the same
//     script as their SET NX, where it fails: scripts are atomic, so a release on
//     that master runs either before the round (which then found the key free
//     there) or after it (and sees the marker);
//   - the waiters of a shared hold, a multi-name lock or a leadership write theirs
//     (wait_mark.lua) before each of their rounds, on the same masters, and
//     Election.Observe before each of its reads: a release after the round (or
//     read) sees the marker, one before it left the key free for it;
//   - the first round of an acquisition writes no marker (an uncontended
//     acquisition costs nothing more); after it failed, the loop subscribes and
//     tries again at once, marking;
//   - a marker makes a release publish, but a waiter hears it only from a master
//     that subscribed it before: a master's confirmation that comes after the
//     waiter's round started ends its wait (wakeHub.confirm), so a release between
//     the two is followed by another round;
//   - an acquisition that ends drops its marker (a plain round that wins does
//     where it set the key; the others in the background, best effort);
//   - a marker lives as long as the key that keeps its waiter out (the release of
//     that key is what it waits for), at most four times the longest gap between
//     two rounds, and at least that gap: the waiter's next round writes it again,
//     and the holder may extend its key and release it later. So a marker never
//     outlives the locks by much, and the queue key goes with the last one.
//
// A permit's release still publishes whether or not anyone marked (its waiters do
// not mark), and so do admin.Admin.ReleaseToken and ReleaseHeld (a holder's loss watch listens).
// A marker lost anyway (a master restarted without its data, the queue key
// deleted) costs at most one retry delay: the next round writes it
// again. A wake-up stays a hint; the retry delay is the fallback.

var (
	//go:embed scripts/wait_round.lua
	waitRoundSrc string
	waitRoundLua = withKeepFlag(waitRoundSrc)
	//go:embed scripts/wait_mark.lua
	waitMarkSrc string
	waitMarkLua = withKeepFlag(waitMarkSrc)

	waitRoundW = wire.NewScript(waitRoundLua)
	waitMarkW  = wire.NewScript(waitMarkLua)
)

// waitMark is one acquisition's marker.
type waitMark struct {
	id    string // "~" and 12 random characters: never a fair waiter's id
	ttlMS string // the marker's longest TTL, in ms
}

// newWaitMark returns a marker for one acquisition. Its longest TTL is the fair
// waiters' heartbeat TTL: four times the longest gap between two rounds of a
// waiting Acquire.
func (m *Manager) newWaitMark() (*waitMark, error) {
	var b [9]byte
	if _, err := rand.Read(b[:]); err != nil {
		return nil, err
	}
	return &waitMark{
		id:    "~" + base64.RawURLEncoding.EncodeToString(b[:]),
		ttlMS: strconv.FormatInt(m.heartbeatTTL().Milliseconds(), 10),
	}, nil
}

// marks reports whether an acquisition by acq (nil: a plain lock) with fw (nil:
// not fair) marks itself while it waits: a fair waiter is queued instead, and a
// permit's release publishes without markers.
func marks(acq acquirer, fw *fairWaiter) bool {
	_, permit := acq.(*permitAcquirer)
	return fw == nil && !permit
}

// waitRound runs wait_round.lua on every master as one round: SET NX PX, and where
// the key is held, w's marker in the same step.
func (m *Manager) waitRound(ctx context.Context, key, value string, ms int64, w *waitMark) *Report {
	c := m.getCall()
	c.keys[0], c.keys[1] = key, key+queueSuffix
	c.args[0], c.args[1], c.args[2], c.args[3] = value, strconv.FormatInt(ms, 10), w.id, w.ttlMS
	c.cmd = wire.Cmd{Script: waitRoundW, Keys: c.keys[:2], Args: c.args[:4], Want: "+$:"}
	m.atQuorum(c, m.votes.wait)
	return m.send(ctx, opAcquire, key, c, decodeWaitRound)
}

// decodeWaitRound reads wait_round.lua's reply: +OK where it set the key, else
// the value there (the holder) or 0 (a key of another type: holder unknown).
func decodeWaitRound(r *wire.Result) (Outcome, string, error) {
	switch {
	case r.Type == '+' && r.Str == "OK":
		return OutcomeOK, "", nil
	case r.Type == '$' && r.Int >= 0:
		return OutcomeForeign, r.Str, nil
	case r.Type == ':':
		return OutcomeForeign, "", nil
	}
	return OutcomeError, "", replyErr(r)
}

// markWaiting writes w's marker beside key on every master (wait_mark.lua), to
// live as long as key there, or ttl where key has no TTL or is missing. Best
// effort: a master that misses it costs at most a retry delay there.
func (m *Manager) markWaiting(ctx context.Context, key string, w *waitMark, ttl time.Duration) {
	c := m.getCall()
	c.keys[0], c.keys[1] = key, key+queueSuffix
	c.args[0], c.args[1], c.args[2] = w.id, w.ttlMS, strconv.FormatInt(max(ttl.Milliseconds(), 1), 10)
	m.scriptRound(ctx, "mark", key, waitMarkW, c, 2, 3, decodeInt)
}

// unmark drops w's marker beside key on every master, in the background and best
// effort: a marker left behind expires with the key that kept its waiter out, and
// until then only makes that key's release publish.
func (m *Manager) unmark(ctx context.Context, key string, w *waitMark) {
	m.bestEffort(ctx, nil, "ZREM", key+queueSuffix, "h:"+w.id)
}
