package e2e

import (
	"context"
	"encoding/base64"
	"fmt"
	"regexp"
	"strings"
	"testing"
	"time"

	dto "github.com/prometheus/client_model/go"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/redlock/redlock/internal/redistest"
)

// forgeSlots writes, on every master, permit keys of semaphore name that its
// acquirers never write: a slot beyond its limit holding a copy of a real
// permit's value, a slot number spelled with a leading zero, negative,
// non-numeric and huge slot suffixes, and a value declaring another limit.
func forgeSlots(t *testing.T, e *env, name, real string) {
	t.Helper()
	ctx := context.Background()
	owner := base64.RawURLEncoding.EncodeToString([]byte(`{"o":"forger\u001b[2J","k":"sem","n":5}`))
	forged := map[string]string{
		":permit:7":         real,
		":permit:01":        real,
		":permit:-1":        real,
		":permit:x\x1b[2J":  real,
		":permit:999999999": real,
		":permit:3":         "rl1.AAAAAAAAAAAAAAAAAAAAAAAAAAA." + owner,
	}
	for _, s := range e.c.Servers {
		for suffix, v := range forged {
			require.NoError(t, s.Client().Set(ctx, "lock:"+name+suffix, v, time.Minute).Err())
		}
	}
}

// TestBugSemaphoreForgedSlotsNeverInflateHeld: permit keys of slots a semaphore
// never uses (NAME:permit:7 on a semaphore of 2, a copy of a real permit's value
// in it; "01"; a value declaring a limit of 5 in slot 3) made locks, locks -json
// and the exporter count "5/2" and more held permits than the limit. The
// semaphore counts its own slots only (2/2), and the forged keys are listed as
// keys of their own, their names escaped.
func TestBugSemaphoreForgedSlotsNeverInflateHeld(t *testing.T) {
	e := newEnv(t)
	addr := fmt.Sprintf("127.0.0.1:%d", redistest.FreePort(t))
	startScraped(t, e, addr, "exporter", "-listen", addr, "-interval", "200ms")
	e.acquireToken("pool/s", "-ttl", "9s")
	e.acquireToken("pool/s", "-ttl", "9s")
	real := e.keys("lock:pool/s:permit:0")["a"]
	require.NotEmpty(t, real)
	forgeSlots(t, e, "pool/s", real)

	r := e.run("locks", "-json")
	require.Equal(t, 0, r.code, r.stderr)
	doc := checkDoc(t, "locks", r.stdout)
	var sem map[string]any
	for _, p := range doc["primitives"].([]any) {
		if pm := p.(map[string]any); pm["kind"] == "semaphore" {
			require.Nil(t, sem, "one semaphore: %s", r.stdout)
			sem = pm
		}
	}
	require.NotNil(t, sem, r.stdout)
	assert.Equal(t, "2", fmt.Sprint(sem["permits"]), "the limit its permits declare")
	assert.Equal(t, "2", fmt.Sprint(sem["held"]), "its own two slots")
	assert.ElementsMatch(t, []any{"pool/s:permit:0", "pool/s:permit:1"}, sem["keys"])

	txt := e.run("locks")
	require.Equal(t, 0, txt.code, txt.stderr)
	assert.Contains(t, txt.stdout, "semaphore 2/2")
	assert.Equal(t, 1, strings.Count(txt.stdout, "semaphore "), "one semaphore, 2/2: %s", txt.stdout)
	assert.NotContains(t, txt.stdout, "\x1b", "escaped")
	for _, key := range []string{"pool/s:permit:7", "pool/s:permit:01", "pool/s:permit:3", `pool/s:permit:x\x1b[2J`} {
		assert.Contains(t, txt.stdout, "\n"+key+" ", "listed as a key of its own")
	}
	for _, key := range []string{"pool/s:permit:7", "pool/s:permit:3", "pool/s:permit:999999999"} {
		assert.Regexp(t, `\n`+regexp.QuoteMeta(key)+` +stray permit `, txt.stdout, "said to be no slot of the semaphore")
	}

	var mfs map[string]*dto.MetricFamily
	require.Eventually(t, func() bool {
		mfs = scrape(t, addr)
		v, _ := value(mfs, "redlock_primitives", map[string]string{"kind": "semaphore"})
		return v == 1
	}, 10*time.Second, 50*time.Millisecond)
	v, ok := value(mfs, "redlock_policy_permits_held", map[string]string{"policy": "pool/*"})
	assert.True(t, ok)
	assert.Equal(t, 2.0, v, "the permits held, never more than the limit")
	assert.False(t, strings.Contains(fmt.Sprint(mfs), "forger"), "no owner label from Redis in the metrics")
}

// TestBugSemaphoreForgedLimitIsNotTaken: a value declaring another limit in a
// slot of a semaphore (slot 2 of a semaphore of 2, declaring 5) made acquire
// -permits 5 believe the semaphore was one of 5 (the largest count seen) and
// take a permit of it: four holders of a semaphore of 2. The count most of
// its values declare is its limit: -permits 5 is refused, naming 2 permits and
// never more held than that.
func TestBugSemaphoreForgedLimitIsNotTaken(t *testing.T) {
	e := newEnv(t)
	ctx := context.Background()
	e.acquireToken("hs", "-permits", "2", "-ttl", "9s")
	e.acquireToken("hs", "-permits", "2", "-ttl", "9s")
	owner := base64.RawURLEncoding.EncodeToString([]byte(`{"o":"forger","k":"sem","n":5}`))
	for _, s := range e.c.Servers {
		require.NoError(t, s.Client().Set(ctx, "lock:hs:permit:2", "rl1.AAAAAAAAAAAAAAAAAAAAAAAAAAA."+owner, time.Minute).Err())
	}
	r := e.run("acquire", "hs", "-permits", "5", "-ttl", "9s", "-wait", "0")
	assert.Equal(t, 2, r.code, "refused as a usage error: %s", r.stderr)
	assert.Contains(t, r.stderr, "held with 2 permits (2 held)")
	for _, slot := range []string{"3", "4"} {
		assert.Empty(t, e.keys("lock:hs:permit:"+slot), "no permit beyond the semaphore's limit was taken")
	}
}
