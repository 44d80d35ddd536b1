package tui

import (
	"bytes"
	"context"
	"encoding/base64"
	"errors"
	"sync"
	"testing"
	"time"

	tea "github.com/charmbracelet/bubbletea"
	"github.com/stretchr/testify/require"

	"github.com/redlock/redlock/admin"
	"github.com/redlock/redlock/quorum"
	"github.com/redlock/redlock/topology"
)

var t0 = time.Date(2025, 3, 14, 9, 26, 53, 0, time.UTC)

// fakeClock is the console's clock in tests.
type fakeClock struct {
	mu sync.Mutex
	t  time.Time
}

func (c *fakeClock) Now() time.Time { c.mu.Lock(); defer c.mu.Unlock(); return c.t }
func (c *fakeClock) Add(d time.Duration) {
	c.mu.Lock()
	c.t = c.t.Add(d)
	c.mu.Unlock()
}

// fakeSource answers polls with a snapshot the test edits.
type fakeSource struct {
	mu      sync.Mutex
	clock   *fakeClock
	snap    Snapshot
	polls   int
	visible []string // the names on screen at the last poll
}

func (s *fakeSource) Poll(_ context.Context, visible []string) Snapshot {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.polls++
	s.visible = visible
	out := s.snap
	out.At = s.clock.Now()
	out.Nodes = append([]topology.NodeHealth(nil), s.snap.Nodes...)
	out.Locks = append([]admin.LockInfo(nil), s.snap.Locks...)
	return out
}

func (s *fakeSource) edit(f func(*Snapshot)) { s.mu.Lock(); f(&s.snap); s.mu.Unlock() }

// fakeLocker records what the console asked for.
type fakeLocker struct {
	mu         sync.Mutex
	clock      *fakeClock
	src        *fakeSource // what Lookup reads
	acquireErr error
	acquires   []string
	ttls       []time.Duration
	expires    [][2]string // name, token
	revokes    int         // how many of expires revoked (x) rather than deleted (D)
	expireDown string      // a master that fails force-expire
	changed    bool        // force-expire finds every value changed
	expireErr  error       // force-expire fails before any master answers
	seens      []map[string]admin.Seen
	held       []*fakeHeld
}

func (l *fakeLocker) TryAcquire(_ context.Context, name string, ttl time.Duration) (Held, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.acquires = append(l.acquires, name)
	l.ttls = append(l.ttls, ttl)
	if l.acquireErr != nil {
		return nil, l.acquireErr
	}
	h := &fakeHeld{name: name, token: "rl1.mine", until: l.clock.Now().Add(ttl - time.Millisecond), votes: report(5, 3)}
	l.held = append(l.held, h)
	return h, nil
}

func (l *fakeLocker) ForceExpire(_ context.Context, name string, seen map[string]admin.Seen) (*quorum.Report, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	first := ""
	for _, m := range masters {
		if sn, ok := seen[m]; ok {
			first = sn.Value
			break
		}
	}
	l.expires = append(l.expires, [2]string{name, first})
	l.seens = append(l.seens, seen)
	if l.expireErr != nil {
		return nil, l.expireErr
	}
	r := report(5, 3)
	if l.changed {
		// The lock changed hands since it was shown: nothing matches.
		for i := range r.Nodes {
			r.Nodes[i].Outcome = quorum.OutcomeForeign
		}
		r.Votes = 0
		return &r, nil
	}
	for i := range r.Nodes { // nothing seen there: nothing to delete
		if _, ok := seen[r.Nodes[i].Node]; !ok {
			r.Nodes[i].Outcome = quorum.OutcomeMissing
		}
	}
	if l.expireDown != "" {
		for i := range r.Nodes {
			if r.Nodes[i].Node == l.expireDown {
				r.Nodes[i].Outcome, r.Nodes[i].Err = quorum.OutcomeError, errBoom
			}
		}
		return &r, &quorum.RoundError{Report: r, Kind: quorum.ErrUnavailable}
	}
	return &r, nil
}

