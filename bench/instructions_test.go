package bench

import (
	"bufio"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/redlock/redlock/internal/redistest"
)

// TestMasterInstructionsPerCycle counts what one cycle (SET NX PX, then the
// release script) costs a master in instructions, under valgrind's callgrind,
// for the prototypes' cycle and for quorum's commands as they are and as they
// were: a count of the server's own work that does not depend on what else the
// machine is doing, which its CPU time under load does. Each variant runs on a
// fresh redis-server under callgrind, 1,280 cycles to warm up, then 12,800 in
// batches of 64 pipelined SETs and 64 pipelined releases on one connection, the
// counters zeroed before and dumped after (callgrind_control). It needs valgrind;
// run it with:
//
//	REDLOCK_BENCH_CALLGRIND=1 go -C bench test . -run TestMasterInstructionsPerCycle -v
func TestMasterInstructionsPerCycle(t *testing.T) {
	if os.Getenv("REDLOCK_BENCH_CALLGRIND") == "" {
		t.Skip("a measurement: REDLOCK_BENCH_CALLGRIND=1 runs it (needs valgrind)")
	}
	for _, tool := range []string{"valgrind", "callgrind_control"} {
		if _, err := exec.LookPath(tool); err != nil {
			t.Fatalf("%s not found: install valgrind", tool)
		}
	}
	server, err := exec.LookPath("redis-server")
	require.NoError(t, err)
	const (
		protoKey   = "bench:distinct:goredis-autopipeline:"
		protoValue = "0123456789abcdef-12345678"
		lockKey    = "lock:bench:distinct:quorum:"
		// A value of quorum's shape and size (the owner of a host named "vm").
		lockValue = "rl1.AAAAAAAAAAAAAAAAAAAAAAAAAAA.eyJoIjoidm0iLCJwIjoxMjM0NTYsInQiOjE3NjQxNTgwMDAwMDAsImwiOjMwMDAwfQ"
	)
	release := releaseSource(t)
	variants := []struct {
		name   string
		script string
		set    func(key, value string) []string
		rel    func(sha, key, value string) []string
		key    string
		value  string
	}{
		{"prototype: SET NX PX, GET+DEL script", floorRelease, setNX, func(sha, k, v string) []string { return []string{"EVALSHA", sha, "1", k, v} }, protoKey, protoValue},
		{"quorum before: SET NX GET, release.lua long form", release, setNXGet, func(sha, k, v string) []string {
			return []string{"EVALSHA", sha, "2", k, k + ":queue", v, k + ":wake"}
		}, lockKey, lockValue},
		{"quorum, Acquire: SET NX GET, short form", release, setNXGet, func(sha, k, v string) []string { return []string{"EVALSHA", sha, "1", k, v} }, lockKey, lockValue},
		{"quorum, TryAcquire: SET NX PX, short form", release, setNX, func(sha, k, v string) []string { return []string{"EVALSHA", sha, "1", k, v} }, lockKey, lockValue},
		{"the short form's no-waiter path before the flag: GET, DEL, EXISTS", existsRelease, setNX, func(sha, k, v string) []string { return []string{"EVALSHA", sha, "1", k, v} }, lockKey, lockValue},
		{"GET+DEL script on quorum's key and value", floorRelease, setNX, func(sha, k, v string) []string { return []string{"EVALSHA", sha, "1", k, v} }, lockKey, lockValue},
	}
	const warm, cycles, batch = 1280, 12800, 64
	for _, v := range variants {
		dir := t.TempDir()
		port := redistest.FreePort(t)
		cmd := exec.Command("valgrind", "--tool=callgrind", "--callgrind-out-file="+filepath.Join(dir, "out"),
			server, "--port", strconv.Itoa(port), "--bind", "127.0.0.1", "--save", "", "--appendonly", "no")
		require.NoError(t, cmd.Start())
		conn := dialRetry(t, fmt.Sprintf("127.0.0.1:%d", port), 30*time.Second)
		rd := bufio.NewReader(conn)
		do := func(args ...string) string {
			_, err := conn.Write(appendCommand(nil, args...))
			require.NoError(t, err)
			r, err := readReply(rd)
			require.NoError(t, err)
			return r
		}
		sha := do("SCRIPT", "LOAD", v.script)
		run := func(n int) {
			var buf []byte
			for done := 0; done < n; done += batch {
				for _, phase := range []func(i int) []string{
					func(i int) []string { return v.set(v.key+strconv.Itoa(i), v.value) },
					func(i int) []string { return v.rel(sha, v.key+strconv.Itoa(i), v.value) },
				} {
					buf = buf[:0]
					for i := range batch {
						buf = appendCommand(buf, phase(i)...)
					}
					_, err := conn.Write(buf)
					require.NoError(t, err)
					for range batch {
						_, err := readReply(rd)
						require.NoError(t, err)
					}
				}
			}
		}
		run(warm)
		control(t, cmd.Process.Pid, "-z")
		run(cycles)
		control(t, cmd.Process.Pid, "-d")
		_ = conn.Close()
		_ = cmd.Process.Kill()
		_ = cmd.Wait()
		t.Logf("%-50s %7.0f instructions per cycle", v.name, float64(dumpedInstructions(t, dir))/cycles)
	}
}

// existsRelease is what release.lua's short form did where nobody waited before
// the waiting flag: GET, DEL, and EXISTS on the queue key, which it named.
const existsRelease = `local v = redis.call('GET', KEYS[1])
if v ~= ARGV[1] then
  if v == false then
    return 0
  end
  return -1
end
redis.call('DEL', KEYS[1])
local q, ch = KEYS[2], ARGV[2]
if #ARGV == 1 then
  q = KEYS[1] .. ':queue'
end
if redis.call('EXISTS', q) == 0 then
  return 1
end
return redis.call('PUBLISH', KEYS[1] .. ':wake', KEYS[1])`

func setNX(key, value string) []string {
	return []string{"SET", key, value, "NX", "PX", "30000"}
}

func setNXGet(key, value string) []string {
	return []string{"SET", key, value, "NX", "GET", "PX", "30000"}
}

// dialRetry dials addr until it answers (a server under valgrind starts slowly).
func dialRetry(t *testing.T, addr string, within time.Duration) net.Conn {
	deadline := time.Now().Add(within)
	for {
		c, err := net.Dial("tcp", addr)
		if err == nil {
			t.Cleanup(func() { _ = c.Close() })
			return c
		}
		if time.Now().After(deadline) {
			t.Fatalf("%s: %v", addr, err)
		}
		time.Sleep(100 * time.Millisecond)
	}
}

// control runs callgrind_control with flag (-z zero, -d dump) on pid.
func control(t *testing.T, pid int, flag string) {
	out, err := exec.Command("callgrind_control", flag, strconv.Itoa(pid)).CombinedOutput()
	require.NoError(t, err, "%s", out)
}

// dumpedInstructions reads the instruction total of the dump callgrind_control -d
// wrote (out.1: the counts since the last zeroing).
func dumpedInstructions(t *testing.T, dir string) int64 {
	var data []byte
	for range 50 {
		var err error
		if data, err = os.ReadFile(filepath.Join(dir, "out.1")); err == nil && regexp.MustCompile(`(?m)^summary: `).Match(data) {
			break
		}
		time.Sleep(100 * time.Millisecond)
	}
	m := regexp.MustCompile(`(?m)^summary: (\d+)`).FindSubmatch(data)
	require.NotNil(t, m, "no summary in the dump")
	n, err := strconv.ParseInt(string(m[1]), 10, 64)
	require.NoError(t, err)
	return n
}
