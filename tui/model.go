package tui

import (
	"fmt"
	"time"

	"github.com/charmbracelet/bubbles/cursor"
	"github.com/charmbracelet/bubbles/help"
	"github.com/charmbracelet/bubbles/textinput"
	tea "github.com/charmbracelet/bubbletea"

	"github.com/redlock/redlock/internal/escape"
	"github.com/redlock/redlock/quorum"
	"github.com/redlock/redlock/topology"
)

type focus int

const (
	focusLocks focus = iota
	focusNodes
)

type mode int

const (
	modeNormal mode = iota
	modeFilter
	modeAcquire
	modeConfirm
	modeHelp
	modeQuitting
)

type statusKind int

const (
	statusInfo statusKind = iota
	statusOK
	statusWarn
	statusErr
)

// status is the status line: the result of the last action or poll error.
type status struct {
	kind     statusKind
	text     string
	fromPoll bool
}

// span is the countdown reference of one lock: the longest validity seen for its value.
type span struct {
	value string
	max   time.Duration
}

// confirmation is a pending force-expire.
type confirmation struct {
	name   string
	holder string
	seen   map[string]quorum.Seen // what the row showed, per master: all that may be deleted
	unread map[string]string      // the masters the row could not read, with why: nothing is deleted there
}

// Model is the console's root model: it routes messages and lays out the panels.
// Create it with New; run it with tea.NewProgram(m, tea.WithAltScreen()).
type Model struct {
	opts  Options
	src   Source
	lk    Locker
	keys  keyMap
	st    Styles
	help  help.Model
	now   time.Time
	width int

	height int

	snap     Snapshot
	polled   bool
	pollID   int
	pollAt   time.Time
	nextPoll time.Time
	inflight bool
	dropped  int // stale poll answers dropped (tests read it)
	pollErr  string

	held map[string]heldLock
	span map[string]span

	focus   focus
	mode    mode
	nodeCur int
	lockSel string // the selected lock's name, kept across polls
	locks   []quorum.LockInfo

	filter  textinput.Model
	prompt  acquirePrompt
	confirm confirmation
	status  status

	header headerBar
	nodes  nodesPanel
	table  locksPanel
	detail detailPane

	manualTick bool // tests drive ticks themselves

	nav      navKeys
	visible  visibleCache
	snapGen  int // incremented by every applied snapshot
	sortBy   sortKey
	sortDesc bool
	view     view
	history  []historyEntry       // recent lock events, newest last
	latHist  map[string][]float64 // each master's recent PING latencies, ms
}

// New returns the console over src (observation) and lk (actions; nil with
// ReadOnly). It does no I/O: Init starts the first poll.
func New(src Source, lk Locker, opts Options) *Model {
	opts.defaults()
	if lk == nil {
		opts.ReadOnly = true
	}
	f := textinput.New()
	f.Prompt = "/ "
	f.Placeholder = "name or glob"
	f.CharLimit = 200
	f.Cursor.SetMode(cursor.CursorStatic)
	m := &Model{
		opts:    opts,
		src:     src,
		lk:      lk,
		keys:    newKeyMap(opts.ReadOnly),
		st:      DefaultStyles(),
		help:    help.New(),
		now:     opts.Now(),
		held:    map[string]heldLock{},
		span:    map[string]span{},
		filter:  f,
		prompt:  newAcquirePrompt(opts.DefaultTTL),
		nav:     newNavKeys(),
		latHist: map[string][]float64{},
	}
	m.filter.Placeholder = "name, owner, state or library; glob or text"
	m.SetSize(80, 24)
	return m
}

// Init starts the frame tick and the first poll.
func (m *Model) Init() tea.Cmd { return tea.Batch(m.tickCmd(), m.startPoll()) }

// Holding returns the locks this console still holds (after quitting: those
// whose release failed or was not attempted). Callers release them on exit.
func (m *Model) Holding() []Held {
	out := make([]Held, 0, len(m.held))
	for _, n := range m.heldNames() {
		out = append(out, m.held[n].h)
	}
	return out
}

// SetSize lays the panels out for a w x h terminal. Any size works, down to 0x0.
func (m *Model) SetSize(w, h int) {
	m.width, m.height = max(w, 0), max(h, 0)
	m.help.Width = m.width
	m.header.SetSize(m.width, 1)
	m.prompt.SetSize(m.width)
	m.filter.Width = max(m.width-30, 5)
	m.layout()
}

// layout divides the body between the nodes panel, the locks table and the detail
// pane: the table keeps at least three lines, then the nodes, then the detail.
func (m *Model) layout() {
	body := max(m.height-3, 0) // header, status line, help bar
	if m.mode == modeAcquire || m.mode == modeConfirm {
		body = max(body-m.prompt.Height(m.mode), 0)
	}
	n := len(m.nodeRows())
	nodesH := n + 1
	detailH := n + 5 // title, owner, value, heads, a row per master, recent events
	tableMin := 3
	rest := body - tableMin
	nh := min(nodesH, max(rest, 0))
	rest -= nh
	dh := min(detailH, max(rest, 0))
	if dh < 3 { // a detail pane without rows is noise
		dh = 0
	}
	m.nodes.SetSize(m.width, nh)
	m.detail.SetSize(m.width, dh)
	m.table.SetSize(m.width, max(body-nh-dh, 0))
}

