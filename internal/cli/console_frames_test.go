package cli

import (
	"context"
	"fmt"
	"slices"
	"sync"
	"testing"
	"time"

	tea "github.com/charmbracelet/bubbletea"
	"github.com/charmbracelet/x/exp/teatest"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/redlock/redlock/tui"
)

// framedModel times what the UI goroutine does per message: Update, then the
// View that Bubble Tea draws after it.
type framedModel struct {
	inner tea.Model
	mu    sync.Mutex
	start time.Time
	msg   string
	took  []time.Duration
	slow  []string // the messages of frames over 16 ms
}

func (f *framedModel) Init() tea.Cmd { return f.inner.Init() }

func (f *framedModel) Update(msg tea.Msg) (tea.Model, tea.Cmd) {
	t0 := time.Now()
	m, cmd := f.inner.Update(msg)
	f.inner = m
	f.mu.Lock()
	f.start, f.msg = t0, fmt.Sprintf("%T", msg)
	f.mu.Unlock()
	return f, cmd
}

func (f *framedModel) View() string {
	v := f.inner.View()
	f.mu.Lock()
	if !f.start.IsZero() {
		d := time.Since(f.start)
		f.took = append(f.took, d)
		if d > 16*time.Millisecond {
			f.slow = append(f.slow, fmt.Sprintf("%s %v", f.msg, d.Round(time.Millisecond)))
		}
		f.start = time.Time{}
	}
	f.mu.Unlock()
	return v
}

// The console's frames stay under 16 ms while its background listing reads
// 100,000 locks on 3 masters: the listing and the polls run off the UI goroutine
// (console_listing.go, tui's poll command), which only applies prepared answers
// and draws. The real program runs (teatest); each message's Update and the View
// drawn after it are timed, and again with the listing stopped (what the
// machine alone costs). Generous bounds for a shared machine: the median under
// 16 ms, the 95th percentile under 100 ms, none over a second; the figures are
// logged.
func TestConsoleFramesWhileListing100k(t *testing.T) {
	if testing.Short() {
		t.Skip("fills 100,000 locks on 3 masters")
	}
	if raceDetector {
		t.Skip("frame times under the race detector are not the console's")
	}
	const locks = 100000
	rc, c := consoleCluster(t, 3)
	ctx := context.Background()
	for _, s := range rc.Servers {
		pipe := s.Client().Pipeline()
		for i := range locks {
			pipe.Set(ctx, fmt.Sprintf("lock:svc/%06d", i), fmt.Sprintf("rl1.%024x", i), time.Hour)
			if i%10000 == 9999 {
				_, err := pipe.Exec(ctx)
				require.NoError(t, err)
			}
		}
	}
	src, mgr, cleanup, err := newClusterSource(c, sourceSettings{redact: func(s string) string { return s }, interval: 500 * time.Millisecond})
	require.NoError(t, err)
	defer cleanup()
	fm := &framedModel{inner: tui.New(src, nil, tui.Options{Cluster: c.Name, Masters: []string{"a", "b", "c"}, Interval: 500 * time.Millisecond})}
	tm := teatest.NewTestModel(t, fm, teatest.WithInitialTermSize(160, 50))
	// The frames of the first pass (read at full speed) and of a few seconds of
	// paced passes after it.
	t0 := time.Now()
	teatest.WaitFor(t, tm.Output(), func([]byte) bool { return src.listing.take(ctx).progress.Complete },
		teatest.WithDuration(60*time.Second), teatest.WithCheckInterval(100*time.Millisecond))
	firstPass := time.Since(t0)
	time.Sleep(3 * time.Second)
	listing, slow := fm.phase()
	// The same console with its listing stopped: what the machine alone costs
	// the frames (a shared machine deschedules any goroutine now and then).
	src.listing.stop()
	time.Sleep(3 * time.Second)
	idle, idleSlow := fm.phase()
	require.NoError(t, tm.Quit())
	tm.WaitFinished(t, teatest.WithFinalTimeout(10*time.Second))
	_ = mgr

	require.NotEmpty(t, listing)
	require.NotEmpty(t, idle)
	p := func(d []time.Duration, q int) time.Duration { return d[len(d)*q/100] }
	t.Logf("listing (a first pass of %v, then paced passes): %d frames, p50 %v, p95 %v, max %v; over 16 ms: %v",
		firstPass.Round(time.Millisecond), len(listing), p(listing, 50), p(listing, 95), listing[len(listing)-1], slow)
	t.Logf("no listing: %d frames, p50 %v, p95 %v, max %v; over 16 ms: %v", len(idle), p(idle, 50), p(idle, 95), idle[len(idle)-1], idleSlow)
	assert.Less(t, p(listing, 50), 16*time.Millisecond)
	// A step of the listing (3,000 keys) or a merge of its 100,000 locks run in
	// a frame would take every frame past these.
	assert.Less(t, p(listing, 95), 100*time.Millisecond)
	assert.Less(t, listing[len(listing)-1], time.Second)
}

// phase returns the frame times since the last phase, sorted, and the slow ones.
func (f *framedModel) phase() ([]time.Duration, []string) {
	f.mu.Lock()
	defer f.mu.Unlock()
	took, slow := f.took, f.slow
	f.took, f.slow = nil, nil
	slices.Sort(took)
	return took, slow
}
