// Package escape makes strings that come from Redis or from other users safe to
// print on a terminal.
//
// Every lock name, owner label, value, library guess and server error text is
// hostile: it may carry ESC sequences that repaint or take over an operator's
// terminal, newlines that forge table rows, or bidi overrides that reorder what is
// shown. Text escapes all of them the way redis-cli does, so the result holds no C0
// or C1 control byte, no DEL, no invalid UTF-8 and no bidi control, and reads back
// unambiguously. It does not shorten; Cut and Line do.
//
// JSON output does not need this package: encoding/json already escapes control
// characters. Use it for every human-readable output (console, tables, errors).
package escape

import (
	"fmt"
	"strings"
	"unicode/utf8"

	"github.com/charmbracelet/x/ansi"
)

// Ellipsis ends a string that Cut shortened.
const Ellipsis = "…"

// Text returns s with every character that could control a terminal written as a
// visible escape: `\\` for a backslash, `\n`, `\r`, `\t`, `\a`, `\b` for those
// controls, `\xNN` for any other C0 byte, DEL and each byte of invalid UTF-8,
// `\u0085`-style escapes for C1 controls and `\u202e`-style escapes for Unicode
// bidi and other invisible format controls. Printable text, including non-ASCII
// letters, is kept as it is. Text of a string without such characters is the
// string itself; Text never shortens.
func Text(s string) string {
	if clean(s) {
		return s
	}
	var b strings.Builder
	b.Grow(len(s) + 8)
	for i := 0; i < len(s); {
		r, size := utf8.DecodeRuneInString(s[i:])
		switch {
		case r == utf8.RuneError && size <= 1:
			fmt.Fprintf(&b, `\x%02x`, s[i])
		case r == '\\':
			b.WriteString(`\\`)
		case r == '\n':
			b.WriteString(`\n`)
		case r == '\r':
			b.WriteString(`\r`)
		case r == '\t':
			b.WriteString(`\t`)
		case r == '\a':
			b.WriteString(`\a`)
		case r == '\b':
			b.WriteString(`\b`)
		case r < 0x20 || r == 0x7f:
			fmt.Fprintf(&b, `\x%02x`, r)
		case unsafeRune(r):
			fmt.Fprintf(&b, `\u%04x`, r)
		default:
			b.WriteString(s[i : i+size])
		}
		i += size
	}
	return b.String()
}

// Cut shortens s to at most width terminal cells, ending it with Ellipsis when it
// was cut. It measures and cuts by display width (wide characters count twice) and
// never splits a character. It does not escape: cut only what Text returned. A
// width below 1 gives "".
func Cut(s string, width int) string {
	if width < 1 {
		return ""
	}
	if ansi.StringWidth(s) <= width {
		return s
	}
	return ansi.Truncate(s, width, Ellipsis)
}

// Line is Cut(Text(s), width): a hostile string made safe for one table cell or
// one line of output, at most width cells wide.
func Line(s string, width int) string { return Cut(Text(s), width) }

// Safe reports whether s prints as itself: Text(s) == s.
func Safe(s string) bool { return clean(s) }

func clean(s string) bool {
	for i := 0; i < len(s); i++ {
		c := s[i]
		if c < 0x20 || c == 0x7f || c == '\\' {
			return false
		}
		if c >= 0x80 {
			return cleanUTF8(s[i:])
		}
	}
	return true
}

func cleanUTF8(s string) bool {
	for i := 0; i < len(s); {
		r, size := utf8.DecodeRuneInString(s[i:])
		if (r == utf8.RuneError && size <= 1) || r < 0x20 || r == 0x7f || r == '\\' || unsafeRune(r) {
			return false
		}
		i += size
	}
	return true
}

// unsafeRune reports the non-ASCII runes that control a terminal or reorder or hide
// text: C1 controls, bidi embeddings, overrides, isolates and marks, zero-width and
// line/paragraph separators, and the BOM.
func unsafeRune(r rune) bool {
	switch {
	case r >= 0x80 && r <= 0x9f: // C1 controls (CSI is U+009B)
		return true
	case r == 0x061c: // Arabic letter mark
		return true
	case r >= 0x200b && r <= 0x200f: // zero-width space/joiners, LRM, RLM
		return true
	case r >= 0x2028 && r <= 0x202e: // line/paragraph separators, bidi embeddings and overrides
		return true
	case r >= 0x2060 && r <= 0x206f: // word joiner, invisible operators, bidi isolates
		return true
	case r == 0xfeff: // BOM / zero-width no-break space
		return true
	}
	return false
}
