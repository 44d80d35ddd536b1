package tui

import (
	"errors"
	"strings"
	"testing"
	"time"
	"unicode/utf8"

	"github.com/charmbracelet/x/ansi"

	"github.com/redlock/redlock/quorum"
)

// FuzzViews sends arbitrary strings, as another user or a master could write them,
// through every view of the console (lock list, detail, nodes, status line, the
// force-expire confirmation and every status line it leads to) and checks that no control byte reaches the screen
// (no C0 but newline, no DEL, no C1) and that no row breaks the layout.
func FuzzViews(f *testing.F) {
	for _, s := range []string{"plain", "x\x1b]0;owned\x07", "x\x1b[2J\x1b[31mPWNED", "\x9b31m", "tab\there\nnewline", "\u202eevil", "日本語の名前", "\xff\xfe", strings.Repeat("w", 500)} {
		f.Add(s, s, s)
	}
	f.Fuzz(func(t *testing.T, name, owner, other string) {
		m, src, lk, _ := fixture(t, 120, 40, false)
		lk.changed = true
		src.edit(func(s *Snapshot) {
			li := &s.Locks[0]
			li.Name, li.Key = name, "lock:"+name
			li.Owner = &quorum.Owner{Host: other, Label: owner, PID: 7, At: t0}
			li.Library = other
			li.Value = owner
			li.Masters[0].Value = other
			li.Masters[1].Type = other
			li.Masters[2].Err = errors.New(other)
			s.Locks[1].Owner = nil
			s.Locks[1].Library = owner
			s.Nodes[0].Reachable, s.Nodes[0].Error = false, other
			s.Nodes[1].Role, s.Nodes[1].Version = owner, other
			s.Err = errors.New(owner)
		})
		started(t, m)
		check := func(step string) {
			view := m.View()
			for i, r := range view {
				if r == '\n' {
					continue
				}
				if r < 0x20 || r == 0x7f || (r >= 0x80 && r < 0xa0) {
					t.Fatalf("%s: control character %U at %d reached the screen:\n%q", step, r, i, view)
				}
			}
			lines := strings.Split(view, "\n")
			if len(lines) > 40 {
				t.Fatalf("%s: %d lines on a 40-line screen", step, len(lines))
			}
			for _, l := range lines {
				if w := ansi.StringWidth(l); w > 120 {
					t.Fatalf("%s: a %d-cell line on a 120-column screen: %q", step, w, l)
				}
			}
		}
		check("list")
		m.table.sel = name // the hostile row, wherever the order puts it
		drive(t, m, enter)
		check("detail")
		drive(t, m, keys("x"))
		check("confirm")
		drive(t, m, keys("n"))
		check("status line: force-expire cancelled")
		drive(t, m, keys("x"))
		drive(t, m, keys("y"))
		check("status line: force-expire of a lock that changed hands")
		lk.changed, lk.expireErr = false, errors.New(other)
		drive(t, m, keys("x"))
		drive(t, m, keys("y"))
		check("status line: force-expire error")
		drive(t, m, keys("e"))
		check("status line: not held by this console")
		drive(t, m, tab)
		check("nodes")
		m.ctx.now = t0.Add(time.Second)
		check("later")
	})
}

// FuzzNaturalCompare checks that the natural order is a total order: antisymmetric,
// zero only for equal strings, and transitive over three strings.
func FuzzNaturalCompare(f *testing.F) {
	for _, s := range [][3]string{{"item-2", "item-10", "item-010"}, {"a1b2", "a01b2", "a1b10"}, {"", "0", "00"}, {"x9", "x10", "x9a"}} {
		f.Add(s[0], s[1], s[2])
	}
	f.Fuzz(func(t *testing.T, a, b, c string) {
		ab, ba := naturalCompare(a, b), naturalCompare(b, a)
		if ab != -ba || (ab == 0) != (a == b) {
			t.Fatalf("compare(%q, %q) = %d, compare(%q, %q) = %d", a, b, ab, b, a, ba)
		}
		if ab < 0 && naturalCompare(b, c) < 0 && naturalCompare(a, c) >= 0 {
			t.Fatalf("%q < %q < %q but not %q < %q", a, b, c, a, c)
		}
	})
}

// FuzzFilter checks the filter rule on any pattern: it never panics; text
// without * ? [ is a case-insensitive substring; a glob matches a column that
// holds the glob's own literal text (its * and ? standing for nothing and one
// character).
func FuzzFilter(f *testing.F) {
	for _, s := range [][2]string{{"item-77*", "load/item-770"}, {"[!a-", "x"}, {`a\`, `a\`}, {"[]]", "]"}, {"É*", "éa"}} {
		f.Add(s[0], s[1])
	}
	f.Fuzz(func(t *testing.T, pattern, col string) {
		match := newMatcher(pattern)
		if match == nil {
			if strings.TrimSpace(pattern) != "" {
				t.Fatalf("no matcher for %q", pattern)
			}
			return
		}
		got := match(col)
		p := strings.TrimSpace(pattern)
		if !strings.ContainsAny(p, "*?[") && got != strings.Contains(strings.ToLower(col), strings.ToLower(p)) {
			t.Fatalf("text %q on %q: %v", p, col, got)
		}
		if !strings.ContainsAny(p, "?[\\") && utf8.ValidString(p) {
			lit := strings.ReplaceAll(p, "*", "")
			if !match("<" + lit + ">") {
				t.Fatalf("glob %q does not match its own literal text %q", p, lit)
			}
		}
	})
}
