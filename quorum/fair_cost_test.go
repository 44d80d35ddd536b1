package quorum

import (
	"context"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/redlock/redlock/internal/redistest"
	"github.com/redlock/redlock/quorum/observe"
)

// scriptCalls returns how many scripts (EVAL and EVALSHA) each master ran since its
// statistics were last reset (an EVALSHA refused with NOSCRIPT, then sent as EVAL,
// counts once).
func scriptCalls(t *testing.T, c *redistest.Cluster) []int {
	t.Helper()
	out := make([]int, len(c.Servers))
	for i, s := range c.Servers {
		info, err := s.Client().Info(context.Background(), "commandstats").Result()
		require.NoError(t, err)
		for _, line := range strings.Split(info, "\n") {
			if !strings.HasPrefix(line, "cmdstat_eval:") && !strings.HasPrefix(line, "cmdstat_evalsha:") {
				continue
			}
			for _, f := range strings.Split(strings.TrimSpace(line[strings.Index(line, ":")+1:]), ",") {
				k, v, _ := strings.Cut(f, "=")
				n, _ := strconv.Atoi(v)
				switch k {
				case "calls":
					out[i] += n
				case "failed_calls":
					out[i] -= n
				}
			}
		}
	}
	return out
}

func resetStats(t *testing.T, c *redistest.Cluster) {
	t.Helper()
	for _, s := range c.Servers {
		require.NoError(t, s.Client().ConfigResetStat(context.Background()).Err())
	}
}

// TestFairRoundRefusedEverywhereCostsNoCleanUp: a fair round that every master
// refused (the lock held, another waiter ahead) set nothing, so it is followed by
// no clean-up round and no marking round against shared holders: a waiter that is
// not the head costs the masters its round and, when it gives up, its leaving.
// Regression: every refused round was followed by fair_unwind.lua and
// xwait_mark.lua on every master, three scripts per master instead of one, all in
// the middle of the handoff the waiter was waiting for.
func TestFairRoundRefusedEverywhereCostsNoCleanUp(t *testing.T) {
	tests := []struct {
		name string
		try  bool
		want int // scripts per master: the round, and the leaving of a waiter that gives up
	}{
		{"TryAcquire", true, 1},
		{"Acquire that gives up", false, 2},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			ctx := context.Background()
			c, m := testCluster(t, 3, WithRetry(5, time.Minute, 0))
			holder, err := m.Acquire(ctx, "cost", 10*time.Second, WithFair())
			require.NoError(t, err)
			defer func() { _ = holder.Release(ctx) }()
			// The name's wake-up channel is subscribed already on every master (a
			// name waited for recently), so the waiter listens from before its first
			// round (a master's confirmation after it would cost another round).
			h := m.hub()
			_, unreg := h.register("lock:cost", "")
			require.Eventually(t, func() bool {
				h.mu.Lock()
				defer h.mu.Unlock()
				return len(h.confirmed["lock:cost:wake"]) == len(h.subs)
			}, 5*time.Second, time.Millisecond, "no subscription")
			unreg()
			resetStats(t, c)
			if tt.try {
				_, err = m.TryAcquire(ctx, "cost", time.Second, WithFair())
			} else {
				wctx, cancel := context.WithTimeout(ctx, 300*time.Millisecond)
				_, err = m.Acquire(wctx, "cost", time.Second, WithFair())
				cancel()
			}
			require.ErrorIs(t, err, ErrNotAcquired)
			assert.Equal(t, []int{tt.want, tt.want, tt.want}, scriptCalls(t, c))
		})
	}
}

