package tui

import (
	"context"
	"fmt"
	"slices"
	"sort"
	"strings"
	"time"

	tea "github.com/charmbracelet/bubbletea"

	"github.com/redlock/redlock/quorum"
)

// heldLock is a lock this console took, with the TTL it asked for (extend reuses it).
type heldLock struct {
	h   Held
	ttl time.Duration
}

// acquiredMsg is the result of the acquire prompt.
type acquiredMsg struct {
	name string
	ttl  time.Duration
	held Held
	err  error
}

// extendedMsg is the result of `e`.
type extendedMsg struct {
	name  string
	until time.Time
	err   error
}

// releasedMsg is the result of `r`.
type releasedMsg struct {
	name string
	err  error
}

// expiredMsg is the result of a confirmed `x`.
type expiredMsg struct {
	name string
	rep  *quorum.Report
	err  error
	now  *quorum.LockInfo // the lock as read after a force-expire found it changed
	// unread are the masters the row could not read: nothing was deleted there and
	// they may still hold the lock (they are not "missing").
	unread map[string]string
}

// quitMsg ends the program once the locks this console held were released.
type quitMsg struct{ errs []string }

func (m *Model) acquireCmd(name string, ttl time.Duration) tea.Cmd {
	lk, timeout := m.lk, m.opts.ActionTimeout
	return func() tea.Msg {
		ctx, cancel := context.WithTimeout(context.Background(), timeout)
		defer cancel()
		h, err := lk.TryAcquire(ctx, name, ttl)
		return acquiredMsg{name: name, ttl: ttl, held: h, err: err}
	}
}

func (m *Model) extendCmd(hl heldLock) tea.Cmd {
	timeout := m.opts.ActionTimeout
	return func() tea.Msg {
		ctx, cancel := context.WithTimeout(context.Background(), timeout)
		defer cancel()
		err := hl.h.Extend(ctx, hl.ttl)
		return extendedMsg{name: hl.h.Name(), until: hl.h.Until(), err: err}
	}
}

func (m *Model) releaseCmd(hl heldLock) tea.Cmd {
	timeout := m.opts.ActionTimeout
	return func() tea.Msg {
		ctx, cancel := context.WithTimeout(context.Background(), timeout)
		defer cancel()
		return releasedMsg{name: hl.h.Name(), err: hl.h.Release(ctx)}
	}
}

func (m *Model) forceExpireCmd(name string, seen map[string]quorum.Seen, unread map[string]string) tea.Cmd {
	lk, timeout := m.lk, m.opts.ActionTimeout
	return func() tea.Msg {
		ctx, cancel := context.WithTimeout(context.Background(), timeout)
		defer cancel()
		rep, err := lk.ForceExpire(ctx, name, seen)
		msg := expiredMsg{name: name, rep: rep, err: err, unread: unread}
		if rep != nil && slices.ContainsFunc(rep.Nodes, func(n quorum.NodeResult) bool { return n.Outcome == quorum.OutcomeForeign }) {
			// It changed hands since it was shown: read who holds it now (not through
			// the source, whose polls hand out events once).
			if li, err := lk.Lookup(ctx, name); err == nil {
				msg.now = li
			}
		}
		return msg
	}
}

// releaseAllCmd releases every lock this console holds, in parallel, then quits.
func (m *Model) releaseAllCmd() tea.Cmd {
	held := make([]heldLock, 0, len(m.held))
	for _, hl := range m.held {
		held = append(held, hl)
	}
	timeout := m.opts.ActionTimeout
	return func() tea.Msg {
		ctx, cancel := context.WithTimeout(context.Background(), timeout)
		defer cancel()
		errc := make(chan string, len(held))
		for _, hl := range held {
			go func() {
				if err := hl.h.Release(ctx); err != nil {
					errc <- fmt.Sprintf("%s: %v", hl.h.Name(), err)
					return
				}
				errc <- ""
			}()
		}
		var errs []string
		for range held {
			if e := <-errc; e != "" {
				errs = append(errs, e)
			}
		}
		sort.Strings(errs)
		return quitMsg{errs: errs}
	}
}

// votes summarises a round: "5/5 votes (quorum 3)" plus the masters that failed.
func votes(rep quorum.Report) string {
	var b strings.Builder
	fmt.Fprintf(&b, "%d/%d votes (quorum %d)", rep.Votes, len(rep.Nodes), rep.Quorum)
	var bad []string
	for _, n := range rep.Nodes {
		if n.Outcome != quorum.OutcomeOK {
			s := n.Node + " " + n.Outcome.String()
			if n.Err != nil {
				s += ": " + n.Err.Error()
			}
			bad = append(bad, s)
		}
	}
	if len(bad) > 0 {
		b.WriteString("; " + strings.Join(bad, "; "))
	}
	return b.String()
}

// heldNames returns the names of the locks this console holds, sorted.
func (m *Model) heldNames() []string {
	names := make([]string, 0, len(m.held))
	for n := range m.held {
		names = append(names, n)
	}
	sort.Strings(names)
	return names
}
