package quorum

import (
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestValueRoundTrip(t *testing.T) {
	at := time.UnixMilli(1_790_000_000_123)
	v, err := newValue(Owner{Host: "build-7", PID: 4242, Label: "nightly-backup", At: at})
	require.NoError(t, err)
	assert.True(t, strings.HasPrefix(v, "rl1."))
	assert.LessOrEqual(t, len(v), maxValueLen)
	got, err := ParseValue(v)
	require.NoError(t, err)
	assert.Len(t, got.Token, 27, "base64url of 20 bytes")
	assert.Equal(t, Owner{Host: "build-7", PID: 4242, Label: "nightly-backup", At: at}, got.Owner)
	assert.Equal(t, v, got.String())
	assert.Equal(t, "redlock", library(v))

	other, err := newValue(Owner{})
	require.NoError(t, err)
	assert.NotEqual(t, v, other, "fresh random token each time")
}

func TestValueBoundedTo256Bytes(t *testing.T) {
	long := strings.Repeat("é", 200) // multi-byte: truncation must keep valid UTF-8
	v, err := newValue(Owner{Host: long, Label: long, PID: 1 << 30, At: time.Now()})
	require.NoError(t, err)
	assert.LessOrEqual(t, len(v), maxValueLen)
	got, err := ParseValue(v)
	require.NoError(t, err)
	assert.LessOrEqual(t, len(got.Owner.Label), maxOwnerLabel)
	assert.NotContains(t, got.Owner.Label, "\uFFFD")
}

func TestParseValueRejects(t *testing.T) {
	tests := []struct{ name, in string }{
		{"empty", ""},
		{"redsync", "dGhpcyBpcyByZWRzeW5jISE="},
		{"wrong version", "rl2.AAAAAAAAAAAAAAAAAAAAAAAAAAA.e30"},
		{"short token", "rl1.AAAA.e30"},
		{"bad base64 token", "rl1.!!!!!!!!!!!!!!!!!!!!!!!!!!!.e30"},
		{"owner not base64", "rl1.AAAAAAAAAAAAAAAAAAAAAAAAAAA.***"},
		{"owner not json", "rl1.AAAAAAAAAAAAAAAAAAAAAAAAAAA.bm90IGpzb24"},
		{"too many parts", "rl1.AAAAAAAAAAAAAAAAAAAAAAAAAAA.e30.x"},
		{"too long", "rl1.AAAAAAAAAAAAAAAAAAAAAAAAAAA." + strings.Repeat("A", 300)},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := ParseValue(tt.in)
			assert.ErrorIs(t, err, ErrBadValue)
		})
	}
}

func TestLibraryByShape(t *testing.T) {
	tests := []struct{ value, want string }{
		{"dGhpcyBpcyByZWRzeW5jIQ==", "redsync"},
		{"0123456789abcdef0123456789abcdef", "node-redlock"},
		{"123e4567-e89b-12d3-a456-426614174000", "redlock.net/pottery"},
		{"rl1.garbage", "unknown"},
		{"hello", "unknown"},
		{"", "unknown"},
	}
	for _, tt := range tests {
		assert.Equal(t, tt.want, library(tt.value), tt.value)
	}
}

func TestRedactNeverShowsFullToken(t *testing.T) {
	v, err := newValue(Owner{Label: "cron"})
	require.NoError(t, err)
	parsed, err := ParseValue(v)
	require.NoError(t, err)
	r := redact(v)
	assert.NotContains(t, r, parsed.Token)
	assert.Contains(t, r, parsed.Token[:6])
	assert.Equal(t, "dGhpcy…", redact("dGhpcyBpcyByZWRzeW5jIQ=="))
	assert.Equal(t, "***", redact("abc"))
}

// FuzzParseValue: parsing never panics, accepted values round-trip, and whatever is
// accepted is within the size bound.
func FuzzParseValue(f *testing.F) {
	v, _ := newValue(Owner{Host: "h", PID: 1, Label: "o", At: time.UnixMilli(1)})
	for _, s := range []string{v, "", "rl1..", "rl1.AAAAAAAAAAAAAAAAAAAAAAAAAAA.", "rl1.AAAAAAAAAAAAAAAAAAAAAAAAAAA.e30", "dGhpcyBpcyByZWRzeW5jIQ=="} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		val, err := ParseValue(s)
		_ = redact(s)
		_ = library(s)
		if err != nil {
			return
		}
		if len(s) > maxValueLen {
			t.Fatalf("accepted a value of %d bytes", len(s))
		}
		again, err := ParseValue(val.String())
		if err != nil {
			t.Fatalf("re-parse of %q: %v", val.String(), err)
		}
		if again.Token != val.Token {
			t.Fatalf("token changed on round trip")
		}
	})
}
