package e2e

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// A leader's record is written by whoever can write to the masters: its
// "since" is hostile input. A record whose since is beyond the years a JSON
// time can hold (or does not parse: ParseInt then gives the largest int64)
// made `locks -json` and `leader -json` fail half-way: exit 1, and stdout a
// document cut short followed by another one, which no JSON reader takes. The
// documents must stay valid and describe the leader, without the time.
func TestBugLeaderRecordSinceBeyondJSON(t *testing.T) {
	e := newEnv(t)
	ctx := context.Background()
	const token = "rl1.AAAAAAAAAAAAAAAAAAAAAAAAAAA.eyJrIjoibGVhZGVyIn0"
	for _, since := range []string{"99999999999999999999", "253402300800000", "-62167219200001"} {
		name := "rec" + since[:3]
		for _, s := range e.c.Servers {
			require.NoError(t, s.Client().Set(ctx, "lock:"+name+":leader", token, 10*time.Second).Err())
			require.NoError(t, s.Client().HSet(ctx, "lock:"+name+":leader:term", "token", token, "term", "7", "since", since, "value", "v").Err())
		}
		tests := []struct {
			command string
			args    []string
		}{
			{"locks", []string{"locks", "-json"}},
			{"leader", []string{"leader", name, "-json"}},
		}
		for _, tt := range tests {
			t.Run(since+"/"+tt.command, func(t *testing.T) {
				r := e.run(tt.args...)
				require.Equal(t, 0, r.code, r.stderr)
				doc := checkDoc(t, tt.command, r.stdout)
				assert.Contains(t, r.stdout, `"term": 7`, "the leader is described")
				assert.NotContains(t, r.stdout, `"since"`, "a time JSON cannot hold is left out")
				assert.NotNil(t, doc)
			})
		}
		for _, s := range e.c.Servers {
			require.NoError(t, s.Client().Del(ctx, "lock:"+name+":leader", "lock:"+name+":leader:term").Err())
		}
	}
}

// A term below 1 is none the election hands out (the counter starts at 1), but
// a hostile record can hold one: `locks -json` and `leader -json` reported a
// leader of term -5, which their schemas refuse (a term is at least 1). Such a
// record names no leader.
func TestBugLeaderRecordTermBelowOne(t *testing.T) {
	e := newEnv(t)
	ctx := context.Background()
	const token = "rl1.AAAAAAAAAAAAAAAAAAAAAAAAAAA.eyJrIjoibGVhZGVyIn0"
	for _, term := range []string{"-5", "-9223372036854775808"} {
		name := "term" + term[1:2]
		for _, s := range e.c.Servers {
			require.NoError(t, s.Client().Set(ctx, "lock:"+name+":leader", token, 10*time.Second).Err())
			require.NoError(t, s.Client().HSet(ctx, "lock:"+name+":leader:term", "token", token, "term", term, "since", "1764039600000", "value", "v").Err())
		}
		tests := []struct {
			command string
			args    []string
			code    int
		}{
			{"locks", []string{"locks", "-json"}, 0},
			{"leader", []string{"leader", name, "-json"}, 3},
		}
		for _, tt := range tests {
			t.Run(term+"/"+tt.command, func(t *testing.T) {
				r := e.run(tt.args...)
				assert.Equal(t, tt.code, r.code, r.stderr)
				checkDoc(t, tt.command, r.stdout)
				assert.NotContains(t, r.stdout, `"term": `+term)
			})
		}
		for _, s := range e.c.Servers {
			require.NoError(t, s.Client().Del(ctx, "lock:"+name+":leader", "lock:"+name+":leader:term").Err())
		}
	}
}

