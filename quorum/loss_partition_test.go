package quorum

import (
	"context"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/redlock/redlock/internal/faults"
	"github.com/redlock/redlock/internal/redistest"
)

// TestBugLossWatchHearsALossDuringAPartition: the watch's connections to three
// masters go silent (a partition that drops everything and closes nothing)
// while the lock is deleted there; the invalidations are lost with the rest.
// The watch PINGs its connections every trackPoll, so it dials again and reads
// every key once the partition heals: Done fires then, not at the next
// extension or at Until (30 s).
func TestBugLossWatchHearsALossDuringAPartition(t *testing.T) {
	a := newAtk(t, 5, redistest.Options{})
	m := a.client("holder")
	ctx := context.Background()
	l, err := m.Acquire(ctx, "part", 30*time.Second, WithLossWatch())
	require.NoError(t, err)
	armed(t, m, l)
	var cut []string
	for _, s := range a.c.Servers[:3] {
		cut = append(cut, s.Name)
	}
	a.net.Each("holder", (*faults.Proxy).Blackhole, cut...)
	for _, s := range a.c.Servers[:3] {
		require.NoError(t, s.Client().Del(ctx, l.Key()).Err())
	}
	time.Sleep(trackPoll + 500*time.Millisecond) // the PINGs time out
	a.net.Each("holder", func(p *faults.Proxy) { p.Heal() })
	healed := time.Now()
	select {
	case <-l.Done():
		t.Logf("Done %v after the partition healed", time.Since(healed))
		require.ErrorIs(t, l.Err(), ErrLost)
	case <-time.After(trackPoll + 3*time.Second):
		t.Fatal("the loss during the partition was not heard after it healed")
	}
}

// TestBugLossWatchRereadsARefusedRead: a read the master refuses (a master
// still loading its data after a restart, an ACL: here GET denied for a while)
// arms no tracking of the key. The watch read it once and waited for an
// invalidation that could never come; it now reads it again every trackPoll
// until the master answers, and a later loss is heard.
func TestBugLossWatchRereadsARefusedRead(t *testing.T) {
	c, m := testCluster(t, 5)
	ctx := context.Background()
	acl := func(rule string) {
		for _, s := range c.Servers {
			require.NoError(t, s.Client().Do(ctx, "ACL", "SETUSER", "default", rule).Err())
		}
	}
	acl("-get")
	l, err := m.Acquire(ctx, "refused", 30*time.Second, WithLossWatch())
	require.NoError(t, err)
	time.Sleep(200 * time.Millisecond) // the watch's first reads are refused
	acl("+get")
	armed(t, m, l)
	for _, s := range c.Servers[:3] {
		require.NoError(t, s.Client().Del(ctx, l.Key()).Err())
	}
	select {
	case <-l.Done():
		require.ErrorIs(t, l.Err(), ErrLost)
	case <-time.After(3 * time.Second):
		t.Fatal("the loss was not heard: the refused read was never made again")
	}
}

// TestLossWatchOverTLS: the watch's connections are dialled as the lock
// traffic's are, TLS included, and track there.
func TestLossWatchOverTLS(t *testing.T) {
	c := redistest.Start(t, 3, redistest.Options{TLS: true})
	m := tlsManager(t, tlsNodes(c, (*redistest.Server).TLSConfig))
	ctx := context.Background()
	l, err := m.Acquire(ctx, "tls", 30*time.Second, WithLossWatch())
	require.NoError(t, err)
	armed(t, m, l)
	for _, tr := range m.losses().trackers {
		require.True(t, tr.tracking.Load(), "%s does not track", tr.n.name)
	}
	for _, s := range c.Servers[:2] {
		require.NoError(t, s.Client().Del(ctx, l.Key()).Err())
	}
	select {
	case <-l.Done():
		require.ErrorIs(t, l.Err(), ErrLost)
	case <-time.After(3 * time.Second):
		t.Fatal("a loss over TLS was not heard")
	}
}
