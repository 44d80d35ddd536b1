package e2e

import (
	"context"
	"encoding/base64"
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// Regression: a lock value in this tool's format whose owner claims a time past
// the year 9999 (anyone who can write a key under the prefix can write one) made
// `locks -json` fail on it: encoding/json refuses such a time, and the document
// stopped there. The lock is now listed, its owner's time left out.
func TestLocksJSONListsAnOwnerTimeOutOfRange(t *testing.T) {
	e := newEnv(t)
	ctx := context.Background()
	owner := base64.RawURLEncoding.EncodeToString([]byte(`{"h":"far-host","o":"far","t":999999999999999999}`))
	value := "rl1." + base64.RawURLEncoding.EncodeToString([]byte(strings.Repeat("t", 20))) + "." + owner
	for _, s := range e.c.Servers[:3] {
		require.NoError(t, s.Client().Set(ctx, "lock:far-future", value, 9*time.Second).Err())
	}
	r := e.run("acquire", "ordinary", "-ttl", "9s")
	require.Equal(t, 0, r.code, r.stderr)

	r = e.run("locks", "-json")
	require.Equal(t, 0, r.code, r.stderr)
	require.True(t, json.Valid([]byte(r.stdout)), r.stdout)
	var doc struct {
		Locks []struct {
			Name  string         `json:"name"`
			State string         `json:"state"`
			Owner map[string]any `json:"owner"`
		} `json:"locks"`
	}
	require.NoError(t, json.Unmarshal([]byte(r.stdout), &doc))
	require.Len(t, doc.Locks, 2)
	assert.Equal(t, "far-future", doc.Locks[0].Name)
	assert.Equal(t, "held", doc.Locks[0].State)
	assert.Equal(t, map[string]any{"owner": "far", "host": "far-host"}, doc.Locks[0].Owner)
	assert.Equal(t, "ordinary", doc.Locks[1].Name)
}
