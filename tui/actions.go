package tui

import (
	"context"
	"fmt"
	"slices"
	"sort"
	"strings"
	"time"

	tea "github.com/charmbracelet/bubbletea"

	"github.com/redlock/redlock/admin"
	"github.com/redlock/redlock/quorum"
)

// heldLock is a lock this console took, with the TTL it asked for (extend reuses it).
type heldLock struct {
	h   Held
	ttl time.Duration
}

// holdings are the locks this console holds, and the actions on them: every
// action runs in a tea.Cmd under the action timeout and answers with a message.
type holdings struct {
	lk       Locker
	timeout  time.Duration
	held     map[string]heldLock
	quitting bool // releasing everything before the program ends
}

func newHoldings(lk Locker, timeout time.Duration) holdings {
	return holdings{lk: lk, timeout: timeout, held: map[string]heldLock{}}
}

// names returns the names of the locks this console holds, sorted.
func (h *holdings) names() []string {
	names := make([]string, 0, len(h.held))
	for n := range h.held {
		names = append(names, n)
	}
	sort.Strings(names)
	return names
}

// mine reports whether this console holds the lock name.
func (h *holdings) mine(name string) bool { _, ok := h.held[name]; return ok }

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
	// holder is the lock as read after a force-expire found it changed.
	holder *admin.LockInfo
	// now: deleted at once (D); else revoked, the name taken until free (zero when
	// no tombstone was written).
	now  bool
	free time.Time
	// unread are the masters the row could not read: nothing was deleted there and
	// they may still hold the lock (they are not "missing").
	unread map[string]string
}

// quitMsg ends the program once the locks this console held were released.
type quitMsg struct{ errs []string }

// run calls f under the action timeout in a command.
func (h *holdings) run(f func(ctx context.Context) tea.Msg) tea.Cmd {
	timeout := h.timeout
	return func() tea.Msg {
		ctx, cancel := context.WithTimeout(context.Background(), timeout)
		defer cancel()
		return f(ctx)
	}
}

func (h *holdings) acquireCmd(name string, ttl time.Duration) tea.Cmd {
	lk := h.lk
	return h.run(func(ctx context.Context) tea.Msg {
		held, err := lk.TryAcquire(ctx, name, ttl)
		return acquiredMsg{name: name, ttl: ttl, held: held, err: err}
	})
}

func (h *holdings) extendCmd(hl heldLock) tea.Cmd {
	return h.run(func(ctx context.Context) tea.Msg {
		err := hl.h.Extend(ctx, hl.ttl)
		return extendedMsg{name: hl.h.Name(), until: hl.h.Until(), err: err}
	})
}

func (h *holdings) releaseCmd(hl heldLock) tea.Cmd {
	return h.run(func(ctx context.Context) tea.Msg {
		return releasedMsg{name: hl.h.Name(), err: hl.h.Release(ctx)}
	})
}

func (h *holdings) forceExpireCmd(c confirmation) tea.Cmd {
	lk := h.lk
	return h.run(func(ctx context.Context) tea.Msg {
		msg := expiredMsg{name: c.name, unread: c.unread, now: c.now}
		if c.now {
			msg.rep, msg.err = lk.ForceExpire(ctx, c.name, c.seen)
		} else {
			msg.free, msg.rep, msg.err = lk.Revoke(ctx, c.name, c.seen)
		}
		rep := msg.rep
		if rep != nil && slices.ContainsFunc(rep.Nodes, func(n quorum.NodeResult) bool { return n.Outcome == quorum.OutcomeForeign }) {
			// It changed hands since it was shown: read who holds it now (not through
			// the source, whose polls hand out events once).
			if li, err := lk.Lookup(ctx, c.name); err == nil {
				msg.holder = li
			}
		}
		return msg
	})
}

// releaseAllCmd releases every lock this console holds, in parallel, then quits.
func (h *holdings) releaseAllCmd() tea.Cmd {
	held := make([]heldLock, 0, len(h.held))
	for _, hl := range h.held {
		held = append(held, hl)
	}
	return h.run(func(ctx context.Context) tea.Msg {
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
	})
}

// votes summarises a round: "5/5 votes (quorum 3)" plus the masters that failed.
// Master names and errors are the caller's to escape (status lines escape them).
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
