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

	"github.com/redlock/redlock/admin"
	"github.com/redlock/redlock/internal/redistest"
	"github.com/redlock/redlock/quorum"
)

// TestListingLarge measures `redlock locks -json` and `redlock locks` (the built
// binary, as a user runs it) over REDLOCK_BENCH_LISTING live locks on each of 5
// masters, each lock held with a value of its own in this project's format: wall
// time, CPU time and peak resident memory from /usr/bin/time -v, the five
// masters' CPU time (INFO cpu) and the bytes printed. The output goes to a file,
// as with `redlock locks -json > listing.json`: this test once kept it in a
// buffer of its own, whose growth to 134 MB (fresh pages: 131,000 page faults
// and 3 s of this process's CPU in the first listing, 0.1 s once its heap had
// grown) competed with the listing for the cores and made the first listing
// after the fill look a second slower than the later ones; the harness's own
// CPU is logged with each run to show it stays out of the way. Whether a
// master's keyspace is still being rehashed is logged before the first run.
// REDLOCK_BENCH_BASELINE names
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
	fillListing(t, ctx, c, m, locks)

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
	infos := make([]*redis.Client, len(c.Servers))
	for i, s := range c.Servers {
		infos[i] = s.Client()
	}
	t.Logf("%d locks x 5 masters; this test's own RSS, a floor of every peak below: %s; masters rehashing their keyspace: %d",
		locks, selfRSS(), rehashing(t, infos))
	t.Logf("| binary | command | wall | CPU (user+sys) | masters' CPU | peak RSS | output | harness CPU |")
	out := filepath.Join(dir, "listing.out")
	for run := range 3 {
		for _, b := range bins {
			for _, args := range [][]string{{"locks", "-json"}, {"locks"}} {
				srv0, self0 := serversCPU(t, infos), processCPU()
				wall, cpu, rss, printed, err := timeRun(b.path, config, args, out)
				if err != nil { // a loaded machine can time out a master: say so, go on
					t.Logf("| %s (run %d) | %s | failed: %v |", b.name, run+1, strings.Join(args, " "), err)
					continue
				}
				srv, self := serversCPU(t, infos)-srv0, processCPU()-self0
				t.Logf("| %s (run %d) | %s | %.2f s | %.2f s | %.2f s | %d MB | %.1f MB | %.2f s |", b.name, run+1, strings.Join(args, " "),
					wall.Seconds(), cpu.Seconds(), srv.Seconds(), rss>>10, float64(printed)/1e6, self.Seconds())
			}
		}
	}
}

// rehashing returns how many of the masters are rehashing their keyspace (DEBUG
// HTSTATS shows a second table while a dict is rehashed).
func rehashing(t *testing.T, infos []*redis.Client) int {
	n := 0
	for _, c := range infos {
		s, err := c.Do(context.Background(), "DEBUG", "HTSTATS", "0").Text()
		require.NoError(t, err)
		if strings.Contains(s, "Hash table 1") {
			n++
		}
	}
	return n
}

var (
	wallRE = regexp.MustCompile(`Elapsed \(wall clock\) time \(h:mm:ss or m:ss\): (?:(\d+):)?(\d+):([\d.]+)`)
	rssRE  = regexp.MustCompile(`Maximum resident set size \(kbytes\): (\d+)`)
	userRE = regexp.MustCompile(`User time \(seconds\): ([\d.]+)`)
	sysRE  = regexp.MustCompile(`System time \(seconds\): ([\d.]+)`)
)

// fillListing writes locks live locks on every master of c: one taken by m
// (owner "nightly-report"), the others with tokens of their own (20 bytes: the
// SHA-1 of its number) beside the real lock's owner part, the same on every
// master: each lock is held, for an hour.
func fillListing(t *testing.T, ctx context.Context, c *redistest.Cluster, m *quorum.Manager, locks int) {
	l, err := m.TryAcquire(ctx, "listing:0", 5*time.Minute, quorum.WithLockOwner("nightly-report"))
	require.NoError(t, err)
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

}

