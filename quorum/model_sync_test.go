package quorum

import (
	"math"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/redlock/redlock/internal/defaults"
	"github.com/stretchr/testify/require"
)

// The Promela models in spec/ mirror constants and scripts of this package; these
// tests fail when the code changes without the models (or the models without the
// code). scripts/model-check.sh checks the models themselves.

// specDefines returns the "#define NAME VALUE" lines of a model file.
func specDefines(t *testing.T, file string) map[string]string {
	t.Helper()
	b, err := os.ReadFile(filepath.Join("..", "spec", file))
	require.NoError(t, err)
	out := map[string]string{}
	for _, m := range regexp.MustCompile(`(?m)^#define (\w+) (.+?)\s*(?:/\*.*)?$`).FindAllStringSubmatch(string(b), -1) {
		out[m[1]] = strings.TrimSpace(m[2])
	}
	return out
}

func specInt(t *testing.T, defs map[string]string, name string) int {
	t.Helper()
	v, err := strconv.Atoi(defs[name])
	require.NoError(t, err, "spec/params.pml: #define %s", name)
	return v
}

// ticks is d in ticks of tick, rounded up (the models round every budget up).
func ticks(d, tick time.Duration) int { return int(math.Ceil(float64(d) / float64(tick))) }

func TestModelParamsFollowTheCode(t *testing.T) {
	defs := specDefines(t, "params.pml")
	nm, quorum, ttl, drift := specInt(t, defs, "NM"), specInt(t, defs, "QUORUM"), specInt(t, defs, "TTL"), specInt(t, defs, "DRIFT")

	nodes := make([]Node, nm)
	for i := range nodes {
		nodes[i] = Node{Name: strconv.Itoa(i), Addr: "127.0.0.1:" + strconv.Itoa(1+i)}
	}
	m, err := New(nodes) // connects lazily: no master is needed
	require.NoError(t, err)
	defer m.Close()
	require.Equal(t, m.Quorum(), quorum, "QUORUM mirrors New's quorum for NM masters")

	require.Equal(t, int(math.Round(defaults.DriftFactor*1000)), specInt(t, defs, "DRIFT_FACTOR_PERMILLE"), "DRIFT_FACTOR_PERMILLE mirrors defaults.DriftFactor")
	require.Equal(t, int(defaults.DriftExtra/time.Millisecond), specInt(t, defs, "DRIFT_EXTRA_MS"), "DRIFT_EXTRA_MS mirrors defaults.DriftExtra")
	cfg := defaultConfig()
	require.NoError(t, cfg.validate())
	// A tick is TTL/TTL ticks of the lock modelled: defaults.TTL for the drift budget.
	require.Equal(t, ticks(cfg.drift(defaults.TTL), defaults.TTL/time.Duration(ttl)), drift,
		"DRIFT mirrors config.drift(defaults.TTL) (defaults.DriftFactor, defaults.DriftExtra) in ticks")
	// The quarantine derived from maxTTL is maxTTL + drift(maxTTL), plus the second
	// observe adds for uptime's truncation: TTL + DRIFT ticks at defaults.MaxTTL.
	require.Equal(t, cfg.maxTTL+cfg.drift(cfg.maxTTL), cfg.quarantine, "the derived quarantine the model's QUAR mirrors")
	require.Equal(t, "(TTL + DRIFT)", defs["QUAR"])
	require.Equal(t, ttl+drift, ticks(cfg.quarantine+time.Second, defaults.MaxTTL/time.Duration(ttl)),
		"QUAR mirrors the derived quarantine window in ticks")
}

// TestModelScriptsFollowTheCode pins the lines of the scripts whose rule a model
// states, next to the model line that states it.
func TestModelScriptsFollowTheCode(t *testing.T) {
	for _, tc := range []struct{ script, code, model, rule string }{
		{"extend.lua", "if left < 0 or left < tonumber(ARGV[2]) then", "if :: kttl[m] < TTL -> kttl[m] = TTL :: else fi", "an extension never shortens a key"},
		{"extend.lua", "elseif v == false then\n  return 0", ":: val[m] != me -> miss++", "a missing key is never recreated"},
		{"release.lua", "if v ~= ARGV[1] then", "if :: val[m] == me -> val[m] = 0; kttl[m] = 0 :: true fi", "release by value"},
		{"fence.lua", "if redis.call('GET', KEYS[1]) ~= ARGV[1] then return -1 end", ":: val[m] == me && fence[m] < hi -> fence[m] = hi", "a fence is raised only where the lock is ours"},
		{"fence.lua", "if c >= n then return -2 end", ":: val[m] == me && fence[m] >= hi -> stale = 1", "a raise at or below the counter is stale"},
		{"fence_read.lua", "if ours then return n end\nreturn -1 - n", "if :: fence[m] > hi -> hi = fence[m] :: else fi", "the counter is read from every master that answers"},
		{"elect_term.lua", "if c >= n then return -2 end", "assert((terms & (1 << hi)) == 0)", "a term is handed out once"},
		{"sem_acquire.lua", "for i = 1, n do\n  if redis.call('SET', KEYS[i], ARGV[1], 'NX', 'PX', ARGV[2]) then", ":: slotv[SLOT(m, 0)] != 0 && slotv[SLOT(m, 1)] == 0 ->", "the first free slot in slot order"},
		{"shared_acquire.lua", "if t ~= 'none' and t ~= 'zset' then return 0 end", ":: me > 1 && xv[m] == 0 ->", "a shared grant is refused where an exclusive holder is"},
		{"shared_acquire.lua", "if left < ttl then\n  redis.call('PEXPIRE', KEYS[1], ttl)", "#define ZSET(m)", "the sorted set lives as long as its latest member"},
	} {
		t.Run(tc.script+": "+tc.rule, func(t *testing.T) {
			b, err := os.ReadFile(filepath.Join("scripts", tc.script))
			require.NoError(t, err)
			require.Contains(t, string(b), tc.code, "the script changed: update the model's rule (%s) and this test", tc.rule)
			var model string
			for _, f := range []string{"mutex.pml", "semaphore.pml", "shared.pml"} {
				b, err := os.ReadFile(filepath.Join("..", "spec", f))
				require.NoError(t, err)
				model += string(b)
			}
			require.Contains(t, model, tc.model, "the model's rule changed: check it against %s", tc.script)
		})
	}
}
