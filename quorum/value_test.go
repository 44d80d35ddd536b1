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
	got, err := parseValue(v)
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
	got, err := parseValue(v)
	require.NoError(t, err)
	assert.LessOrEqual(t, len(got.Owner.Label), maxOwnerLabel)
	assert.NotContains(t, got.Owner.Label, "\uFFFD")
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
	parsed, err := parseValue(v)
	require.NoError(t, err)
	r := redact(v)
	assert.NotContains(t, r, parsed.Token)
	assert.Contains(t, r, parsed.Token[:6])
	assert.Equal(t, "dGhpcy…", redact("dGhpcyBpcyByZWRzeW5jIQ=="))
	assert.Equal(t, "***", redact("abc"))
}
