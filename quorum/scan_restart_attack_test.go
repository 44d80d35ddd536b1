package quorum

import (
	"context"
	"fmt"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/redlock/redlock/internal/redistest"
)

// fillBulk sets n lock keys on s.
func fillBulk(t *testing.T, s *redistest.Server, n int) {
	t.Helper()
	pipe := s.Client().Pipeline()
	for j := range n {
		pipe.Set(context.Background(), fmt.Sprintf("lock:bulk/%04d", j), "v", 10*time.Minute)
	}
	_, err := pipe.Exec(context.Background())
	require.NoError(t, err)
}

// TestAttackScannerAcrossRepeatedRestarts: masters restarted, with their data
// and without (then filled again at once), in the middle of one pass after
// another, while Inspect runs without pause beside the Scanner on the same
// listing connections. With run_id readable, what the listing shows after each
// pass is what the masters hold. For a user refused INFO (run_id unknown) no
// Step fails for it, and two passes without a restart bring the listing back to
// what the masters hold.
func TestAttackScannerAcrossRepeatedRestarts(t *testing.T) {
	for _, tc := range []struct {
		name   string
		noInfo bool
	}{{"run_id read", false}, {"user refused INFO", true}} {
		t.Run(tc.name, func(t *testing.T) {
			ctx := context.Background()
			c := redistest.Start(t, 3, redistest.Options{Args: aofAlways})
			const n = 3000
			addUser := func(s *redistest.Server) {
				require.NoError(t, s.Client().Do(ctx, "ACL", "SETUSER", "noinfo", "on", ">pw", "~*", "&*", "+@all", "-info").Err())
			}
			for _, s := range c.Servers {
				fillBulk(t, s, n)
				addUser(s)
			}
			m := managerVia(t, c, func(_ int, nd *Node) {
				if tc.noInfo {
					nd.Username, nd.Password = "noinfo", "pw"
				}
			})
			stop := make(chan struct{})
			var inspects atomic.Int64
			var wg sync.WaitGroup
			wg.Go(func() {
				for {
					select {
					case <-stop:
						return
					default:
					}
					_, _ = m.inspect(ctx, "")
					inspects.Add(1)
				}
			})
			defer func() { close(stop); wg.Wait() }()

			s := m.newScanner("")
			scanAll(t, s)
			// endPass finishes the pass under way on every master.
			endPass := func() {
				t.Helper()
				target := s.nodes[0].passes
				for _, st := range s.nodes {
					target = max(target, st.passes)
				}
				if s.nodes[0].running {
					target++
				}
				for steps := 0; ; steps++ {
					require.Less(t, steps, 200, "the pass never ended")
					err := s.Step(ctx)
					require.NoError(t, err, "a Step with every master answering")
					done := true
					for _, st := range s.nodes {
						done = done && st.passes >= target
					}
					if done {
						return
					}
				}
			}
			for round := range 6 {
				victim := c.Servers[round%3]
				keep := round%2 == 0
				require.NoError(t, s.Step(ctx)) // the next pass is under way
				require.NotZero(t, s.nodes[round%3].cursor, "mid-pass on the master to restart")
				victim.Restart(keep)
				addUser(victim)
				if !keep && round%4 == 1 {
					fillBulk(t, victim, n)
				}
				endPass()
				got, err := s.Listing()
				require.NoError(t, err)
				if tc.noInfo {
					continue
				}
				want, err := m.inspect(ctx, "")
				require.NoError(t, err)
				assert.Equal(t, summary(want), summary(got), "round %d (%s restarted, data kept %v): the listing after the pass", round, victim.Name, keep)
			}
			endPass()
			endPass()
			got, err := s.Listing()
			require.NoError(t, err)
			want, err := m.inspect(ctx, "")
			require.NoError(t, err)
			assert.Equal(t, summary(want), summary(got), "two passes without a restart")
			t.Logf("%d Inspect calls beside the Scanner", inspects.Load())
		})
	}
}
