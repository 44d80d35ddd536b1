package hcl

import (
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestParseDuration(t *testing.T) {
	tests := []struct {
		in      string
		want    time.Duration
		wantErr string
	}{
		{in: "30s", want: 30 * time.Second},
		{in: "150ms", want: 150 * time.Millisecond},
		{in: "1m30s", want: 90 * time.Second},
		{in: " 2h ", want: 2 * time.Hour},
		{in: "-5s", want: -5 * time.Second},
		{in: "30", wantErr: `"30" needs a unit, e.g. "30s"`},
		{in: "0.5", wantErr: `needs a unit`},
		{in: "", wantErr: "empty string"},
		{in: "5 minutes", wantErr: "is not a duration"},
		{in: "5d", wantErr: "is not a duration"},
	}
	for _, tt := range tests {
		t.Run(tt.in, func(t *testing.T) {
			got, err := ParseDuration(tt.in)
			if tt.wantErr != "" {
				require.Error(t, err)
				assert.Contains(t, err.Error(), tt.wantErr)
				return
			}
			require.NoError(t, err)
			assert.Equal(t, tt.want, got)
		})
	}
}
