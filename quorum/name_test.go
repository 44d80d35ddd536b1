package quorum

import (
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestValidateName(t *testing.T) {
	tests := []struct {
		name, err string
	}{
		{"billing/nightly", ""},
		{"deploy:prod", ""},
		{"naïve-日本", ""},
		{"glob*?[x]", ""},
		{strings.Repeat("a", MaxNameLen), ""},
		{"", "empty"},
		{strings.Repeat("a", MaxNameLen+1), "more than 200"},
		{"has space", "whitespace U+0020"},
		{"tab\there", "whitespace U+0009"},
		{"new\nline", "whitespace U+000A"},
		{"esc\x1b[2J", "control or format character U+001B"},
		{"c1\u009b", "control or format character U+009B"},
		{"bidi\u202e", "control or format character U+202E"},
		{"zero\u200bwidth", "control or format character U+200B"},
		{"bad\xffutf8", "not valid UTF-8"},
		{"x:fence", "reserved suffix"},
		{"x:queue", "reserved suffix"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			err := ValidateName(tt.name)
			if tt.err == "" {
				assert.NoError(t, err)
				return
			}
			require.ErrorIs(t, err, ErrInvalidName)
			assert.Contains(t, err.Error(), tt.err)
		})
	}
}

func FuzzValidateName(f *testing.F) {
	for _, s := range []string{"ok", "", "a b", "\x1b", "x:fence", "\xff"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, name string) {
		if ValidateName(name) != nil {
			return
		}
		// An accepted name is printable as it is: nothing to escape.
		for _, r := range name {
			if r < 0x20 || r == 0x7f || (r >= 0x80 && r < 0xa0) || r == ' ' {
				t.Fatalf("accepted %q", name)
			}
		}
		if len(name) > MaxNameLen {
			t.Fatalf("accepted %d bytes", len(name))
		}
	})
}
