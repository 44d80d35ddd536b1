package quorum

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestIssue23PartialReleaseIsARelease: held on 5 masters, one killed. Deleted on
// every master that answered (a quorum) is a release: the error matches
// ErrPartialRelease and not ErrUnavailable, names the master that did not answer
// and when its copy expires, and claims no quorum failure. With fewer than a quorum
// answering it is ErrUnavailable.
func TestIssue23PartialReleaseIsARelease(t *testing.T) {
	ctx := context.Background()
	tests := []struct {
		name        string
		kill        []int
		partial     bool
		unavailable bool
	}{
		{name: "one master down", kill: []int{1}, partial: true},
		{name: "two masters down", kill: []int{1, 3}, partial: true},
		{name: "three masters down", kill: []int{0, 1, 3}, unavailable: true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c, m := testCluster(t, 5)
			for _, release := range []string{"Lock.Release", "ReleaseToken"} {
				t.Run(release, func(t *testing.T) {
					for _, s := range c.Servers {
						s.Restart(false)
					}
					l, err := m.TryAcquire(ctx, "partial", 10*time.Second)
					require.NoError(t, err)
					for _, i := range tt.kill {
						c.Servers[i].Kill()
					}
					if release == "Lock.Release" {
						err = l.Release(ctx)
					} else {
						_, err = m.releaseToken(ctx, "partial", l.Token())
					}
					require.Error(t, err)
					assert.Equal(t, tt.partial, errors.Is(err, ErrPartialRelease), err.Error())
					assert.Equal(t, tt.unavailable, errors.Is(err, ErrUnavailable), err.Error())
					for _, i := range tt.kill {
						assert.Contains(t, err.Error(), c.Servers[i].Name)
					}
					if !tt.partial {
						return
					}
					assert.NotContains(t, err.Error(), "unavailable")
					assert.NotContains(t, err.Error(), "votes")
					var pe *PartialReleaseError
					require.ErrorAs(t, err, &pe)
					assert.Equal(t, len(tt.kill), pe.count(OutcomeError))
					if release == "Lock.Release" {
						assert.Contains(t, err.Error(), "at the latest")
						assert.WithinRange(t, pe.Expires, time.Now().Add(10*time.Second), time.Now().Add(11*time.Second))
					} else {
						assert.True(t, pe.Expires.IsZero(), "a release by token does not know the TTL")
					}
					assert.Empty(t, keysOn(t, c, "lock:partial"), "deleted on every master that answered")
				})
			}
		})
	}
}