// Revoke is ForceExpire that reports a tombstone until the fake clock's now
// plus a minute where it succeeded; revokes counts the calls.
func (l *fakeLocker) Revoke(ctx context.Context, name string, seen map[string]admin.Seen) (time.Time, *quorum.Report, error) {
	rep, err := l.ForceExpire(ctx, name, seen)
	l.mu.Lock()
	defer l.mu.Unlock()
	l.revokes++
	if rep == nil || rep.Votes == 0 {
		return time.Time{}, rep, err
	}
	return l.clock.Now().Add(time.Minute), rep, err
}

func (l *fakeLocker) Lookup(_ context.Context, name string) (*admin.LockInfo, error) {
	l.src.mu.Lock()
	defer l.src.mu.Unlock()
	for _, li := range l.src.snap.Locks {
		if li.Name == name {
			return &li, nil
		}
	}
	return nil, nil
}

func (l *fakeLocker) calls() (acq []string, exp [][2]string) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return append([]string(nil), l.acquires...), append([][2]string(nil), l.expires...)
}

type fakeHeld struct {
	mu       sync.Mutex
	name     string
	token    string
	until    time.Time
	votes    quorum.Report
	extends  int
	released int
}

func (h *fakeHeld) Name() string         { return h.name }
func (h *fakeHeld) Token() string        { return h.token }
func (h *fakeHeld) Until() time.Time     { h.mu.Lock(); defer h.mu.Unlock(); return h.until }
func (h *fakeHeld) Votes() quorum.Report { return h.votes }
func (h *fakeHeld) Released() int        { h.mu.Lock(); defer h.mu.Unlock(); return h.released }
func (h *fakeHeld) Release(context.Context) error {
	h.mu.Lock()
	defer h.mu.Unlock()
	h.released++
	return nil
}
func (h *fakeHeld) Extend(_ context.Context, ttl time.Duration) error {
	h.mu.Lock()
	defer h.mu.Unlock()
	h.extends++
	h.until = h.until.Add(ttl)
	return nil
}

func report(n, q int) quorum.Report {
	r := quorum.Report{Op: "acquire", Quorum: q, Votes: n}
	for _, name := range []string{"a", "b", "c", "d", "e"} {
		r.Nodes = append(r.Nodes, quorum.NodeResult{Node: name, Outcome: quorum.OutcomeOK})
	}
	return r
}

var masters = []string{"a", "b", "c", "d", "e"}

// opsValue is a value of this package held by ops on web-1.
var opsValue = admin.Value{
	Token: base64.RawURLEncoding.EncodeToString(bytes.Repeat([]byte{7}, 20)),
	Owner: quorum.Owner{Host: "web-1", PID: 4242, Label: "ops", At: t0.Add(-20 * time.Second)},
}.String()

func healthyNodes() []topology.NodeHealth {
	var out []topology.NodeHealth
	for i, n := range masters {
		out = append(out, topology.NodeHealth{
			Master: n, Address: "127.0.0.1:700" + string(rune('1'+i)), Reachable: true,
			Latency: 300 * time.Microsecond, Role: "master", Version: "7.0.15", RunID: "run" + n,
			Uptime: 2*time.Hour + 3*time.Minute, ClockOffset: 200 * time.Microsecond, ClockUncertainty: 100 * time.Microsecond,
			Config:    map[string]string{"appendonly": "yes", "appendfsync": "always", "maxmemory-policy": "noeviction"},
			CheckedAt: t0,
		})
	}
	return out
}

func mastersWith(value string, pttl time.Duration, on int) []admin.MasterView {
	var out []admin.MasterView
	for i, n := range masters {
		if i < on {
			out = append(out, admin.MasterView{Master: n, Present: true, Type: "string", Value: value, PTTL: pttl})
		} else {
			out = append(out, admin.MasterView{Master: n})
		}
	}
	return out
}