// TestFairUnwindOnlyWhereTheRoundMaySetTheKey: the clean-up of a failed fair round
// runs where the round won, failed or was not counted (quarantined), never where
// the master answered that it set nothing; there it deletes our key and puts the
// waiter back at its place.
func TestFairUnwindOnlyWhereTheRoundMaySetTheKey(t *testing.T) {
	tests := []struct {
		name     string
		outcomes []Outcome
		want     []int // scripts per master
	}{
		{"refused everywhere", []Outcome{OutcomeForeign, OutcomeForeign, OutcomeForeign}, []int{0, 0, 0}},
		{"won one", []Outcome{OutcomeForeign, OutcomeForeign, OutcomeOK}, []int{0, 0, 1}},
		{"no reply from one", []Outcome{OutcomeError, OutcomeForeign, OutcomeOK}, []int{1, 0, 1}},
		{"quarantined", []Outcome{OutcomeQuarantined, OutcomeForeign, OutcomeForeign}, []int{1, 0, 0}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			ctx := context.Background()
			var seen releaseCounter
			c, m := testCluster(t, 3, WithObserver(&seen))
			fw, err := m.newFairWaiter(false)
			require.NoError(t, err)
			const key = "lock:unwind"
			rep := &Report{Nodes: make([]NodeResult, 3)}
			for i, o := range tt.outcomes {
				rep.Nodes[i].Outcome = o
				if o != OutcomeForeign {
					require.NoError(t, c.Servers[i].Client().Set(ctx, key, "ours", time.Minute).Err())
				}
			}
			resetStats(t, c)
			m.unwind(ctx, key, "ours", fw, rep)
			assert.Equal(t, tt.want, scriptCalls(t, c))
			cleaned := 0
			for _, n := range tt.want {
				cleaned += n
			}
			assert.EqualValues(t, cleaned, seen.n.Load(), "the Observer hears of each master's clean-up")
			for i, o := range tt.outcomes {
				if o == OutcomeForeign {
					continue
				}
				cl := c.Servers[i].Client()
				assert.Zero(t, cl.Exists(ctx, key).Val(), "master %d: our key deleted", i)
				assert.Equal(t, []string{"q:" + fw.id}, cl.ZRangeArgs(ctx, zrange0(key+queueSuffix)).Val(), "master %d: back in the queue", i)
			}
		})
	}
}

// releaseCounter counts the masters' answers to release-like commands.
type releaseCounter struct{ n atomic.Int64 }

func (r *releaseCounter) Observe(e observe.Event) {
	if e.Kind == observe.EventMasterRound && e.Op == opRelease {
		r.n.Add(1)
	}
}

// TestHubRegisterKicksOnlyForNewChannels: the reconcile loops are woken when a
// channel becomes wanted, not on every registration of a name already listened to
// (or lingering after its last waiter).
func TestHubRegisterKicksOnlyForNewChannels(t *testing.T) {
	m := &Manager{wakeTag: "TAGTAGTA"}
	s := &nodeSub{kick: make(chan struct{}, 1)}
	h := &wakeHub{m: m, subs: []*nodeSub{s}, waiters: map[string]map[*waiter]struct{}{}, idle: map[string]time.Time{},
		confirmed: map[string]map[*nodeSub]bool{}, wide: map[string]bool{}}
	kicked := func() bool {
		select {
		case <-s.kick:
			return true
		default:
			return false
		}
	}
	_, un1 := h.register("lock:k", "A.TAGTAGTA")
	assert.True(t, kicked(), "first waiter of the name")
	_, un2 := h.register("lock:k", "B.TAGTAGTA")
	assert.False(t, kicked(), "its channels are wanted already")
	_, un3 := h.register("lock:k", "")
	assert.True(t, kicked(), "a plain waiter adds the any channel")
	un1()
	un2()
	un3()
	assert.False(t, kicked(), "unregistering leaves the channels lingering")
	_, un4 := h.register("lock:k", "C.TAGTAGTA")
	assert.False(t, kicked(), "lingering channels are still subscribed")
	_, un5 := h.register("lock:other", "")
	assert.True(t, kicked(), "another name")
	un4()
	un5()
	// Past the linger, the loop drops the channels: they are wanted anew.
	for ch := range h.idle {
		h.idle[ch] = time.Now().Add(-2 * wakeLinger)
	}
	assert.Empty(t, h.wanted(time.Now(), s))
	_, un6 := h.register("lock:k", "D.TAGTAGTA")
	defer un6()
	assert.True(t, kicked(), "a channel dropped after its linger")
}
