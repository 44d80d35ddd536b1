package admin_test

import (
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/redlock/redlock/admin"
	"github.com/redlock/redlock/quorum"
)

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
			v, err := admin.ParseValue(tt.in)
			assert.ErrorIs(t, err, admin.ErrBadValue)
			assert.Equal(t, admin.Value{}, v)
		})
	}
}

// TestValueRoundTrip: what String writes is the format of the values package
// quorum stores, and ParseValue reads it back.
func TestValueRoundTrip(t *testing.T) {
	at := time.UnixMilli(1_790_000_000_123)
	v := admin.Value{Token: "AAAAAAAAAAAAAAAAAAAAAAAAAAA", Owner: quorum.Owner{Host: "h", PID: 1, Label: "o", At: at, Kind: "sem", Count: 3}}
	s := v.String()
	assert.True(t, strings.HasPrefix(s, "rl1.AAAAAAAAAAAAAAAAAAAAAAAAAAA."), s)
	got, err := admin.ParseValue(s)
	require.NoError(t, err)
	assert.Equal(t, v, got)
	assert.Equal(t, "redlock", admin.Library(s))
}

// FuzzParseValue: parsing never panics, accepted values round-trip, and whatever is
// accepted is within the size bound.
func FuzzParseValue(f *testing.F) {
	v := admin.Value{Token: "AAAAAAAAAAAAAAAAAAAAAAAAAAA", Owner: quorum.Owner{Host: "h", PID: 1, Label: "o", At: time.UnixMilli(1)}}.String()
	for _, s := range []string{v, "", "rl1..", "rl1.AAAAAAAAAAAAAAAAAAAAAAAAAAA.", "rl1.AAAAAAAAAAAAAAAAAAAAAAAAAAA.e30", "dGhpcyBpcyByZWRzeW5jIQ=="} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		val, err := admin.ParseValue(s)
		_ = admin.Redact(s)
		_ = admin.Library(s)
		if err != nil {
			if !errors.Is(err, admin.ErrBadValue) {
				t.Fatalf("error %v does not match ErrBadValue", err)
			}
			return
		}
		if len(s) > 256 {
			t.Fatalf("accepted a value of %d bytes", len(s))
		}
		again, err := admin.ParseValue(val.String())
		if err != nil {
			t.Fatalf("re-parse of %q: %v", val.String(), err)
		}
		if again.Token != val.Token {
			t.Fatalf("token changed on round trip")
		}
	})
}