// Update routes one message. It never blocks: I/O runs in the commands it returns.
func (m *Model) Update(msg tea.Msg) (tea.Model, tea.Cmd) {
	switch msg := msg.(type) {
	case tea.WindowSizeMsg:
		m.SetSize(msg.Width, msg.Height)
		return m, nil
	case tickMsg:
		return m, m.onTick()
	case snapshotMsg:
		m.applySnapshot(msg)
		m.layout()
		return m, nil
	case acquiredMsg:
		m.onAcquired(msg)
		return m, m.startPoll()
	case extendedMsg:
		if msg.err != nil {
			m.setStatus(statusErr, fmt.Sprintf("extend %s: %v", msg.name, msg.err))
		} else {
			m.setStatus(statusOK, fmt.Sprintf("extended %s: valid until %s (%s)", msg.name, msg.until.Format("15:04:05"), short(msg.until.Sub(m.opts.Now()))))
		}
		return m, m.startPoll()
	case releasedMsg:
		delete(m.held, msg.name)
		if msg.err != nil {
			m.setStatus(statusErr, fmt.Sprintf("release %s: %v", msg.name, msg.err))
		} else {
			m.setStatus(statusOK, "released "+msg.name)
		}
		return m, m.startPoll()
	case expiredMsg:
		m.onExpired(msg)
		return m, m.startPoll()
	case quitMsg:
		if len(msg.errs) == 0 {
			m.held = map[string]heldLock{}
		}
		return m, tea.Quit
	case tea.KeyMsg:
		return m, m.onKey(msg)
	}
	if m.mode == modeAcquire {
		return m, m.prompt.Update(msg)
	}
	if m.mode == modeFilter {
		var cmd tea.Cmd
		m.filter, cmd = m.filter.Update(msg)
		return m, cmd
	}
	return m, nil
}

func (m *Model) onTick() tea.Cmd {
	m.now = m.opts.Now()
	for _, n := range m.heldNames() {
		if !m.now.Before(m.held[n].h.Until()) {
			delete(m.held, n)
			m.setStatus(statusWarn, fmt.Sprintf("%s: validity ended; this console no longer holds it", n))
		}
	}
	cmds := []tea.Cmd{m.tickCmd()}
	if m.duePoll() {
		cmds = append(cmds, m.startPoll())
	}
	return tea.Batch(cmds...)
}

// quit releases the locks this console holds, then ends the program.
func (m *Model) quit() tea.Cmd {
	if len(m.held) == 0 {
		return tea.Quit
	}
	m.mode = modeQuitting
	m.setStatus(statusInfo, fmt.Sprintf("releasing %d lock(s) before quitting…", len(m.held)))
	return m.releaseAllCmd()
}

func (m *Model) move(d int) {
	if m.focus == focusNodes {
		m.nodeCur = clamp(m.nodeCur+d, 0, len(m.nodeRows())-1)
		return
	}
	locks := m.visibleLocks()
	if len(locks) == 0 {
		return
	}
	i := clamp(m.selIndex(locks)+d, 0, len(locks)-1)
	m.lockSel = locks[i].Name
}

func clamp(v, lo, hi int) int {
	if hi < lo {
		return lo
	}
	return min(max(v, lo), hi)
}

// selIndex is the index of the selected lock in locks (0 when it is gone).
func (m *Model) selIndex(locks []quorum.LockInfo) int {
	for i, li := range locks {
		if li.Name == m.lockSel {
			return i
		}
	}
	return 0
}

// selected returns the selected lock, or nil when none is visible.
func (m *Model) selected() *quorum.LockInfo {
	locks := m.visibleLocks()
	if len(locks) == 0 {
		return nil
	}
	i := m.selIndex(locks)
	return &locks[i]
}

// holder describes who holds a lock, without its token.
func (m *Model) holder(li *quorum.LockInfo) string {
	_, mine := m.held[li.Name]
	return holderOf(li, mine)
}

// holderOf describes who holds a lock, without its token: "this console" when
// mine, else the owner metadata (escaped: another user wrote it) or the library.
func holderOf(li *quorum.LockInfo, mine bool) string {
	if mine {
		return "this console"
	}
	if li.Owner != nil {
		o := li.Owner
		s := o.Host
		if o.PID > 0 {
			s += fmt.Sprintf(":%d", o.PID)
		}
		if o.Label != "" {
			s = o.Label + "@" + s
		}
		return escape.Line(s, 60) // written by another user: never raw on screen
	}
	if li.Library != "" && li.Library != "unknown" {
		return escape.Line(li.Library, 30) + " client"
	}
	return "unknown owner"
}

// nodeRows returns one health row per master: declared masters first, in order,
// with a placeholder until the first poll answers.
func (m *Model) nodeRows() []topology.NodeHealth {
	rows := make([]topology.NodeHealth, 0, len(m.opts.Masters))
	seen := map[string]bool{}
	byName := map[string]topology.NodeHealth{}
	for _, n := range m.snap.Nodes {
		byName[n.Master] = n
	}
	for _, name := range m.opts.Masters {
		n, ok := byName[name]
		if !ok {
			n = topology.NodeHealth{Master: name}
		}
		rows = append(rows, n)
		seen[name] = true
	}
	for _, n := range m.snap.Nodes {
		if !seen[n.Master] {
			rows = append(rows, n)
		}
	}
	return rows
}
