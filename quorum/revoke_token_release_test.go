package quorum

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

// TestBugReleaseByTokenOfARevokedHoldFreesIt: the release by token of a
// revoked hold (`redlock release NAME -token T`, and what run's guard runs when
// run died before its command) is the revoked holder's acknowledgement, as its
// own release is: the tombstone goes and the name is free at once. A permit's
// slot was found by its value only (sem_find.lua), so its tombstone was never
// found: the release said "released already" and the slot stayed taken for the
// whole lock-delay (30 s here). A plain lock's tombstone was deleted, but
// release.lua's reply for it counted as another owner's on every master: the
// CLI then exited 4, "another owner or its revocation holds it", about a name
// its release had just freed.
func TestBugReleaseByTokenOfARevokedHoldFreesIt(t *testing.T) {
	for _, k := range holdKinds {
		if k.kind == "leader" {
			continue // a leadership is released by its Release (it resigns), not by token
		}
		t.Run(k.kind, func(t *testing.T) {
			c, m := testCluster(t, 3)
			admin := managerFor(t, c)
			ctx := context.Background()
			name := "revoked-token-" + k.kind
			l, err := k.take(ctx, m, name, 30*time.Second)
			require.NoError(t, err)
			armed(t, m, l)
			_, err = k.revoke(ctx, admin, l)
			require.NoError(t, err)
			select {
			case <-l.Done():
			case <-time.After(3 * time.Second):
				t.Fatal("the holder did not hear its revocation")
			}
			rep, err := admin.releaseHeld(ctx, strings.Fields(l.Name()), l.Token())
			require.NoError(t, err)
			require.Zero(t, rep.count(OutcomeForeign), "nothing of another owner is there: %v", rep.Nodes)
			next, err := k.rival(ctx, managerFor(t, c), name, 2*time.Second)
			require.NoError(t, err, "free at once after the release by token of the revoked holder")
			require.NoError(t, next.Release(ctx))
		})
	}
}
