package quorum

import (
	"context"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// A key holding a value longer than maxValueLen (not a lock of this package, but
// any string) is, to SET NX, simply held: the go-redis path says Foreign. On the
// fast path SET NX GET reads the value back; one too long to keep must still be
// read past, not taken for a protocol error that drops the master's connection
// and fails every other round's command in flight on it.
func TestAttackPipeLongForeignValueKeepsConnection(t *testing.T) {
	c, m := testCluster(t, 1, WithNodeTimeout(time.Second))
	ctx := context.Background()
	big := strings.Repeat("x", 3*maxValueLen)
	require.NoError(t, c.Servers[0].Client().Set(ctx, "lock:big", big, time.Minute).Err())
	require.Equal(t, 1, m.wireRound(ctx, opAcquire, "lock:warm", wireSet, "rl1.warm", "", 60000).Votes)

	var wg sync.WaitGroup
	var errs atomic.Int32
	stop := make(chan struct{})
	for g := range 16 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			key := "lock:other" + string(rune('a'+g))
			for {
				select {
				case <-stop:
					return
				default:
				}
				rep := m.wireRound(ctx, opAcquire, key, wireSet, "rl1.o", "", 60000)
				if rep.Nodes[0].Outcome == OutcomeError {
					errs.Add(1)
				}
				m.wireRound(ctx, opRelease, key, wireRelease, "rl1.o", "", 0)
			}
		}()
	}
	for range 20 {
		rep := m.wireRound(ctx, opAcquire, "lock:big", wireSet, "rl1.mine", "", 60000)
		assert.Equal(t, []Outcome{OutcomeForeign}, outcomes(rep), "%v", rep.Nodes[0].Err)
	}
	close(stop)
	wg.Wait()
	assert.Zero(t, errs.Load(), "other rounds' commands failed with the long reply's connection")
	assert.Zero(t, m.pipes[0].dropped.Load(), "connections dropped")
	assert.Equal(t, big, c.Servers[0].Client().Get(ctx, "lock:big").Val())
}