func sampleLocks() []admin.LockInfo {
	return []admin.LockInfo{
		{
			Name: "billing/42", Key: "lock:billing/42", State: admin.StateHeld, Votes: 5, Quorum: 3, Total: 5,
			Value: opsValue, Owner: &quorum.Owner{Host: "web-1", PID: 4242, Label: "ops", At: t0.Add(-20 * time.Second)},
			Library: "redlock", Validity: 12500 * time.Millisecond, ObservedAt: t0, Fence: 17,
			Masters: mastersWith(opsValue, 12800*time.Millisecond, 5),
		},
		{
			Name: "reports/daily", Key: "lock:reports/daily", State: admin.StatePartial, Votes: 2, Quorum: 3, Total: 5,
			Value: "dGhpcyBpcyByZWRzeW5jIQ==", Library: "redsync", Validity: 0, ObservedAt: t0,
			Masters: mastersWith("dGhpcyBpcyByZWRzeW5jIQ==", 4*time.Second, 2),
		},
	}
}

// fixture returns a console over fakes at t0, sized w x h, with ticks driven by the test.
func fixture(t *testing.T, w, h int, readOnly bool) (*Model, *fakeSource, *fakeLocker, *fakeClock) {
	t.Helper()
	clk := &fakeClock{t: t0}
	src := &fakeSource{clock: clk, snap: Snapshot{Nodes: healthyNodes(), Locks: sampleLocks()}}
	lk := &fakeLocker{clock: clk, src: src}
	var locker Locker = lk
	if readOnly {
		locker = nil
	}
	m := New(src, locker, Options{
		Cluster: "payments", Masters: masters, MaxTTL: 5 * time.Minute, ReadOnly: readOnly,
		Note: "quarantine off", Now: clk.Now,
	})
	m.ctx.frame = func(time.Duration) tea.Cmd { return nil } // the test drives the ticks
	m.SetSize(w, h)
	return m, src, lk, clk
}

// drive sends msg to the model and runs every command it returns, to completion,
// feeding their messages back. It reports whether the program asked to quit.
func drive(t *testing.T, m *Model, msg tea.Msg) (quit bool) {
	t.Helper()
	_, cmd := m.Update(msg)
	return runCmd(t, m, cmd)
}

func runCmd(t *testing.T, m *Model, cmd tea.Cmd) (quit bool) {
	t.Helper()
	if cmd == nil {
		return false
	}
	done := make(chan tea.Msg, 1)
	go func() { done <- cmd() }()
	var msg tea.Msg
	select {
	case msg = <-done:
	case <-time.After(5 * time.Second):
		t.Fatal("a command did not return within 5s")
	}
	switch msg := msg.(type) {
	case nil:
		return false
	case tea.QuitMsg:
		return true
	case tea.BatchMsg:
		for _, c := range msg {
			if runCmd(t, m, c) {
				quit = true
			}
		}
		return quit
	default:
		return drive(t, m, msg)
	}
}

func keys(s string) tea.KeyMsg { return tea.KeyMsg{Type: tea.KeyRunes, Runes: []rune(s)} }

var (
	enter = tea.KeyMsg{Type: tea.KeyEnter}
	tab   = tea.KeyMsg{Type: tea.KeyTab}
	bksp  = tea.KeyMsg{Type: tea.KeyBackspace}
	down  = tea.KeyMsg{Type: tea.KeyDown}
)

// typeText sends s one rune at a time.
func typeText(t *testing.T, m *Model, s string) {
	for _, r := range s {
		drive(t, m, keys(string(r)))
	}
}

var errBoom = errors.New("boom")

// started runs Init and the first poll.
func started(t *testing.T, m *Model) {
	t.Helper()
	require.False(t, runCmd(t, m, m.Init()))
	require.True(t, m.poll.polled)
}

// requireModal requires the modal on top to be a T.
func requireModal[T modal](t *testing.T, m *Model) T {
	t.Helper()
	md, ok := m.top().(T)
	require.True(t, ok, "the modal on top is %T", m.top())
	return md
}

// applyNow applies snap as the answer to a new poll, prepared as a poll's command would.
func applyNow(m *Model, snap Snapshot) {
	m.poll.id++
	m.onSnapshot(snapshotMsg{id: m.poll.id, prep: m.poll.base(m.table.key()).prepare(snap)})
}
