package quorum

import (
	"context"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// Acquired is the start of the acquiring round: the first Until counts from it,
// and it does not move when an extension moves Until.
func TestAcquiredIsTheStartOfTheAcquiringRound(t *testing.T) {
	ctx := context.Background()
	_, m := testCluster(t, 3)
	before := time.Now()
	l, err := m.TryAcquire(ctx, "acquired", 2*time.Second)
	require.NoError(t, err)
	after := time.Now()
	at := l.Acquired()
	assert.False(t, at.Before(before), "not before the call")
	assert.False(t, at.After(after), "not after it returned")
	assert.Equal(t, at.Add(2*time.Second-m.DriftBudget(2*time.Second)), l.Until(), "Until counts from it")
	require.NoError(t, l.Extend(ctx, 3*time.Second))
	assert.Equal(t, at, l.Acquired(), "an extension does not move it")
	require.NoError(t, l.Release(ctx))
}

// validFrom is the start of the round that set Until, and Until keeps the bound
// validFrom + ttl - drift through extensions.
func TestValidFromBoundsUntil(t *testing.T) {
	ctx := context.Background()
	_, m := testCluster(t, 3)
	before := time.Now()
	l, err := m.TryAcquire(ctx, "valid-from", 2*time.Second)
	require.NoError(t, err)
	assert.Equal(t, l.Acquired(), l.validFrom(), "the acquiring round set Until")
	assert.False(t, l.validFrom().Before(before))
	assert.False(t, l.Until().After(l.validFrom().Add(2*time.Second-m.DriftBudget(2*time.Second))))
	beforeExtend := time.Now()
	require.NoError(t, l.Extend(ctx, 3*time.Second))
	assert.False(t, l.validFrom().Before(beforeExtend), "the extension's round set it")
	assert.False(t, l.Until().After(l.validFrom().Add(3*time.Second-m.DriftBudget(3*time.Second))))
	require.NoError(t, l.Release(ctx))
}

// validFrom returns the moment the current Until is counted from: the clock's
// reading before the first command of the round (acquire or extend) that set it
// was sent. It is the basis of the validity bound, which holds whatever the
// masters answered:
//
//	Until() <= validFrom() + ttl - DriftBudget(ttl)
//
// for the TTL of that round, so a test can audit a lock's validity without trusting
// how the round went. Like Until, it is a
// reading of the Manager's clock (WithClock), and it moves with each extension.
func (l *Lock) validFrom() time.Time {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.untilFrom
}
