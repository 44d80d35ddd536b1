package e2e

import (
	"context"
	"encoding/json"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestIssue23ReleaseWithOneMasterDown: held on 5 masters, master 2 down. release
// and run delete the lock on every master that answered, say so, name master 2
// and when its copy expires, never claim a quorum failure, and exit 0 (run: with
// CMD's status).
func TestIssue23ReleaseWithOneMasterDown(t *testing.T) {
	e := newEnv(t)
	down := e.c.Servers[1]
	assertNote := func(t *testing.T, stderr string) {
		t.Helper()
		assert.Contains(t, stderr, "note:")
		assert.Contains(t, stderr, "master "+down.Name+" ")
		assert.Contains(t, stderr, "did not answer")
		assert.Contains(t, stderr, "copy expires")
		assert.NotContains(t, stderr, "unavailable")
		assert.NotContains(t, stderr, "votes")
	}

	t.Run("run", func(t *testing.T) {
		pid, err := down.Client().InfoMap(context.Background(), "server").Result()
		require.NoError(t, err)
		r := e.run("run", "job", "-ttl", "3s", "--", "sh", "-c", "kill -9 "+pid["Server"]["process_id"]+"; exit 7")
		assert.Equal(t, 7, r.code, r.stderr)
		assertNote(t, r.stderr)
		assert.Contains(t, r.stderr, "at the latest", "run knows the TTL it gave the lock")
		assert.Empty(t, e.keys("lock:job"), "deleted on every master that answered")
	})

	t.Run("release", func(t *testing.T) {
		down.Restart(false)
		token := e.acquireToken("job", "-ttl", "5s")
		down.Kill()
		r := e.run("release", "job", "-token", token)
		assert.Equal(t, 0, r.code, r.stderr)
		assert.Contains(t, r.stderr, "deleted on 4 of 5 masters")
		assertNote(t, r.stderr)
		assert.Empty(t, e.keys("lock:job"))
	})

	t.Run("release -json", func(t *testing.T) {
		down.Restart(false)
		token := e.acquireToken("job", "-ttl", "5s")
		down.Kill()
		r := e.run("release", "job", "-token", token, "-json")
		assert.Equal(t, 0, r.code, r.stderr)
		var doc map[string]any
		require.NoError(t, json.Unmarshal([]byte(r.stdout), &doc), r.stdout)
		assert.NotContains(t, doc, "error")
		note, _ := doc["note"].(string)
		assert.True(t, strings.Contains(note, down.Name), "the note names master %s: %q", down.Name, note)
		assert.EqualValues(t, 4, doc["deleted"])
	})

	t.Run("fewer than a quorum answered", func(t *testing.T) {
		down.Restart(false)
		token := e.acquireToken("job", "-ttl", "5s")
		for _, s := range e.c.Servers[:3] {
			s.Kill()
		}
		r := e.run("release", "job", "-token", token)
		assert.Equal(t, 1, r.code, r.stderr)
		assert.Contains(t, r.stderr, "unavailable")
		assert.NotContains(t, r.stderr, "note:")
	})
}
