package e2e

import (
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/redlock/redlock/admin"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestBugAcquiredAtIsWhenTheLockWasTaken: a lock taken after a wait said it was
// acquired when the wait began ("since" in locks, acquired_at in JSON), hours
// off under a long -wait. For every kind of hold, what locks shows and what the
// masters hold is no earlier than the moment the blocker let go.
func TestBugAcquiredAtIsWhenTheLockWasTaken(t *testing.T) {
	e := newEnv(t)
	fair := e.variant("fair.hcl", `  lock "pool/*" {`, `  lock "fair/*" {
    fair = true
  }
  lock "pool/*" {`)
	tests := []struct {
		kind   string
		block  [][]string // blockers' acquire arguments (each released later)
		wait   []string   // the waiter's acquire arguments
		key    string     // a key the waiter holds
		config string
	}{
		{"plain", [][]string{{"w-plain"}}, []string{"w-plain"}, "lock:w-plain", ""},
		{"fair", [][]string{{"fair/w"}}, []string{"fair/w"}, "lock:fair/w", fair},
		{"permits", [][]string{{"w-sem", "-permits", "2"}, {"w-sem", "-permits", "2"}}, []string{"w-sem", "-permits", "2"}, "", ""},
		{"shared", [][]string{{"w-shared"}}, []string{"w-shared", "-shared"}, "", ""},
		{"multi", [][]string{{"w-m1"}}, []string{"w-m1", "w-m2"}, "lock:w-m2", ""},
	}
	for _, tt := range tests {
		t.Run(tt.kind, func(t *testing.T) {
			cfg := []string{}
			if tt.config != "" {
				cfg = []string{"-config", tt.config}
			}
			var tokens []string
			for _, b := range tt.block {
				tokens = append(tokens, e.acquireToken(b[0], append(append(b[1:], "-ttl", "9s"), cfg...)...))
			}
			waiter := e.command("", append(append([]string{"acquire"}, tt.wait...), append([]string{"-ttl", "9s", "-wait", "20s", "-json"}, cfg...)...)...)
			var out, errb syncBuffer
			waiter.Stdout, waiter.Stderr = &out, &errb
			require.NoError(t, waiter.Start())
			time.Sleep(time.Second) // the waiter is well into its wait
			released := time.Now().Truncate(time.Millisecond)
			r := e.run(append([]string{"release", tt.block[0][0], "-token", tokens[0]}, cfg...)...)
			require.Equal(t, 0, r.code, r.stderr)
			require.NoError(t, waiter.Wait(), errb.String())

			// What acquire printed.
			doc := checkDoc(t, "acquire", out.String())
			tok := doc["token"].(string)

			for i, b := range tt.block[1:] {
				r := e.run(append([]string{"release", b[0], "-token", tokens[i+1]}, cfg...)...)
				require.Equal(t, 0, r.code, r.stderr)
			}
			// Only the waiter's hold is left. What the masters hold:
			key := tt.key
			if key == "" {
				key = findKeyOf(t, e, tok)
			}
			for master, v := range e.keys(key) {
				pv, err := admin.ParseValue(v)
				require.NoError(t, err)
				assert.False(t, pv.Owner.At.Before(released), "%s on %s: acquired at %v, before the blocker let go at %v", key, master, pv.Owner.At, released)
			}
			// What locks -json shows.
			r = e.run(append([]string{"locks", "-json"}, cfg...)...)
			require.Equal(t, 0, r.code, r.stderr)
			ats := acquiredAtOf(t, r.stdout)
			assert.NotEmpty(t, ats, "locks -json shows the waiter's hold: %s", r.stdout)
			for _, at := range ats {
				assert.False(t, at.Before(released), "locks -json: acquired_at %v, before the blocker let go at %v", at, released)
			}
			// And "since" in the human listing (RFC 3339, whole seconds).
			r = e.run(append([]string{"locks"}, cfg...)...)
			require.Equal(t, 0, r.code, r.stderr)
			require.Contains(t, r.stdout, "since ")
			for _, line := range strings.Split(r.stdout, "\n") {
				if _, since, ok := strings.Cut(line, "since "); ok {
					at, err := time.Parse(time.RFC3339, strings.Trim(strings.Fields(since)[0], ",)"))
					require.NoError(t, err, line)
					assert.False(t, at.Before(released.Truncate(time.Second)), "locks: %q, the blocker let go at %v", line, released)
				}
			}
			r = e.run(append(append([]string{"release"}, namesOf(tt.wait)...), append([]string{"-token", tok}, cfg...)...)...)
			require.Equal(t, 0, r.code, r.stderr)
		})
	}
}

// namesOf returns the NAMEs among acquire arguments (the words before the first flag).
func namesOf(args []string) []string {
	for i, a := range args {
		if strings.HasPrefix(a, "-") {
			return args[:i]
		}
	}
	return args
}

// findKeyOf returns the key whose value on some master carries tok.
func findKeyOf(t *testing.T, e *env, tok string) string {
	t.Helper()
	for _, s := range e.c.Servers {
		for _, k := range s.Keys(t.Context()) {
			if v, err := s.Client().Get(t.Context(), k).Result(); err == nil && v == tok {
				return k
			}
			if members, err := s.Client().ZRange(t.Context(), k, 0, -1).Result(); err == nil {
				for _, m := range members {
					if m == tok {
						return k
					}
				}
			}
		}
	}
	t.Fatalf("no key holds the token")
	return ""
}

// acquiredAtOf returns every acquired_at in a locks -json document.
func acquiredAtOf(t *testing.T, doc string) []time.Time {
	t.Helper()
	var v any
	require.NoError(t, json.Unmarshal([]byte(doc), &v))
	var out []time.Time
	var walk func(x any)
	walk = func(x any) {
		switch x := x.(type) {
		case map[string]any:
			if s, ok := x["acquired_at"].(string); ok {
				at, err := time.Parse(time.RFC3339Nano, s)
				require.NoError(t, err)
				out = append(out, at)
			}
			for _, y := range x {
				walk(y)
			}
		case []any:
			for _, y := range x {
				walk(y)
			}
		}
	}
	walk(v)
	return out
}
