package tui

import (
	"github.com/charmbracelet/bubbles/key"
	tea "github.com/charmbracelet/bubbletea"

	"github.com/redlock/redlock/topology"
)

// Model is the console's root model. It holds only the composition: the shared
// program context, the poller, the panels (header, nodes, locks table, detail
// pane), the stack of modals, the status line and the locks this console holds;
// it routes messages to them and lays them out. Create it with New; run it with
// tea.NewProgram(m, tea.WithAltScreen()).
type Model struct {
	ctx    *programContext
	poll   poller
	header headerBar
	nodes  nodesPanel
	table  locksTable
	detail detailPane
	modals []modal // the top one takes the keys
	status statusLine
	hold   holdings
}

// New returns the console over src (observation) and lk (actions; nil with
// ReadOnly). It does no I/O: Init starts the first poll.
func New(src Source, lk Locker, opts Options) *Model {
	opts.defaults()
	if lk == nil {
		opts.ReadOnly = true
	}
	m := &Model{
		ctx:   newProgramContext(opts),
		poll:  newPoller(src, opts.Interval),
		table: locksTable{focused: true},
		hold:  newHoldings(lk, opts.ActionTimeout),
	}
	m.SetSize(80, 24)
	return m
}

// Init starts the frame tick and the first poll.
func (m *Model) Init() tea.Cmd { return tea.Batch(m.tickCmd(), m.startPoll()) }

// Holding returns the locks this console still holds (after quitting: those
// whose release failed or was not attempted). Callers release them on exit.
func (m *Model) Holding() []Held {
	out := make([]Held, 0, len(m.hold.held))
	for _, n := range m.hold.names() {
		out = append(out, m.hold.held[n].h)
	}
	return out
}

// SetSize lays the panels out for a w x h terminal. Any size works, down to 0x0.
func (m *Model) SetSize(w, h int) {
	m.ctx.width, m.ctx.height = max(w, 0), max(h, 0)
	m.ctx.help.Width = m.ctx.width
	m.header.SetSize(m.ctx.width, 1)
	for _, md := range m.modals {
		md.SetSize(m.ctx.width, max(m.ctx.height-3, 0))
	}
	m.layout()
}

// tableRows is how many lock rows the layout gives the table before any other
// pane (as many as there are locks, up to 12: what an 80x24 terminal shows).
const tableRows = 12

// layout divides the body (the lines between the header and the status line)
// between the nodes panel, the locks table and the detail pane. The table comes
// first, with a row per lock up to 12; then the nodes in full if they fit, else on one summary
// line; then the detail if it fits; the table takes the rest. A pane asked for
// (tab on the nodes, enter or H for the detail) takes room from the table, down
// to one row.
func (m *Model) layout() {
	body := max(m.ctx.height-3, 0) // header, status line, help bar
	if md := m.top(); md != nil {
		if where, n := md.Place(); where == placeBelow {
			body = max(body-n, 0)
		}
	}
	n := len(m.nodeRows())
	// The detail: title, owner, value, heads, a row per master, recent events.
	nodesFull, detailFull := n+1, n+5
	// The table: title, heads, rows.
	table := min(body, 2+clamp(len(m.table.rows()), 1, tableRows))
	rest := body - table
	nodes, detail := 0, 0
	switch {
	case rest >= nodesFull:
		nodes = nodesFull
	case rest >= 1:
		nodes = 1
	}
	rest -= nodes
	if rest >= detailFull {
		detail = detailFull
	}
	rest -= detail
	table += rest
	// What was asked for takes room from the table, down to its title, heads and one row.
	spare := func() int { return max(table-3, 0) }
	if m.nodes.focused && nodes < nodesFull {
		take := min(nodesFull-nodes, spare())
		nodes, table = nodes+take, table-take
	}
	if m.detail.open && detail == 0 {
		if !m.nodes.focused && nodes > 1 { // the nodes make room first, down to their summary
			table, nodes = table+nodes-1, 1
		}
		detail = min(detailFull, spare())
		table -= detail
	}
	if detail < 3 { // a detail pane without rows is noise
		table, detail = table+detail, 0
	}
	// Room the table's rows do not fill goes below the detail, which then sits
	// right under the last row.
	if extra := table - (2 + max(len(m.table.rows()), 1)); extra > 0 && detail > 0 {
		table, detail = table-extra, detail+extra
	}
	m.nodes.SetSize(m.ctx.width, nodes)
	m.detail.SetSize(m.ctx.width, detail)
	m.table.SetSize(m.ctx.width, table)
}

