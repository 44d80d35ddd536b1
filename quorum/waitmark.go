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
//   - the primitives' waiters (a shared hold, a multi-name lock, a permit, a
//     leadership) write theirs with a round of their own (wait_mark.lua), and the
//     acquisition loop then tries again at once: a release before the marker was
//     written left the key free for that round, one after it sees the marker;
//   - the first round of an acquisition writes no marker (an uncontended
//     acquisition costs nothing more); after it failed, the loop subscribes and
//     tries again at once, with a marking round;
//   - each marking round writes the deadline now + markerTTL, at least four
//     times the longest gap between two rounds, so the marker outlives the wait.
//
// A marker lost anyway (a master restarted without its data, the queue key
// deleted) costs at most one retry delay: the next round writes it again. A
// wake-up stays a hint; the retry delay is the fallback.

var (
	//go:embed scripts/wait_round.lua
	waitRoundLua string
	//go:embed scripts/wait_mark.lua
	waitMarkLua string

	waitRoundW = wire.NewScript(waitRoundLua)
	waitMarkW  = wire.NewScript(waitMarkLua)
)

// waitMark is one acquisition's marker.
type waitMark struct {
	id    string    // "~" and 12 random characters: never a fair waiter's id
	ttlMS string    // the marker's TTL, in ms
	at    time.Time // when wait_mark.lua last wrote it (the primitives' waiters)
}

// newWaitMark returns a marker for one acquisition. Its TTL is the fair waiters'
// heartbeat TTL: four times the longest gap between two rounds of a waiting Acquire.
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

// stale reports whether wait_mark.lua should write the marker again before the
// next round: half its TTL has passed since it last did.
func (w *waitMark) stale(m *Manager, now time.Time) bool {
	return now.Sub(w.at) >= m.heartbeatTTL()/2
}

// waitRound runs wait_round.lua on every master as one round: SET NX PX, and where
// the key is held, w's marker in the same step.
func (m *Manager) waitRound(ctx context.Context, key, value string, ms int64, w *waitMark) *Report {
	c := m.getCall()
	c.keys[0], c.keys[1] = key, key+queueSuffix
	c.args[0], c.args[1], c.args[2], c.args[3] = value, strconv.FormatInt(ms, 10), w.id, w.ttlMS
	c.cmd = wire.Cmd{Script: waitRoundW, Keys: c.keys[:2], Args: c.args[:4], Want: "+$:"}
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

// markWaiting writes w's marker beside key on every master (wait_mark.lua), best
// effort: a master that misses it costs at most a retry delay there.
func (m *Manager) markWaiting(ctx context.Context, key string, w *waitMark) {
	w.at = time.Now()
	c := m.getCall()
	c.keys[0] = key + queueSuffix
	c.args[0], c.args[1] = w.id, w.ttlMS
	m.scriptRound(ctx, "mark", key, waitMarkW, c, 1, 2, decodeInt)
}
