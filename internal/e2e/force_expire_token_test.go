package e2e

import (
	"context"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestBugForceExpireTokenMatchingNothing: force-expire -token with a token that
// no holder of NAME has touches nothing and says so: exit 1 when others hold the
// name (a plain lock, a shared hold), 0 only when the name is free. It exited 0,
// which says the name is free, with "changed since it was shown: kept" on every
// master of a plain lock, and "nothing of NAME holds that token" for shared
// holders, while both stayed held.
func TestBugForceExpireTokenMatchingNothing(t *testing.T) {
	e := newEnv(t)
	plain := e.acquireToken("ftplain")
	r := e.run("acquire", "ftshared", "-shared", "-ttl", "10s")
	require.Equal(t, 0, r.code, r.stderr)
	tests := []struct {
		name string
		args []string
		code int
		held string // a key that must still be held after it
	}{
		{"plain lock, revoke", []string{"force-expire", "ftplain"}, 1, "lock:ftplain"},
		{"plain lock, -now", []string{"force-expire", "ftplain", "-now"}, 1, "lock:ftplain"},
		{"shared hold, revoke", []string{"force-expire", "ftshared"}, 1, "lock:ftshared"},
		{"shared hold, -now", []string{"force-expire", "ftshared", "-now"}, 1, "lock:ftshared"},
		{"free name", []string{"force-expire", "ftfree"}, 0, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := e.run(append(tt.args, "-token", "rl1.nobody.x", "-yes", "-json")...)
			assert.Equal(t, tt.code, r.code, r.stderr)
			doc := checkDoc(t, "force-expire", r.stdout)
			assert.Equal(t, tt.code == 0, doc["ok"], r.stdout)
			assert.NotContains(t, r.stderr, "changed since it was shown", "nothing changed: the token is another's")
			if tt.held != "" {
				assert.NotEmpty(t, doc["error"], r.stdout)
				assert.Equal(t, 5, e.present(tt.held), "the holder was touched")
			}
		})
	}
	assert.Len(t, e.keys("lock:ftplain"), 5)
	assert.Equal(t, plain, e.keys("lock:ftplain")["a"])
}

// present counts the masters where key exists, whatever its type.
func (e *env) present(key string) int {
	e.t.Helper()
	n := 0
	for _, s := range e.c.Servers {
		if c, err := s.Client().Exists(context.Background(), key).Result(); err == nil && c == 1 {
			n++
		}
	}
	return n
}
