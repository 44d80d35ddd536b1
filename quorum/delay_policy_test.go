package quorum

import (
	"context"
	"errors"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// stubDelays is a delay policy that records what it was asked: a pause of pause,
// short (soon) for its first soonFor calls.
type stubDelays struct {
	mu      sync.Mutex
	pause   time.Duration
	soonFor int
	calls   int
	fair    bool // the policy was made for a fair acquisition
	notHeld int  // calls whose failed round did not match ErrHeld
}

func (s *stubDelays) next(last error, _ bool) (time.Duration, bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.calls++
	if !errors.Is(last, ErrHeld) {
		s.notHeld++
	}
	return s.pause, s.calls <= s.soonFor
}

// TestWaiterDelayPolicyIsPluggable replaces the delay policy of Acquire against a
// lock somebody else holds: the policy is asked after every failed round but the
// first (which subscribes and marks, then tries again at once), its pauses are
// slept, and its short pauses use no attempt. A subscription confirmed only after
// the node timeout wakes one more round that uses no attempt (await): one call more.
func TestWaiterDelayPolicyIsPluggable(t *testing.T) {
	tests := []struct {
		name      string
		attempts  int
		soonFor   int
		fair      bool
		wantCalls int
	}{
		// Round 1 fails and subscribes; round 2 (woken) uses no attempt; rounds 3
		// and 4 use the other two.
		{name: "whole pauses", attempts: 3, wantCalls: 2},
		// Rounds 2 to 7 follow a wake-up or a short pause; round 8 uses the second attempt.
		{name: "short pauses use no attempt", attempts: 2, soonFor: 5, wantCalls: 6},
		{name: "fair", attempts: 3, fair: true, wantCalls: 2},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, m := testCluster(t, 3, WithRetry(tt.attempts, time.Hour, 0))
			stub := &stubDelays{pause: 50 * time.Millisecond, soonFor: tt.soonFor}
			m.cfg.delays = func(fw *fairWaiter) delayPolicy {
				stub.fair = fw != nil
				return stub
			}
			ctx := context.Background()
			var opts []LockOption
			if tt.fair {
				opts = append(opts, WithFair())
			}
			held, err := m.TryAcquire(ctx, "plug", 30*time.Second, opts...)
			require.NoError(t, err)
			defer func() { _ = held.Release(ctx) }()

			t0 := time.Now()
			_, err = m.Acquire(ctx, "plug", 30*time.Second, opts...)
			require.ErrorIs(t, err, ErrNotAcquired)
			require.ErrorIs(t, err, ErrHeld)
			stub.mu.Lock()
			defer stub.mu.Unlock()
			assert.GreaterOrEqual(t, stub.calls, tt.wantCalls, "policy calls")
			// One more for a late confirmation, one more again under the race
			// detector and a loaded machine (CI: 4 calls for 2 wanted).
			assert.LessOrEqual(t, stub.calls, tt.wantCalls+2, "policy calls")
			assert.Zero(t, stub.notHeld, "every failed round it heard of met the holder")
			assert.Equal(t, tt.fair, stub.fair, "the policy knows the fair place")
			// The retry delay is an hour: only the policy's pauses were slept (one
			// of them may have ended at a late confirmation, which wakes the
			// waiter: CI, 212ms for five pauses of 50ms).
			assert.GreaterOrEqual(t, time.Since(t0), time.Duration(max(tt.wantCalls-2, 0))*stub.pause)
			assert.Less(t, time.Since(t0), time.Minute)
		})
	}
}
