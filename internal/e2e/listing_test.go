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

// A hostile value of megabytes is listed by its first bytes and its length, in
// the table and in -json (which keeps to its schema), and never printed whole.
func TestLocksShowsLongValuesTruncated(t *testing.T) {
	e := newEnv(t)
	const size = 4 << 20
	huge := "hostile-" + strings.Repeat("x", size-8)
	for _, s := range e.c.Servers {
		require.NoError(t, s.Client().Set(context.Background(), "lock:huge", huge, time.Minute).Err())
	}
	r := e.run("locks")
	require.Equal(t, 0, r.code, r.stderr)
	assert.Contains(t, r.stdout, fmt.Sprintf("hostil… (%d bytes, read 512)", size))
	assert.Less(t, len(r.stdout), 4096, "the value is not printed")

	r = e.run("locks", "-json")
	require.Equal(t, 0, r.code, r.stderr)
	doc := checkDoc(t, "locks", r.stdout)
	assert.Less(t, len(r.stdout), 8192, "the value is not printed")
	locks, _ := doc["locks"].([]any)
	require.Len(t, locks, 1)
	lock, _ := locks[0].(map[string]any)
	assert.Equal(t, "held", lock["state"], "the same long value on every master")
	masters, _ := lock["masters"].([]any)
	require.Len(t, masters, 5)
	for _, m := range masters {
		mv, _ := m.(map[string]any)
		assert.Equal(t, fmt.Sprint(size), fmt.Sprint(mv["value_bytes"]))
		assert.Equal(t, "hostil…", mv["value"])
	}
}
