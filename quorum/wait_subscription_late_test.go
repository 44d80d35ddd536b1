package quorum

import (
	"context"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// Regression: a waiter whose subscription a master confirmed only after
// subscribed gave up on it (a loaded machine, a slow master) slept its whole
// retry delay, though a release in the meantime had gone unheard: the
// confirmation now ends the wait, once.
func TestBugWaiterSleptItsRetryDelayWhenItsSubscriptionWasConfirmedLate(t *testing.T) {
	m := &Manager{}
	w := &waiter{ch: make(chan struct{}, 1), ready: make(chan struct{})}
	time.AfterFunc(50*time.Millisecond, func() { close(w.ready) })
	start := time.Now()
	woken, err := m.await(context.Background(), w, start, 3*time.Second)
	require.NoError(t, err)
	assert.True(t, woken, "the confirmation ends the wait")
	assert.Less(t, time.Since(start), 2*time.Second, "not the retry delay")

	// Once confirmed, only a wake-up or the delay ends a wait.
	start = time.Now()
	woken, err = m.await(context.Background(), w, start, 100*time.Millisecond)
	require.NoError(t, err)
	assert.False(t, woken)
	assert.GreaterOrEqual(t, time.Since(start), 100*time.Millisecond)
}
