package schedstat

import (
	"math"
	"os"
	"runtime"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestParse(t *testing.T) {
	tests := []struct {
		line string
		want Thread
		ok   bool
	}{
		{"123 456 7\n", Thread{CPU: 123, RunDelay: 456, Slices: 7}, true},
		{"1 2", Thread{}, false},
		{"a 2 3", Thread{}, false},
		{"", Thread{}, false},
		{"1 2 3 4\n", Thread{CPU: 1, RunDelay: 2, Slices: 3}, true},
		{"99999999999999999999 2 3", Thread{}, false},
	}
	for _, tt := range tests {
		got, ok := parseBytes([]byte(tt.line))
		assert.Equal(t, tt.ok, ok, "parseBytes %q", tt.line)
		assert.Equal(t, tt.want, got, "parseBytes %q", tt.line)
	}
}

func TestThreads(t *testing.T) {
	_, err := Threads(math.MaxInt32)
	require.ErrorIs(t, err, ErrUnavailable)
	if runtime.GOOS != "linux" {
		t.Skip("schedstat is Linux's")
	}
	before, err := Threads(os.Getpid())
	require.NoError(t, err)
	require.NotEmpty(t, before)
	for end := time.Now().Add(20 * time.Millisecond); time.Now().Before(end); { // spin: CPU time grows
	}
	after, err := Threads(os.Getpid())
	require.NoError(t, err)
	var b, a time.Duration
	for _, th := range before {
		b += th.CPU
	}
	for _, th := range after {
		a += th.CPU
	}
	assert.Greater(t, a, b, "the threads ran")
}
