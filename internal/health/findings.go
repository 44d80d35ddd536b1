package health

import (
	"fmt"
	"io"
	"strings"

	"github.com/redlock/redlock/internal/escape"
	"github.com/redlock/redlock/topology"
)

// FindingGroup is one finding seen, identical, on one or more masters.
type FindingGroup struct {
	Finding topology.Finding
	Masters []string
}

// GroupFindings groups identical findings (same severity, code, summary, detail
// and acknowledgement; Fixable aside) across masters, in the order they are first
// seen.
func GroupFindings(hs []topology.NodeHealth) []FindingGroup {
	var out []FindingGroup
	index := map[topology.Finding]int{}
	for _, h := range hs {
		for _, f := range h.Findings {
			key := f
			key.Fixable = false
			i, ok := index[key]
			if !ok {
				i = len(out)
				index[key] = i
				out = append(out, FindingGroup{Finding: f})
			}
			out[i].Masters = append(out[i].Masters, h.Master)
		}
	}
	return out
}

// WriteFindings writes the findings of hs grouped across masters under a
// "Findings:" heading: "warning CODE: summary [3 masters: a, b, c]" and its detail.
// Findings an ignore block acknowledges are marked "ack" with the reason when
// showAcknowledged, and left out otherwise (a last line counts them). Every
// summary, detail and master name goes through esc (escape.Text when nil), which
// must make server answers safe for a terminal: the output is not to be escaped
// again. It writes nothing when there is nothing to say.
func WriteFindings(w io.Writer, hs []topology.NodeHealth, showAcknowledged bool, esc func(string) string) {
	if esc == nil {
		esc = escape.Text
	}
	groups := GroupFindings(hs)
	hidden := 0
	var shown []FindingGroup
	for _, g := range groups {
		if g.Finding.Acknowledged != "" && !showAcknowledged {
			hidden++
			continue
		}
		shown = append(shown, g)
	}
	if len(shown) == 0 && hidden == 0 {
		return
	}
	fmt.Fprintln(w, "\nFindings:")
	for _, g := range shown {
		where := "master " + g.Masters[0]
		if len(g.Masters) > 1 {
			where = fmt.Sprintf("%d masters: %s", len(g.Masters), strings.Join(g.Masters, ", "))
		}
		sev := g.Finding.Severity.String()
		if g.Finding.Acknowledged != "" {
			sev = "ack"
		}
		// The code once: "unreachable: dial tcp ...", not "unreachable: unreachable: ...".
		summary := strings.TrimPrefix(g.Finding.Summary, g.Finding.Code+": ")
		fmt.Fprintf(w, "  %-7s %s: %s [%s]\n", sev, g.Finding.Code, esc(summary), esc(where))
		if g.Finding.Detail != "" {
			fmt.Fprintf(w, "          %s\n", esc(g.Finding.Detail))
		}
		if g.Finding.Acknowledged != "" {
			fmt.Fprintf(w, "          acknowledged in the file: %s\n", esc(g.Finding.Acknowledged))
		}
	}
	if hidden > 0 {
		fmt.Fprintf(w, "  (%d acknowledged in the file: not shown; plan lists them)\n", hidden)
	}
}
