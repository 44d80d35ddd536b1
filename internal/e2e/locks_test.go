package e2e

import (
	"context"
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// locksDoc is the part of `locks -json` the tests read.
type locksDoc struct {
	Quorum   int `json:"quorum"`
	Answered int `json:"answered"`
	Masters  []struct {
		Master   string `json:"master"`
		Answered bool   `json:"answered"`
	} `json:"masters"`
	Locks []struct {
		Name       string  `json:"name"`
		State      string  `json:"state"`
		Votes      int     `json:"votes"`
		Library    string  `json:"library"`
		ValidityMS float64 `json:"validity_ms"`
		Value      string  `json:"value"`
		Owner      *struct {
			Label string `json:"owner"`
			PID   int    `json:"pid"`
		} `json:"owner"`
		Masters []struct {
			Master  string  `json:"master"`
			Present bool    `json:"present"`
			Value   string  `json:"value"`
			PTTLMS  float64 `json:"pttl_ms"`
		} `json:"masters"`
	} `json:"locks"`
}

func TestLocksJSON(t *testing.T) {
	e := newEnv(t)
	ctx := context.Background()
	mu := e.foreignLock("lock:by-redsync", 8*time.Second)
	require.NoError(t, mu.Lock())
	r := e.run("acquire", "by-redlock", "-ttl", "8s", "-owner", "nightly-report")
	require.Equal(t, 0, r.code, r.stderr)
	token := strings.TrimSpace(r.stdout)
	for i, s := range e.c.Servers {
		cl := s.Client()
		if i < 2 {
			require.NoError(t, cl.Set(ctx, "lock:partial", "0123456789abcdef0123456789abcdef", 8*time.Second).Err())
		}
		switch i {
		case 0, 1:
			require.NoError(t, cl.Set(ctx, "lock:contested", "11111111-2222-3333-4444-555555555555", 8*time.Second).Err())
		case 2, 3:
			require.NoError(t, cl.Set(ctx, "lock:contested", "99999999-2222-3333-4444-555555555555", 8*time.Second).Err())
		}
	}

	r = e.run("locks", "-json")
	require.Equal(t, 0, r.code, r.stderr)
	assert.NotContains(t, r.stdout, token, "full values never appear")
	assert.NotContains(t, r.stdout, e.keys("lock:by-redsync")["a"], "full foreign values never appear")
	var doc locksDoc
	require.NoError(t, json.Unmarshal([]byte(r.stdout), &doc), r.stdout)
	assert.Equal(t, 5, doc.Answered)
	byName := map[string]int{}
	for i, l := range doc.Locks {
		byName[l.Name] = i
	}
	want := []struct {
		name, state, library string
		votes                int
	}{
		{"by-redsync", "held", "redsync", 5},
		{"by-redlock", "held", "redlock", 5},
		{"partial", "partial", "node-redlock", 2},
		{"contested", "contested", "redlock.net/pottery", 2},
	}
	for _, w := range want {
		i, ok := byName[w.name]
		require.True(t, ok, "lock %s listed", w.name)
		l := doc.Locks[i]
		assert.Equal(t, w.state, l.State, w.name)
		assert.Equal(t, w.library, l.Library, w.name)
		assert.Equal(t, w.votes, l.Votes, w.name)
		assert.Len(t, l.Masters, 5, w.name)
	}
	ours := doc.Locks[byName["by-redlock"]]
	require.NotNil(t, ours.Owner, "owner decoded")
	assert.Equal(t, "nightly-report", ours.Owner.Label)
	assert.Greater(t, ours.ValidityMS, 5000.0)
	assert.Greater(t, ours.Masters[0].PTTLMS, 5000.0)
	assert.True(t, strings.HasPrefix(ours.Value, "rl1."))

	// Text output: one row per lock plus one per master; -match filters.
	r = e.run("locks", "-match", "by-*")
	require.Equal(t, 0, r.code, r.stderr)
	assert.Contains(t, r.stdout, "by-redlock")
	assert.Contains(t, r.stdout, "nightly-report")
	assert.NotContains(t, r.stdout, "contested")
	assert.NotContains(t, r.stdout, token)

	// Two masters down: still listed, the missing ones named.
	e.c.Servers[3].Kill()
	e.c.Servers[4].Kill()
	r = e.run("locks", "-json")
	require.Equal(t, 0, r.code, r.stderr)
	doc = locksDoc{}
	require.NoError(t, json.Unmarshal([]byte(r.stdout), &doc))
	assert.Equal(t, 3, doc.Answered)
	assert.False(t, doc.Masters[3].Answered)
	assert.Contains(t, r.stderr, "master d")
	// Three down: exit 1 naming them.
	e.c.Servers[2].Kill()
	r = e.run("locks")
	assert.Equal(t, 1, r.code)
	for _, n := range []string{"master c", "master d", "master e"} {
		assert.Contains(t, r.stderr, n)
	}
}

// Issue 23 item 8: with 3 of 5 masters killed, `locks` printed its multi-line
// error with literal \n between the lines, and `nodes` said "unreachable:
// unreachable:". Each line of the error is its own line; each finding says its
// code once.
func TestQuorumLostMessagesAreReadable(t *testing.T) {
	e := newEnv(t)
	e.acquireToken("held", "-ttl", "9s")
	for _, s := range e.c.Servers[2:] {
		s.Kill()
	}
	r := e.run("locks")
	assert.Equal(t, 1, r.code, r.stderr)
	assert.NotContains(t, r.stderr, `\n`, "no literal \\n")
	assert.Contains(t, r.stderr, "2 of 5 masters answered (quorum 3)\n")
	assert.GreaterOrEqual(t, strings.Count(r.stderr, "\n"), 4, "one line per master that did not answer: %s", r.stderr)

	r = e.run("nodes")
	assert.Equal(t, 1, r.code, r.stderr)
	assert.NotContains(t, r.stdout, "unreachable: unreachable:")
	assert.Contains(t, r.stdout, "error   unreachable: dial tcp")
	assert.Contains(t, r.stdout, "BELOW QUORUM")

	// Under -json: one document each, the partial listing and the health.
	r = e.run("locks", "-json")
	assert.Equal(t, 1, r.code, r.stderr)
	doc := checkDoc(t, "locks", r.stdout)
	assert.Contains(t, doc["error"], "2 of 5 masters answered")
	r = e.run("nodes", "-json")
	assert.Equal(t, 1, r.code, r.stderr)
	doc = checkDoc(t, "nodes", r.stdout)
	assert.Equal(t, false, doc["ok"])
}
