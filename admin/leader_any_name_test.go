package admin_test

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/redlock/redlock/admin"
)

// A listing shows keys of any name, written by any tool; an election whose name
// breaks quorum.ValidateName (control characters, invalid UTF-8, whitespace, a
// long name, none) was listed as led by nobody while a leader held it on every
// master with its record, and Primitives returned the name check's error,
// which names no key. The leader of a listed election is read whatever its name.
func TestBugLeaderOfAnyListedNameIsRead(t *testing.T) {
	ctx := context.Background()
	c, _, a := testCluster(t, 3)
	const token = "rl1.AAAAAAAAAAAAAAAAAAAAAAAAAAA.eyJrIjoibGVhZGVyIn0"
	tests := []struct{ name, election string }{
		{"control characters", "job\x1b[2J\x07"},
		{"invalid UTF-8", "job\xff\xfe"},
		{"whitespace", "nightly report"},
		{"longer than names may be", strings.Repeat("n", 300)},
		{"empty", ""},
		{"a valid name", "job"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			for _, s := range c.Servers {
				require.NoError(t, s.Client().Set(ctx, "lock:"+tt.election+":leader", token, 10*time.Second).Err())
				require.NoError(t, s.Client().HSet(ctx, "lock:"+tt.election+":leader:term", "token", token, "term", "7",
					"since", "1764039600000", "value", "v").Err())
			}
			t.Cleanup(func() {
				for _, s := range c.Servers {
					s.Client().Del(ctx, "lock:"+tt.election+":leader", "lock:"+tt.election+":leader:term")
				}
			})
			lst, err := a.Inspect(ctx, "")
			require.NoError(t, err)
			prims, err := a.Primitives(ctx, lst)
			require.NoError(t, err)
			require.Len(t, prims, 1)
			p := prims[0]
			assert.Equal(t, admin.KindLeader, p.Kind)
			assert.Equal(t, tt.election, p.Name)
			require.NoError(t, p.LeaderErr)
			require.NotNil(t, p.Leader)
			assert.EqualValues(t, 7, p.Leader.Term)
			assert.Equal(t, "v", p.Leader.Value)
		})
	}
}
