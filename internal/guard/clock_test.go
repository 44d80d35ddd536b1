package guard

import (
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
)

// A deadline survives the trip through CLOCK_MONOTONIC, and the conversion never
// makes it later.
func TestStampRoundTripNeverLater(t *testing.T) {
	for _, d := range []time.Duration{-time.Second, 0, 20 * time.Millisecond, 3 * time.Second, time.Hour} {
		want := time.Now().Add(d)
		got := unstamp(stamp(want))
		assert.False(t, got.After(want), "%v: %v later", d, got.Sub(want))
		assert.Less(t, want.Sub(got), 50*time.Millisecond, "%v: %v earlier", d, want.Sub(got))
	}
}
