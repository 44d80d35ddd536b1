package human

import (
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
)

func TestDuration(t *testing.T) {
	tests := []struct {
		d    time.Duration
		want string
	}{
		{0, "0ms"},
		{950 * time.Millisecond, "950ms"},
		{time.Second, "1.0s"},
		{12345 * time.Millisecond, "12.3s"},
		{59999 * time.Millisecond, "59.9s"}, // cut, never "60.0s"
		{time.Minute, "1m00s"},
		{285250 * time.Millisecond, "4m45s"}, // the 285250ms
		{2*time.Hour + 3*time.Minute, "2h03m"},
		{50 * time.Hour, "2d02h"},
		{-1500 * time.Millisecond, "-1.5s"},
	}
	for _, tt := range tests {
		assert.Equal(t, tt.want, Duration(tt.d), "%v", tt.d)
	}
}

func TestLatency(t *testing.T) {
	tests := []struct {
		d    time.Duration
		want string
	}{
		{0, "0.0ms"},
		{300 * time.Microsecond, "0.3ms"},
		{9990 * time.Microsecond, "9.9ms"},
		{42 * time.Millisecond, "42ms"},
		{1500 * time.Millisecond, "1.5s"},
		{-215 * time.Microsecond, "-0.2ms"},
	}
	for _, tt := range tests {
		assert.Equal(t, tt.want, Latency(tt.d), "%v", tt.d)
	}
}
