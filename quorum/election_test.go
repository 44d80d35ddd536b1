package quorum

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestElectionCampaignLeaderResign(t *testing.T) {
	_, m := testCluster(t, 3)
	ctx := context.Background()
	e, err := m.Election("scheduler")
	require.NoError(t, err)
	_, err = e.Leader(ctx)
	require.ErrorIs(t, err, ErrNoLeader)

	a, err := e.Campaign(ctx, "10.0.0.1:8080", time.Second)
	require.NoError(t, err)
	assert.Equal(t, int64(1), a.Term())
	li, err := e.Leader(ctx)
	require.NoError(t, err)
	assert.Equal(t, "10.0.0.1:8080", li.Value)
	assert.Equal(t, int64(1), li.Term)
	assert.Greater(t, li.Validity, time.Duration(0))

	bctx, bcancel := context.WithTimeout(ctx, 150*time.Millisecond)
	_, err = e.Campaign(bctx, "b", time.Second)
	bcancel()
	require.ErrorIs(t, err, ErrNotAcquired)
	require.ErrorIs(t, err, context.DeadlineExceeded)

	require.NoError(t, a.Proclaim(ctx, "10.0.0.1:9090"))
	li, err = e.Leader(ctx)
	require.NoError(t, err)
	assert.Equal(t, "10.0.0.1:9090", li.Value)

	done := make(chan *Leadership)
	go func() {
		b, err := e.Campaign(ctx, "b", time.Second)
		assert.NoError(t, err)
		done <- b
	}()
	time.Sleep(50 * time.Millisecond)
	require.NoError(t, a.Release(ctx))
	b := <-done
	assert.Equal(t, int64(2), b.Term())
	li, err = e.Leader(ctx)
	require.NoError(t, err)
	assert.Equal(t, "b", li.Value)
	require.NoError(t, b.Release(ctx))
}

func TestElectionObserveSeesEachChange(t *testing.T) {
	_, m := testCluster(t, 3)
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	e, err := m.Election("obs")
	require.NoError(t, err)
	ch := e.Observe(ctx)
	first := <-ch
	require.ErrorIs(t, first.Err, ErrNoLeader)
	a, err := e.Campaign(ctx, "a", time.Second)
	require.NoError(t, err)
	next := <-ch
	require.NotNil(t, next.Leader, "%v", next.Err)
	assert.Equal(t, "a", next.Leader.Value)
	require.NoError(t, a.Release(ctx))
	next = <-ch
	require.Nil(t, next.Leader)
	assert.True(t, errors.Is(next.Err, ErrNoLeader))
}

func TestLeaderNeverNamesAMinority(t *testing.T) {
	c, m := testCluster(t, 3)
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	e, err := m.Election("minority")
	require.NoError(t, err)
	obs := e.Observe(ctx)
	require.ErrorIs(t, (<-obs).Err, ErrNoLeader)
	// A forged leadership with its record on one master of three, and a hint.
	fake := "rl1.AAAAAAAAAAAAAAAAAAAAAAAAAAA.e30"
	s := c.Servers[0].Client()
	require.NoError(t, s.Set(ctx, "lock:minority:leader", fake, 5*time.Second).Err())
	require.NoError(t, s.HSet(ctx, "lock:minority:leader:term", "token", fake, "term", "7", "since", "1", "value", "forged").Err())
	require.NoError(t, s.Publish(ctx, "lock:minority:leader:wake", "term 7").Err())
	_, err = e.Leader(ctx)
	require.ErrorIs(t, err, ErrNoLeader)
	select {
	case o := <-obs:
		t.Fatalf("Observe reported %+v for a leadership on one master of three", o)
	case <-time.After(1500 * time.Millisecond): // past a poll
	}
	// On a quorum it is a leader, term and value included.
	s2 := c.Servers[1].Client()
	require.NoError(t, s2.Set(ctx, "lock:minority:leader", fake, 5*time.Second).Err())
	require.NoError(t, s2.HSet(ctx, "lock:minority:leader:term", "token", fake, "term", "7", "since", "1", "value", "forged").Err())
	li, err := e.Leader(ctx)
	require.NoError(t, err)
	assert.Equal(t, int64(7), li.Term)
	assert.Equal(t, 2, li.Votes)
	o := <-obs
	require.NotNil(t, o.Leader)
	assert.Equal(t, "forged", o.Leader.Value)
	// A campaign gets a term above the one it read.
	require.NoError(t, s.Set(ctx, "lock:minority:leader:fence", "7", 0).Err())
	for _, sv := range c.Servers[:2] {
		require.NoError(t, sv.Client().Del(ctx, "lock:minority:leader").Err())
	}
	ld, err := e.Campaign(ctx, "real", time.Second)
	require.NoError(t, err)
	assert.Equal(t, int64(8), ld.Term())
	_, err = e.Campaign(ctx, strings.Repeat("x", maxLeaderValue+1), time.Second)
	require.ErrorIs(t, err, ErrInvalidArgument)
	require.ErrorIs(t, ld.Proclaim(ctx, strings.Repeat("x", maxLeaderValue+1)), ErrInvalidArgument)
	require.NoError(t, ld.Release(ctx))
}

func TestLeadershipMovesWhenTheLeaderDies(t *testing.T) {
	c, m := testCluster(t, 3)
	dead := managerFor(t, c)
	ctx, cancel := context.WithTimeout(context.Background(), 15*time.Second)
	defer cancel()
	e, err := m.Election("moves")
	require.NoError(t, err)
	de, err := dead.Election("moves")
	require.NoError(t, err)
	a, err := de.Campaign(ctx, "a", 500*time.Millisecond)
	require.NoError(t, err)
	obs := e.Observe(ctx)
	first := <-obs
	require.NotNil(t, first.Leader)
	assert.Equal(t, "a", first.Leader.Value)
	won := make(chan *Leadership, 1)
	go func() {
		b, err := e.Campaign(ctx, "b", 500*time.Millisecond)
		assert.NoError(t, err)
		won <- b
	}()
	// The leader's process dies: no resignation, no more extensions.
	killed := time.Now()
	require.NoError(t, dead.Close())
	b := <-won
	assert.Less(t, time.Since(killed), 2*time.Second, "the next candidate leads once the dead one's leadership expired")
	assert.Greater(t, b.Term(), a.Term())
	<-a.Done()
	for o := range obs {
		if o.Leader != nil && o.Leader.Value == "b" {
			assert.Equal(t, b.Term(), o.Leader.Term)
			break
		}
	}
	require.NoError(t, b.Release(ctx))
}
