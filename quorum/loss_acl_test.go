package quorum

import (
	"bufio"
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/redlock/redlock/internal/redistest"
)

// docACL returns the rules of user in docs/acl.md's ACL SETUSER line, its
// password made pw.
func docACL(t *testing.T, user string) []any {
	t.Helper()
	f, err := os.Open(filepath.Join("..", "docs", "acl.md"))
	require.NoError(t, err)
	defer f.Close()
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		fields := strings.Fields(sc.Text())
		if len(fields) > 3 && fields[0] == "ACL" && fields[1] == "SETUSER" && fields[2] == user {
			args := []any{"ACL", "SETUSER", user}
			for _, r := range fields[3:] {
				args = append(args, strings.Replace(r, ">CHANGE-ME", ">pw", 1))
			}
			return args
		}
	}
	require.NoError(t, sc.Err())
	t.Fatalf("docs/acl.md declares no user %s", user)
	return nil
}

// TestBugLossWatchTracksUnderTheDocumentedACL: the users of docs/acl.md were not
// granted HELLO nor CLIENT TRACKING, so under them the loss watch was refused
// tracking on every master and read every watched key every second instead (at
// 10,000 locks, 10,000 GET per second per master and Manager), hearing each loss
// up to a second late, and the ACL log filled with the refusals. Both users'
// watches must track, and the masters refuse nothing.
func TestBugLossWatchTracksUnderTheDocumentedACL(t *testing.T) {
	for _, user := range []string{"locker", "admin"} {
		t.Run(user, func(t *testing.T) {
			ctx := context.Background()
			c := redistest.Start(t, 3, redistest.Options{})
			for _, s := range c.Servers {
				require.NoError(t, s.Client().Do(ctx, docACL(t, user)...).Err())
			}
			m := managerVia(t, c, func(_ int, n *Node) { n.Username, n.Password = user, "pw" })
			l, err := m.Acquire(ctx, "acl-watch", time.Minute, WithLossWatch())
			require.NoError(t, err)
			armed(t, m, l)
			for _, tr := range m.losses().trackers {
				assert.True(t, tr.tracking.Load(), "%s: the watch polls instead of tracking", tr.n.name)
			}
			for _, s := range c.Servers[:2] {
				require.NoError(t, s.Client().Del(ctx, l.Key()).Err())
			}
			select {
			case <-l.Done():
				require.ErrorIs(t, l.Err(), ErrLost)
			case <-time.After(trackPoll + 3*time.Second):
				t.Fatal("the loss was not heard")
			}
			for _, s := range c.Servers {
				log, err := s.Client().Do(ctx, "ACL", "LOG").Slice()
				require.NoError(t, err)
				assert.Empty(t, log, "%s refused something", s.Name)
			}
		})
	}
}