// timeRun runs bin with args under /usr/bin/time -v, its stdout written to the
// file out (created anew), and returns the wall time, the CPU time (user and
// system), the peak RSS in KB and the bytes printed on stdout.
func timeRun(bin, config string, args []string, out string) (wall, cpu time.Duration, rss int64, printed int64, err error) {
	cmd := exec.Command("/usr/bin/time", append([]string{"-v", bin}, append(args, "-timeout", "5m")...)...)
	cmd.Env = append(os.Environ(), "REDLOCK_CONFIG="+config)
	f, err := os.Create(out)
	if err != nil {
		return 0, 0, 0, 0, err
	}
	defer f.Close()
	var errb bytes.Buffer
	cmd.Stdout, cmd.Stderr = f, &errb
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
	st, err := f.Stat()
	if err != nil {
		return 0, 0, 0, 0, err
	}
	return wall, time.Duration((user + sys) * float64(time.Second)), rss, st.Size(), nil
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

// TestListingMastersCPU measures what reading a listing costs a master, per key,
// for three ways of reading it over the same REDLOCK_BENCH_LISTING keys on one
// master (INFO cpu before and after, three rounds alternated): Inspect (a SCAN,
// then one MULTI/EXEC of GETRANGE and PTTL per batch), the listing script
// (quorum/scripts/list_read.lua, one call per SCAN batch, as listings read
// before), and the plain pipelines read before it (SCAN, then PTTL and GET per
// key, values read whole).
//
//	REDLOCK_BENCH_LISTING=100000 go -C bench test . -run ListingMastersCPU -v
func TestListingMastersCPU(t *testing.T) {
	keys, _ := strconv.Atoi(os.Getenv("REDLOCK_BENCH_LISTING"))
	if keys <= 0 {
		t.Skip("set REDLOCK_BENCH_LISTING=100000 to run")
	}
	ctx := context.Background()
	c := redistest.Start(t, 1, redistest.Options{})
	m := benchManager(t, c.Addrs())
	l, err := m.TryAcquire(ctx, "cpu:0", 5*time.Minute, quorum.WithLockOwner("nightly-report"))
	require.NoError(t, err)
	cl := c.Servers[0].Client()
	pipe := cl.Pipeline()
	for i := 1; i < keys; i++ {
		pipe.Set(ctx, m.Key(fmt.Sprintf("cpu:%06d", i)), l.Token(), time.Hour)
		if i%10000 == 0 {
			_, err := pipe.Exec(ctx)
			require.NoError(t, err)
		}
	}
	_, err = pipe.Exec(ctx)
	require.NoError(t, err)
	src, err := os.ReadFile("../quorum/scripts/list_read.lua")
	require.NoError(t, err)
	script := redis.NewScript(string(src))
	ways := []struct {
		name string
		read func() int
	}{
		{"Inspect: MULTI/EXEC of GETRANGE+PTTL", func() int {
			lst, err := admin.New(m).Inspect(ctx, "")
			require.NoError(t, err)
			return len(lst.Locks)
		}},
		{"list_read.lua per SCAN batch", func() int {
			n := 0
			cursor := "0"
			for {
				r, err := script.Run(ctx, cl, nil, admin.ValueReadCap, cursor, "lock:*", 1000).Slice()
				require.NoError(t, err)
				n += strings.Count(r[1].(string), ":lock:")
				if cursor = r[0].(string); cursor == "0" {
					return n
				}
			}
		}},
		{"SCAN, then PTTL+GET pipelines", func() int {
			n := 0
			var cursor uint64
			for {
				ks, next, err := cl.Scan(ctx, cursor, "lock:*", 1000).Result()
				require.NoError(t, err)
				p := cl.Pipeline()
				for _, k := range ks {
					p.PTTL(ctx, k)
					p.Get(ctx, k)
				}
				_, err = p.Exec(ctx)
				require.NoError(t, err)
				n += len(ks)
				if cursor = next; cursor == 0 {
					return n
				}
			}
		}},
	}
	infos := []*redis.Client{cl}
	for round := range 3 {
		for _, w := range ways {
			cpu0, t0 := serversCPU(t, infos), time.Now()
			n := w.read()
			cpu, wall := serversCPU(t, infos)-cpu0, time.Since(t0)
			require.Equal(t, keys, n, w.name)
			t.Logf("round %d: %-40s master CPU %6.3f s = %.2f µs per key; wall %v", round+1, w.name, cpu.Seconds(), float64(cpu.Microseconds())/float64(n), wall.Round(time.Millisecond))
		}
	}
}
