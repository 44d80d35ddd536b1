package escape

import (
	"testing"
	"unicode/utf8"

	"github.com/charmbracelet/x/ansi"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestText(t *testing.T) {
	tests := []struct {
		name, in, want string
	}{
		{"plain", "billing/42", "billing/42"},
		{"unicode letters kept", "größe-東京", "größe-東京"},
		{"escape sequence", "x\x1b[2J\x1b[31mPWNED", `x\x1b[2J\x1b[31mPWNED`},
		{"newline and tab", "a\nb\tc\r", `a\nb\tc\r`},
		{"bell and backspace", "a\ab\b", `a\ab\b`},
		{"nul and del", "a\x00b\x7f", `a\x00b\x7f`},
		{"backslash doubled", `a\x1b`, `a\\x1b`},
		{"invalid utf8", "a\xffb\xc3", `a\xffb\xc3`},
		{"c1 csi", "a\u009b2Jb", `a\u009b2Jb`},
		{"bidi override", "abc\u202edcb", `abc\u202edcb`},
		{"zero width", "ad\u200bmin", `ad\u200bmin`},
		{"bom", "\ufeffx", `\ufeffx`},
		{"empty", "", ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			assert.Equal(t, tt.want, Text(tt.in))
			assert.Equal(t, tt.in == tt.want, Safe(tt.in))
		})
	}
}

func TestCut(t *testing.T) {
	tests := []struct {
		name  string
		in    string
		width int
		want  string
	}{
		{"fits", "alice", 5, "alice"},
		{"cut", "alice@host", 6, "alice…"},
		{"wide runes never split", "東京東京", 5, "東京…"},
		{"zero width", "alice", 0, ""},
		{"one", "alice", 1, "…"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := Cut(tt.in, tt.width)
			assert.Equal(t, tt.want, got)
			assert.LessOrEqual(t, ansi.StringWidth(got), max(tt.width, 0))
		})
	}
}

func TestLineEscapesBeforeCutting(t *testing.T) {
	assert.Equal(t, `a\x1b…`, Line("a\x1b[2J", 6))
}

// FuzzText: whatever the bytes, the escaped text is valid UTF-8 holding no C0 or C1
// control, no DEL and no bidi control, and a clean string is its own escape.
func FuzzText(f *testing.F) {
	for _, s := range []string{"", "plain", "x\x1b[2J\x1b[31mPWNED", "a\nb", "\xff\xfe", "\u202e", "\u009b31m", `\`, "東京"} {
		f.Add(s, 10)
	}
	f.Fuzz(func(t *testing.T, s string, width int) {
		got := Text(s)
		require.True(t, utf8.ValidString(got))
		for _, r := range got {
			require.False(t, r < 0x20 || r == 0x7f || (r >= 0x80 && r <= 0x9f) || unsafeRune(r), "control %U in %q", r, got)
		}
		if Safe(s) {
			require.Equal(t, s, got)
		}
		if width > 0 && width < 1000 {
			line := Line(s, width)
			require.LessOrEqual(t, ansi.StringWidth(line), width)
			require.True(t, utf8.ValidString(line))
		}
	})
}
