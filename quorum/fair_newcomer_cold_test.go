package quorum

import (
	"context"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/redlock/redlock/internal/redistest"
)

// TestBugFairColdNewcomerAheadOfTheWokenHeadStallsTheQueue: the newcomer of
// TestBugFairNewcomerAheadOfTheWokenHeadStallsTheQueue on a Manager that has not
// listened for wake-ups before (a one-shot process's first acquisition). Its
// first failed round is followed by its subscription and, once confirmed, by a
// round at once, which counts as woken: that round, granted on a and b, got at
// most maxSoon short pauses (a few milliseconds) and then the whole retry
// delay, so a release that reached d and e a little later stood the queue still
// for the retry delay, where a warm newcomer keeps trying after doubling pauses.
func TestBugFairColdNewcomerAheadOfTheWokenHeadStallsTheQueue(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	c := redistest.Start(t, 5, redistest.Options{})
	const delay = 10 * time.Second
	waiter := managerFor(t, c, WithRetry(1000, delay, 0))
	key := waiter.Key("newcomer")

	newcomerAheadOfTheWokenHead(ctx, t, c, waiter, delay, func() {
		require.Eventually(t, func() bool {
			h := waiter.runningHub()
			return h != nil && assert.ObjectsAreEqual([]int{0, 1, 2}, confirmedOn(h, ownWakeChannel(key, waiter.wakeTag)))
		}, 5*time.Second, time.Millisecond, "the waiter listens on a, b and c")
	})
}
