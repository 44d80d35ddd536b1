package cli

import (
	"context"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/redlock/redlock/internal/redistest"
	"github.com/redlock/redlock/quorum"
)

// Bug 6 of the safety review: `acquire -wait` and `run -wait` on a fair lock called
// Acquire again whenever the retry policy's attempts ran out, with a new place at
// the back of the queue: a waiter that came later was served first.
func TestBug6FairWaiterKeepsItsPlaceForTheWholeWait(t *testing.T) {
	c := redistest.Start(t, 3, redistest.Options{})
	nodes := make([]quorum.Node, len(c.Servers))
	for i, s := range c.Servers {
		nodes[i] = quorum.Node{Name: s.Name, Addr: s.Addr()}
	}
	manager := func(attempts int) *quorum.Manager {
		m, err := quorum.New(nodes, quorum.WithRestartQuarantine(0), quorum.WithRetry(attempts, 50*time.Millisecond, 0))
		require.NoError(t, err)
		t.Cleanup(func() { _ = m.Close() })
		return m
	}
	ctx := context.Background()
	// The first waiter's policy runs out (two attempts 50ms apart) long before its
	// wait does; the second one's never does, so it keeps its place either way.
	holder, first, second := manager(2), manager(2), manager(1000)
	h, err := holder.TryAcquire(ctx, "review/6", 10*time.Second, quorum.WithFair())
	require.NoError(t, err)

	got := make(chan string, 2)
	var wg sync.WaitGroup
	defer wg.Wait()
	wait := func(m *quorum.Manager, who string) {
		defer wg.Done()
		l, err := waitAcquire(ctx, m, "review/6", 10*time.Second, 5*time.Second, quorum.WithFair())
		if !assert.NoError(t, err, who) {
			got <- "error"
			return
		}
		got <- who
		time.Sleep(50 * time.Millisecond)
		assert.NoError(t, l.Release(ctx))
	}
	wg.Add(2)
	go wait(first, "first")
	time.Sleep(500 * time.Millisecond)
	go wait(second, "second")
	time.Sleep(500 * time.Millisecond)
	require.NoError(t, h.Release(ctx))
	assert.Equal(t, "first", <-got, "the waiter that came first is served first")
	assert.Equal(t, "second", <-got)
}
