package bench

import (
	"bufio"
	"context"
	"net"
	"os"
	"slices"
	"strings"
	"testing"
	"time"

	experiment "github.com/redlock/redlock/internal/bench"
	"github.com/redlock/redlock/internal/redistest"
)

// TestSoloInterleaved splits the gap between quorum's p50 at one goroutine and
// the floor's into the commands' share and the client's: it runs, 50 cycles at a
// time in turn in one process (so that a shared machine's load falls on all
// alike), the floor, the floor sending quorum's commands (SET NX PX with a value
// of quorum's size, release.lua's short form, a plain lock's), and quorum. Run it
// with:
//
//	REDLOCK_BENCH_SOLO=1 go -C bench test . -run TestSoloInterleaved -v
func TestSoloInterleaved(t *testing.T) {
	if os.Getenv("REDLOCK_BENCH_SOLO") == "" {
		t.Skip("a measurement: REDLOCK_BENCH_SOLO=1 runs it")
	}
	c := redistest.Start(t, 5, redistest.Options{})
	addrs := c.Addrs()
	plain := dialRaw(t, addrs, floorRelease)
	full := dialRaw(t, addrs, releaseSource(t))
	qcyc := quorumCycler(t, addrs)
	const key = "lock:bench:solo"
	const value = "rl1.AAAAAAAAAAAAAAAAAAAAAAAAAAA.eyJoIjoiaG9zdG5hbWUtb2YtdGhlLW1hY2hpbmUiLCJwIjoxMjM0NSwidCI6MTcwMDAwMDAwMDAwMCwibCI6MTAwMDB9"
	variants := []struct {
		name string
		cyc  func() error
	}{
		{"floor", func() error {
			return plain.cycle(
				[]string{"SET", key, "floor-value-0123456789abcdef", "NX", "PX", "10000"},
				[]string{"EVALSHA", plain.sha, "1", key, "floor-value-0123456789abcdef"})
		}},
		{"floor, quorum's commands", func() error {
			return full.cycle(
				[]string{"SET", key, value, "NX", "PX", "10000"},
				[]string{"EVALSHA", full.sha, "1", key, value})
		}},
		{"quorum", func() error { return qcyc(context.Background(), key) }},
	}
	lats := make([][]int64, len(variants))
	cpus := make([]time.Duration, len(variants))
	for block := range 151 {
		for k, v := range variants {
			cpu0 := processCPU()
			for range 50 {
				s := time.Now()
				if err := v.cyc(); err != nil {
					t.Log(v.name, err)
					continue
				}
				if block > 0 { // the first block warms up
					lats[k] = append(lats[k], int64(time.Since(s)))
				}
			}
			if block > 0 {
				cpus[k] += processCPU() - cpu0
			}
		}
	}
	for k, v := range variants {
		slices.Sort(lats[k])
		t.Logf("%-26s p50 %6.1fµs  p90 %6.1fµs  cpu %6.1fµs per cycle", v.name,
			float64(experiment.Percentile(lats[k], 0.5))/1e3, float64(experiment.Percentile(lats[k], 0.9))/1e3,
			float64(cpus[k].Microseconds())/float64(max(1, len(lats[k]))))
	}
}

// releaseSource is quorum's release.lua with its include, as quorum loads it.
func releaseSource(t *testing.T) string {
	src, err := os.ReadFile("../quorum/scripts/release.lua")
	if err != nil {
		t.Fatal(err)
	}
	inc, err := os.ReadFile("../quorum/scripts/wake_head.lua")
	if err != nil {
		t.Fatal(err)
	}
	const line = "-- include: wake_head.lua (prune and wakeHead, shared with the other scripts that wake the head)\n"
	if !strings.Contains(string(src), line) {
		t.Fatal("release.lua without its include line")
	}
	return strings.Replace(string(src), line, string(inc), 1)
}

// rawSet is the floor's structure (one write per master, then the reads) for any
// two commands.
type rawSet struct {
	conns []net.Conn
	rds   []*bufio.Reader
	sha   string
	buf   []byte
}

func dialRaw(t *testing.T, addrs []string, script string) *rawSet {
	r := &rawSet{}
	for _, a := range addrs {
		c, err := net.Dial("tcp", a)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { _ = c.Close() })
		r.conns = append(r.conns, c)
		r.rds = append(r.rds, bufio.NewReader(c))
	}
	for i := range r.conns {
		r.buf = appendCommand(r.buf[:0], "SCRIPT", "LOAD", script)
		if _, err := r.conns[i].Write(r.buf); err != nil {
			t.Fatal(err)
		}
		sha, err := readReply(r.rds[i])
		if err != nil {
			t.Fatal(err)
		}
		r.sha = sha
	}
	return r
}

func (r *rawSet) cycle(cmds ...[]string) error {
	for _, cmd := range cmds {
		r.buf = appendCommand(r.buf[:0], cmd...)
		for _, c := range r.conns {
			if _, err := c.Write(r.buf); err != nil {
				return err
			}
		}
		for _, rd := range r.rds {
			if _, err := readReply(rd); err != nil {
				return err
			}
		}
	}
	return nil
}