// top returns the modal on top of the stack, nil when none is open.
func (m *Model) top() modal {
	if len(m.modals) == 0 {
		return nil
	}
	return m.modals[len(m.modals)-1]
}

// push opens a modal over the console.
func (m *Model) push(md modal) {
	md.SetSize(m.ctx.width, max(m.ctx.height-3, 0))
	m.modals = append(m.modals, md)
	m.layout()
}

// Update routes one message, then lays the panels out again (what they hold may
// have changed). It never blocks: I/O runs in the commands it returns.
func (m *Model) Update(msg tea.Msg) (tea.Model, tea.Cmd) {
	cmd := m.update(msg)
	if rows := m.table.refresh(); rows != nil {
		cmd = tea.Batch(cmd, rows)
	}
	m.layout()
	return m, cmd
}

func (m *Model) update(msg tea.Msg) tea.Cmd {
	switch msg := msg.(type) {
	case tea.WindowSizeMsg:
		m.SetSize(msg.Width, msg.Height)
		return nil
	case tickMsg:
		return m.onTick()
	case snapshotMsg:
		m.onSnapshot(msg)
		return nil
	case rowsMsg:
		m.table.onRows(msg)
		return nil
	case acquiredMsg:
		m.onAcquired(msg)
		return m.startPoll()
	case extendedMsg:
		if msg.err != nil {
			m.status.set(statusErr, "extend %s: %s", msg.name, msg.err)
		} else {
			m.status.set(statusOK, "extended %s: valid until %s (%s)", msg.name, msg.until.Format("15:04:05"), humanLeft(msg.until, m.ctx.opts.Now()))
		}
		return m.startPoll()
	case releasedMsg:
		delete(m.hold.held, msg.name)
		m.heldChanged()
		if msg.err != nil {
			m.status.set(statusErr, "release %s: %s", msg.name, msg.err)
		} else {
			m.status.set(statusOK, "released %s", msg.name)
		}
		return m.startPoll()
	case expiredMsg:
		m.onExpired(msg)
		return m.startPoll()
	case quitMsg:
		if len(msg.errs) == 0 {
			m.hold.held = map[string]heldLock{}
		}
		return tea.Quit
	case tea.KeyMsg:
		return m.onKey(msg)
	}
	if md := m.top(); md != nil {
		return m.route(md, msg)
	}
	return nil
}

// route gives a message to the modal on top, closes it when it is done and
// handles its outcome.
func (m *Model) route(md modal, msg tea.Msg) tea.Cmd {
	done, out, cmd := md.Update(m.ctx, msg)
	if done {
		m.modals = m.modals[:len(m.modals)-1]
		m.layout()
	}
	if out != nil {
		return tea.Batch(cmd, m.onOutcome(out))
	}
	return cmd
}

// onOutcome acts on what a modal decided.
func (m *Model) onOutcome(out tea.Msg) tea.Cmd {
	switch out := out.(type) {
	case filterMsg:
		m.table.filter = out.value
		if out.cleared {
			m.table.filter = ""
			m.status.set(statusInfo, "filter cleared")
		}
	case acquireMsg:
		m.status.set(statusInfo, "acquiring %s for %s…", out.name, out.ttl)
		return m.hold.acquireCmd(out.name, out.ttl)
	case cancelledMsg:
		if out.name == "" {
			m.status.set(statusInfo, "%s cancelled", out.action)
		} else {
			m.status.set(statusInfo, "%s of %s cancelled", out.action, out.name)
		}
	case forceExpireMsg:
		m.status.set(statusInfo, "force-expiring %s…", out.c.name)
		return m.hold.forceExpireCmd(out.c)
	case quitRequestMsg:
		return m.quit()
	}
	return nil
}

func (m *Model) tickCmd() tea.Cmd { return m.ctx.frame(m.ctx.opts.Frame) }

// startPoll asks the poller for a new snapshot of the rows on screen.
func (m *Model) startPoll() tea.Cmd {
	return m.poll.start(m.ctx.now, m.table.key(), m.table.onScreen())
}

func (m *Model) onTick() tea.Cmd {
	m.ctx.now = m.ctx.opts.Now()
	for _, n := range m.hold.names() {
		if !m.ctx.now.Before(m.hold.held[n].h.Until()) {
			delete(m.hold.held, n)
			m.heldChanged()
			m.status.set(statusWarn, "%s: validity ended; this console no longer holds it", n)
		}
	}
	cmds := []tea.Cmd{m.tickCmd()}
	if m.poll.due(m.ctx.now) {
		cmds = append(cmds, m.startPoll())
	}
	return tea.Batch(cmds...)
}

