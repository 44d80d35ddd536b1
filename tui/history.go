package tui

import (
	"fmt"
	"strings"
	"time"

	"github.com/redlock/redlock/internal/escape"
)

// historyMax is how many lock events the history pane keeps.
const historyMax = 200

// latencyMax is how many PING latencies the node detail's sparkline keeps.
const latencyMax = 30

// historyEntry is one lock event seen between two polls.
type historyEntry struct {
	at   time.Time
	kind string
	name string
	who  string
}

// appendHistory adds events to the history, keeping the newest historyMax.
func appendHistory(h, evs []historyEntry) []historyEntry {
	h = append(h, evs...)
	if over := len(h) - historyMax; over > 0 {
		h = append([]historyEntry(nil), h[over:]...)
	}
	return h
}

// historyView renders the most recent events, newest first, in w x h.
func historyView(st Styles, vm detailVM, w, h int) string {
	var from string
	switch vm.source {
	case "":
		from = "poll differences: a lock held for less than an interval can be missed"
	case EventsListing:
		from = "listing differences: a lock held for less than a pass can be missed"
	default:
		from = escape.Line(vm.source, 40)
	}
	lines := []string{st.Title.Render("History") + st.Muted.Render(fmt.Sprintf("  %d recent lock events · H closes · from %s", len(vm.history), from))}
	if len(vm.history) == 0 {
		lines = append(lines, "  "+st.Muted.Render("no lock event since the console started"))
	}
	for i := len(vm.history) - 1; i >= 0 && len(lines) < h; i-- {
		e := vm.history[i]
		sty := st.Muted
		switch e.kind {
		case EventAcquired:
			sty = st.Good
		case EventExpired, EventChangedHands:
			sty = st.Warn
		}
		lines = append(lines, "  "+e.at.Format("15:04:05")+" "+sty.Render(fit(e.kind, 13))+" "+fit(escape.Text(e.name), 30)+" "+st.Muted.Render(e.who))
	}
	return strings.Join(clip(lines, w, h), "\n")
}

// spark draws values as a one-line sparkline.
func spark(values []float64) string {
	if len(values) == 0 {
		return ""
	}
	bars := []rune("▁▂▃▄▅▆▇█")
	lo, hi := values[0], values[0]
	for _, v := range values {
		lo, hi = min(lo, v), max(hi, v)
	}
	var b strings.Builder
	for _, v := range values {
		i := 0
		if hi > lo {
			i = int((v - lo) / (hi - lo) * float64(len(bars)-1))
		}
		b.WriteRune(bars[i])
	}
	return b.String()
}

// nodeDetailView renders the selected master: every finding with its detail,
// facts, configuration read, and a latency sparkline.
func nodeDetailView(st Styles, vm detailVM, w, h int) string {
	if vm.node == nil {
		return ""
	}
	n := *vm.node
	word, sty := nodeState(st, &n, vm.now, vm.polled)
	lines := []string{st.Title.Render("Master "+escape.Text(n.Master)) + "  " + sty.Render(word) + st.Muted.Render("  "+escape.Text(n.Address)+" (enter closes)")}
	facts := []string{"server " + escape.Text(n.ServerName()) + " " + orUnknown(escape.Text(n.Version)), "role " + orUnknown(escape.Text(n.Role)),
		"uptime " + uptimeText(&n), "run_id " + orUnknown(escape.Cut(escape.Text(n.RunID), 12))}
	lines = append(lines, "  "+strings.Join(facts, st.Muted.Render(" · ")))
	clock := fmt.Sprintf("clock offset %s ±%s", latency(n.ClockOffset), latency(n.ClockUncertainty))
	if !n.QuarantineUntil.IsZero() && vm.now.Before(n.QuarantineUntil) {
		clock += st.Warn.Render(" · quarantined until " + n.QuarantineUntil.Format("15:04:05"))
	}
	lines = append(lines, "  "+clock+st.Muted.Render(" · latency ")+spark(vm.latency)+" "+latency(n.Latency))
	for _, f := range n.Findings {
		fs := st.Muted
		switch f.Severity.String() {
		case "error":
			fs = st.Bad
		case "warning":
			fs = st.Warn
		}
		tag := f.Severity.String()
		if f.Acknowledged != "" {
			tag, fs = "ack", st.Muted
		}
		lines = append(lines, "  "+fs.Render(fit(tag, 8))+escape.Text(f.Code)+": "+escape.Text(f.Summary))
		if f.Detail != "" {
			lines = append(lines, "          "+st.Muted.Render(escape.Text(f.Detail)))
		}
	}
	if len(n.Config) > 0 {
		var kv []string
		for _, k := range []string{"maxmemory-policy", "appendonly", "appendfsync", "enable-debug-command", "notify-keyspace-events"} {
			if v, ok := n.Config[k]; ok {
				kv = append(kv, k+"="+escape.Text(v))
			}
		}
		lines = append(lines, "  "+st.Muted.Render("config ")+strings.Join(kv, " "))
	}
	if n.Error != "" {
		lines = append(lines, "  "+st.Bad.Render("✖ "+escape.Text(n.Error)))
	}
	return strings.Join(clip(lines, w, h), "\n")
}
