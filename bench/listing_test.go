package bench

import (
	"bytes"
	"context"
	"crypto/rand"
	"encoding/base64"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/redlock/redlock/internal/redistest"
	"github.com/redlock/redlock/quorum"
)

// TestListingLarge measures `redlock locks -json` and `redlock locks` (the built
// binary, as a user runs it) over REDLOCK_BENCH_LISTING live locks (default
// 100,000) on each of 5 masters, each lock with a value of its own in this
// project's format: wall time and peak resident memory from /usr/bin/time -v, and
// the bytes printed. REDLOCK_BENCH_BASELINE names another redlock binary (an older
// build) to run on the same masters, alternated with this one, three runs each.
// It takes a minute or two, so it runs only when REDLOCK_BENCH_LISTING is set:
//
//	REDLOCK_BENCH_LISTING=100000 go -C bench test . -run ListingLarge -v -timeout 30m
func TestListingLarge(t *testing.T) {
	locks, _ := strconv.Atoi(os.Getenv("REDLOCK_BENCH_LISTING"))
	if locks <= 0 {
		t.Skip("set REDLOCK_BENCH_LISTING=100000 to run")
	}
	if _, err := os.Stat("/usr/bin/time"); err != nil {
		t.Skip("needs /usr/bin/time (GNU time) for the peak memory")
	}
	ctx := context.Background()
	c := redistest.Start(t, 5, redistest.Options{})
	m := benchManager(t, c.Addrs())
	l, err := m.TryAcquire(ctx, "listing:0", 5*time.Minute, quorum.WithLockOwner("nightly-report"))
	require.NoError(t, err)
	// Every lock gets a token of its own beside the real lock's owner part.
	parts := strings.SplitN(l.Token(), ".", 3)
	require.Len(t, parts, 3)
	tok := make([]byte, 20)
	for _, s := range c.Servers {
		pipe := s.Client().Pipeline()
		for i := 1; i < locks; i++ {
			_, _ = rand.Read(tok)
			v := parts[0] + "." + base64.RawURLEncoding.EncodeToString(tok) + "." + parts[2]
			pipe.Set(ctx, m.Key(fmt.Sprintf("listing:%06d", i)), v, time.Hour)
			if i%10000 == 0 {
				_, err := pipe.Exec(ctx)
				require.NoError(t, err)
			}
		}
		_, err := pipe.Exec(ctx)
		require.NoError(t, err)
	}

	dir := t.TempDir()
	bin := filepath.Join(dir, "redlock")
	build := exec.Command("go", "build", "-o", bin, ".")
	build.Dir = ".." // the main module (its own go.sum)
	build.Stderr = os.Stderr
	require.NoError(t, build.Run())
	var cfg strings.Builder
	cfg.WriteString("cluster \"bench\" {\n  key_prefix = \"lock:\"\n  node_timeout = \"250ms\"\n  restart_quarantine = false\n")
	for _, s := range c.Servers {
		fmt.Fprintf(&cfg, "  master %q { address = %q }\n", s.Name, s.Addr())
	}
	cfg.WriteString("}\n")
	config := filepath.Join(dir, "redlock.hcl")
	require.NoError(t, os.WriteFile(config, []byte(cfg.String()), 0o600))

	bins := []struct{ name, path string }{{"this build", bin}}
	if b := os.Getenv("REDLOCK_BENCH_BASELINE"); b != "" {
		bins = append(bins, struct{ name, path string }{"baseline", b})
	}
	t.Logf("%d locks x 5 masters", locks)
	t.Logf("| binary | command | wall | peak RSS | output |")
	for run := range 3 {
		for _, b := range bins {
			for _, args := range [][]string{{"locks", "-json"}, {"locks"}} {
				wall, rss, out := timeRun(t, b.path, config, args)
				t.Logf("| %s (run %d) | %s | %.2f s | %d MB | %.1f MB |", b.name, run+1, strings.Join(args, " "), wall.Seconds(), rss>>10, float64(out)/1e6)
			}
		}
	}
}

var (
	wallRE = regexp.MustCompile(`Elapsed \(wall clock\) time \(h:mm:ss or m:ss\): (?:(\d+):)?(\d+):([\d.]+)`)
	rssRE  = regexp.MustCompile(`Maximum resident set size \(kbytes\): (\d+)`)
)

// timeRun runs bin with args under /usr/bin/time -v and returns the wall time,
// the peak RSS in KB and the bytes printed on stdout.
func timeRun(t *testing.T, bin, config string, args []string) (time.Duration, int64, int) {
	t.Helper()
	cmd := exec.Command("/usr/bin/time", append([]string{"-v", bin}, append(args, "-timeout", "5m")...)...)
	cmd.Env = append(os.Environ(), "REDLOCK_CONFIG="+config)
	var out, errb bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errb
	require.NoError(t, cmd.Run(), errb.String())
	w := wallRE.FindStringSubmatch(errb.String())
	r := rssRE.FindStringSubmatch(errb.String())
	require.NotNil(t, w, errb.String())
	require.NotNil(t, r, errb.String())
	h, _ := strconv.Atoi(w[1])
	mins, _ := strconv.Atoi(w[2])
	secs, _ := strconv.ParseFloat(w[3], 64)
	rss, _ := strconv.ParseInt(r[1], 10, 64)
	wall := time.Duration(h)*time.Hour + time.Duration(mins)*time.Minute + time.Duration(secs*float64(time.Second))
	return wall, rss, out.Len()
}
