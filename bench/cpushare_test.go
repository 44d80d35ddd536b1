package bench

import (
	"fmt"
	"os"
	"strconv"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
)

// cpuTimes is the machine's CPU time by state, in clock ticks, from the first
// line of /proc/stat: user, nice, system, idle, iowait, irq, softirq, steal (all
// zero when it cannot be read).
type cpuTimes [8]uint64

func readCPUTimes() cpuTimes {
	var t cpuTimes
	data, err := os.ReadFile("/proc/stat")
	if err != nil {
		return t
	}
	line, _, _ := strings.Cut(string(data), "\n")
	f := strings.Fields(line)
	if len(f) < 1+len(t) || f[0] != "cpu" {
		return t
	}
	for i := range t {
		t[i], _ = strconv.ParseUint(f[1+i], 10, 64)
	}
	return t
}

// cpuShare is how the machine's CPUs spent an interval: busy (neither idle nor
// waiting for I/O) and stolen by the hypervisor, as fractions of all CPU time;
// ok is false when /proc/stat could not be read.
type cpuShare struct {
	busy, steal float64
	ok          bool
}

// since is the share of the CPU time between t0 and t.
func (t cpuTimes) since(t0 cpuTimes) cpuShare {
	var d cpuTimes
	var total uint64
	for i := range t {
		d[i] = t[i] - t0[i]
		total += d[i]
	}
	if total == 0 || t0 == (cpuTimes{}) {
		return cpuShare{}
	}
	idle := d[3] + d[4]
	return cpuShare{busy: float64(total-idle) / float64(total), steal: float64(d[7]) / float64(total), ok: true}
}

// String is "busy 88 % (steal 0 %)", or "" when unknown.
func (s cpuShare) String() string {
	if !s.ok {
		return ""
	}
	return fmt.Sprintf("busy %.0f %% (stolen by the hypervisor %.1f %%)", 100*s.busy, 100*s.steal)
}

func TestCPUShare(t *testing.T) {
	t0 := cpuTimes{100, 0, 50, 800, 10, 0, 20, 5}
	tests := []struct {
		name string
		t0   cpuTimes
		t    cpuTimes
		want cpuShare
	}{
		{"busy, idle and iowait apart", t0, cpuTimes{160, 0, 80, 880, 20, 0, 30, 15}, cpuShare{busy: 0.55, steal: 0.05, ok: true}},
		{"all idle", t0, cpuTimes{100, 0, 50, 900, 10, 0, 20, 5}, cpuShare{busy: 0, steal: 0, ok: true}},
		{"no time passed", t0, t0, cpuShare{}},
		{"unreadable at the start", cpuTimes{}, t0, cpuShare{}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := tt.t.since(tt.t0)
			assert.Equal(t, tt.want.ok, got.ok)
			assert.InDelta(t, tt.want.busy, got.busy, 1e-9)
			assert.InDelta(t, tt.want.steal, got.steal, 1e-9)
		})
	}
	assert.Empty(t, cpuShare{}.String())
	assert.Equal(t, "busy 55 % (stolen by the hypervisor 5.0 %)", cpuShare{busy: 0.55, steal: 0.05, ok: true}.String())
	if _, err := os.Stat("/proc/stat"); err == nil {
		assert.NotEqual(t, cpuTimes{}, readCPUTimes(), "/proc/stat is there but was not read")
	}
}
