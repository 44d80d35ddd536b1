package bench

import (
	"bytes"
	"context"
	"crypto/sha1"
	"encoding/base64"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"runtime/debug"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"
	"github.com/stretchr/testify/require"

	"github.com/redlock/redlock/internal/redistest"
	"github.com/redlock/redlock/quorum"
)

// TestListingLarge measures `redlock locks -json` and `redlock locks` (the built
// binary, as a user runs it) over REDLOCK_BENCH_LISTING live locks on each of 5
// masters, each lock held with a value of its own in this project's format: wall
// time, CPU time and peak resident memory from /usr/bin/time -v, the five
// masters' CPU time (INFO cpu) and the bytes printed. REDLOCK_BENCH_BASELINE names
// another redlock binary (an older build) to run on the same masters, alternated
// with this one, three runs each. It takes a few minutes, so it runs only when
// REDLOCK_BENCH_LISTING is set:
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
	// Every lock gets a token of its own (20 bytes: the SHA-1 of its number) beside
	// the real lock's owner part, the same on every master: each lock is held.
	parts := strings.SplitN(l.Token(), ".", 3)
	require.Len(t, parts, 3)
	for _, s := range c.Servers {
		pipe := s.Client().Pipeline()
		for i := 1; i < locks; i++ {
			tok := sha1.Sum([]byte(strconv.Itoa(i)))
			v := parts[0] + "." + base64.RawURLEncoding.EncodeToString(tok[:]) + "." + parts[2]
			pipe.Set(ctx, m.Key(fmt.Sprintf("listing:%06d", i)), v, time.Hour)
			if i%10000 == 0 {
				_, err := pipe.Exec(ctx)
				require.NoError(t, err)
			}
		}
		_, err := pipe.Exec(ctx)
		require.NoError(t, err)
	}

	// A child's peak RSS, as wait4 reports it, starts from its parent's RSS at the
	// fork: give back what the fill above took before starting the measured runs.
	debug.FreeOSMemory()

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
	t.Logf("%d locks x 5 masters; this test's own RSS, a floor of every peak below: %s", locks, selfRSS())
	t.Logf("| binary | command | wall | CPU (user+sys) | masters' CPU | peak RSS | output |")
	infos := make([]*redis.Client, len(c.Servers))
	for i, s := range c.Servers {
		infos[i] = s.Client()
	}
	for run := range 3 {
		for _, b := range bins {
			for _, args := range [][]string{{"locks", "-json"}, {"locks"}} {
				srv0 := serversCPU(t, infos)
				wall, cpu, rss, out, err := timeRun(b.path, config, args)
				if err != nil { // a loaded machine can time out a master: say so, go on
					t.Logf("| %s (run %d) | %s | failed: %v |", b.name, run+1, strings.Join(args, " "), err)
					continue
				}
				srv := serversCPU(t, infos) - srv0
				t.Logf("| %s (run %d) | %s | %.2f s | %.2f s | %.2f s | %d MB | %.1f MB |", b.name, run+1, strings.Join(args, " "),
					wall.Seconds(), cpu.Seconds(), srv.Seconds(), rss>>10, float64(out)/1e6)
			}
		}
	}
}

var (
	wallRE = regexp.MustCompile(`Elapsed \(wall clock\) time \(h:mm:ss or m:ss\): (?:(\d+):)?(\d+):([\d.]+)`)
	rssRE  = regexp.MustCompile(`Maximum resident set size \(kbytes\): (\d+)`)
	userRE = regexp.MustCompile(`User time \(seconds\): ([\d.]+)`)
	sysRE  = regexp.MustCompile(`System time \(seconds\): ([\d.]+)`)
)

// timeRun runs bin with args under /usr/bin/time -v and returns the wall time,
// the CPU time (user and system), the peak RSS in KB and the bytes printed on
// stdout.
func timeRun(bin, config string, args []string) (wall, cpu time.Duration, rss int64, printed int, err error) {
	cmd := exec.Command("/usr/bin/time", append([]string{"-v", bin}, append(args, "-timeout", "5m")...)...)
	cmd.Env = append(os.Environ(), "REDLOCK_CONFIG="+config)
	var out, errb bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errb
	if err := cmd.Run(); err != nil {
		first, _, _ := strings.Cut(errb.String(), "\n")
		return 0, 0, 0, 0, fmt.Errorf("%w: %s", err, first)
	}
	w, r := wallRE.FindStringSubmatch(errb.String()), rssRE.FindStringSubmatch(errb.String())
	u, s := userRE.FindStringSubmatch(errb.String()), sysRE.FindStringSubmatch(errb.String())
	if w == nil || r == nil || u == nil || s == nil {
		return 0, 0, 0, 0, fmt.Errorf("no figures in /usr/bin/time's report: %s", errb.String())
	}
	h, _ := strconv.Atoi(w[1])
	mins, _ := strconv.Atoi(w[2])
	secs, _ := strconv.ParseFloat(w[3], 64)
	rss, _ = strconv.ParseInt(r[1], 10, 64)
	user, _ := strconv.ParseFloat(u[1], 64)
	sys, _ := strconv.ParseFloat(s[1], 64)
	wall = time.Duration(h)*time.Hour + time.Duration(mins)*time.Minute + time.Duration(secs*float64(time.Second))
	return wall, time.Duration((user + sys) * float64(time.Second)), rss, out.Len(), nil
}

// selfRSS returns this process's resident set (VmRSS), as /proc says it.
func selfRSS() string {
	b, err := os.ReadFile("/proc/self/status")
	if err != nil {
		return "unknown"
	}
	for _, l := range strings.Split(string(b), "\n") {
		if v, ok := strings.CutPrefix(l, "VmRSS:"); ok {
			return strings.TrimSpace(v)
		}
	}
	return "unknown"
}