// A leadership key without a TTL (written by another tool, or PERSISTed) has a
// validity without end (admin.NoExpiry). The primitives' table of `locks`
// showed it as "--9223372036854ms" (its milliseconds overflowed a duration) and
// `locks -json` as 9223372036854.775 ms, where every other row of either says
// "no ttl" and -1.
func TestBugLeadershipWithoutTTLInTheListing(t *testing.T) {
	e := newEnv(t)
	ctx := context.Background()
	const token = "rl1.AAAAAAAAAAAAAAAAAAAAAAAAAAA.eyJrIjoibGVhZGVyIn0"
	for _, s := range e.c.Servers {
		require.NoError(t, s.Client().Set(ctx, "lock:nottl:leader", token, 0).Err())
		require.NoError(t, s.Client().HSet(ctx, "lock:nottl:leader:term", "token", token, "term", "3", "since", "1764039600000", "value", "v").Err())
	}
	txt := e.run("locks")
	require.Equal(t, 0, txt.code, txt.stderr)
	row := ""
	for _, line := range strings.Split(txt.stdout, "\n") {
		if strings.HasPrefix(line, "nottl ") {
			row = line
		}
	}
	require.NotEmpty(t, row, txt.stdout)
	assert.Contains(t, row, "no ttl")
	assert.NotContains(t, row, "--")

	r := e.run("locks", "-json")
	require.Equal(t, 0, r.code, r.stderr)
	doc := checkDoc(t, "locks", r.stdout)
	prims := doc["primitives"].([]any)
	require.Len(t, prims, 1)
	p := prims[0].(map[string]any)
	assert.Equal(t, "-1", fmt.Sprint(p["validity_ms"]), "a primitive without a TTL")
	assert.Equal(t, "-1", fmt.Sprint(p["leader"].(map[string]any)["validity_ms"]), "its leader")
}

// A leadership whose keys have no TTL (set by hand, or PERSISTed) never ends by
// itself. `leader -json` showed its validity as 9223372036854.775 ms with a
// valid_until centuries away, and `leader` as "--9223372036854ms", where locks
// says "no ttl" (no_expiry in -json). Both say there is no expiry now, and the
// document matches its schema.
func TestBugLeaderWithoutTTLSaysNoExpiry(t *testing.T) {
	e := newEnv(t)
	ctx := context.Background()
	const token = "rl1.AAAAAAAAAAAAAAAAAAAAAAAAAAA.eyJrIjoibGVhZGVyIn0"
	for _, s := range e.c.Servers {
		require.NoError(t, s.Client().Set(ctx, "lock:forever:leader", token, 0).Err())
		require.NoError(t, s.Client().HSet(ctx, "lock:forever:leader:term", "token", token, "term", "4", "since", "1764039600000", "value", "v").Err())
	}
	r := e.run("leader", "forever", "-json")
	require.Equal(t, 0, r.code, r.stderr)
	doc := checkDoc(t, "leader", r.stdout)
	assert.Equal(t, true, doc["leading"])
	assert.Equal(t, true, doc["no_expiry"], r.stdout)
	assert.Equal(t, "0", fmt.Sprint(doc["validity_ms"]), r.stdout)
	assert.NotContains(t, doc, "valid_until", "no end to show")

	txt := e.run("leader", "forever")
	require.Equal(t, 0, txt.code, txt.stderr)
	assert.Contains(t, txt.stdout, "validity no ttl")
	assert.NotContains(t, txt.stdout, "--")
	assert.NotContains(t, txt.stdout, "9223372036854")

	// A leadership with a TTL still shows its validity and its end.
	for _, s := range e.c.Servers {
		require.NoError(t, s.Client().PExpire(ctx, "lock:forever:leader", time.Minute).Err())
	}
	r = e.run("leader", "forever", "-json")
	require.Equal(t, 0, r.code, r.stderr)
	doc = checkDoc(t, "leader", r.stdout)
	assert.NotContains(t, doc, "no_expiry")
	assert.NotEmpty(t, doc["valid_until"])
	assert.NotEqual(t, "0", fmt.Sprint(doc["validity_ms"]))
}