// onSnapshot applies a poll answer, unless a newer poll was issued.
func (m *Model) onSnapshot(msg snapshotMsg) {
	if !m.poll.apply(msg) {
		return
	}
	m.table.setSnapshot(m.poll.set, m.poll.gen, msg.prep)
	if err := m.poll.snap.Err; err != nil {
		m.status.poll(err)
	} else {
		m.status.clearPoll()
	}
	m.layout()
}

// heldChanged tells the table which locks this console holds (its owner column
// and filter depend on it).
func (m *Model) heldChanged() { m.table.setHeld(m.hold.names()) }

// onKey handles a key press: ctrl+c always quits; a modal takes every other key;
// then the focused panel's keys, the table's, and the console's own.
func (m *Model) onKey(msg tea.KeyMsg) tea.Cmd {
	k := &m.ctx.keys
	if m.hold.quitting {
		return nil
	}
	if msg.Type == tea.KeyCtrlC {
		return m.quit()
	}
	if md := m.top(); md != nil {
		return m.route(md, msg)
	}
	if presses := burst(msg); len(presses) > 1 {
		var cmds []tea.Cmd
		for _, p := range presses {
			cmds = append(cmds, m.onKey(p))
		}
		return tea.Batch(cmds...)
	}
	if action := k.writingKey(msg); action != "" && m.ctx.opts.ReadOnly {
		m.status.set(statusWarn, "read-only console: %q (%s) is disabled", msg.String(), action)
		return nil
	}
	if m.nodes.Update(msg, k, len(m.nodeRows())) {
		return nil
	}
	if m.detail.Update(msg, k, m.nodes.focused) {
		return nil
	}
	if handled, text := m.table.Update(msg, k); handled {
		if text != "" {
			m.status.set(statusInfo, "%s", text)
		}
		return nil
	}
	switch {
	case key.Matches(msg, k.Quit):
		return m.quit()
	case key.Matches(msg, k.Help):
		m.push(newHelpModal(m.ctx.width, max(m.ctx.height-3, 0)))
	case key.Matches(msg, k.Tab):
		m.nodes.focused = !m.nodes.focused
		m.table.focused = !m.nodes.focused
		m.layout()
	case key.Matches(msg, k.Filter):
		m.push(newFilterModal(m.table.filter))
	case key.Matches(msg, k.Acquire):
		p := newAcquirePrompt(m.ctx.opts.DefaultTTL, m.ctx.opts.MaxTTL)
		m.push(p)
		return p.Open("")
	case key.Matches(msg, k.Extend), key.Matches(msg, k.Release):
		return m.extendOrRelease(key.Matches(msg, k.Extend))
	case key.Matches(msg, k.ForceExpire), key.Matches(msg, k.DeleteNow):
		li := m.table.selected()
		if li == nil {
			m.status.set(statusWarn, "no lock selected")
			return nil
		}
		c := newConfirmation(li, m.holder(li))
		c.now = key.Matches(msg, k.DeleteNow)
		m.push(&confirmModal{c: c})
	case key.Matches(msg, k.Copy):
		m.copyToken()
	case key.Matches(msg, k.Clear):
		if m.table.filter != "" {
			m.table.filter = ""
			m.status.set(statusInfo, "filter cleared")
		} else {
			m.detail.close()
			m.layout()
		}
	}
	return nil
}

func clamp(v, lo, hi int) int {
	if hi < lo {
		return lo
	}
	return min(max(v, lo), hi)
}

// nodeRows returns one health row per master: declared masters first, in order,
// with a placeholder until the first poll answers.
func (m *Model) nodeRows() []topology.NodeHealth {
	declared := m.ctx.opts.Masters
	rows := make([]topology.NodeHealth, 0, len(declared))
	seen := map[string]bool{}
	byName := map[string]topology.NodeHealth{}
	for _, n := range m.poll.snap.Nodes {
		byName[n.Master] = n
	}
	for _, name := range declared {
		n, ok := byName[name]
		if !ok {
			n = topology.NodeHealth{Master: name}
		}
		rows = append(rows, n)
		seen[name] = true
	}
	for _, n := range m.poll.snap.Nodes {
		if !seen[n.Master] {
			rows = append(rows, n)
		}
	}
	return rows
}
