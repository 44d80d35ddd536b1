package quorum

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// A value carries the tag of the name it was taken for; CheckTokenFor refuses
// it for another name and passes values without a tag.
func TestBugTokenCarriesItsName(t *testing.T) {
	value := func(name string, o Owner) string {
		t.Helper()
		o.For = nameTag(name)
		v, err := newValue(o)
		require.NoError(t, err)
		return v
	}
	plain := value("tokA", Owner{Host: "h"})
	multi := value("a b", Owner{Kind: "multi", Count: 2})
	old := Value{Token: "AAAAAAAAAAAAAAAAAAAAAAAAAAA", Owner: Owner{Host: "h"}}.String()
	tests := []struct {
		name  string
		token string
		names []string
		other bool
	}{
		{"own name", plain, []string{"tokA"}, false},
		{"another name", plain, []string{"tokB"}, true},
		{"multi in any order", multi, []string{"b", "a"}, false},
		{"multi with other names", multi, []string{"a", "c"}, true},
		{"multi with fewer names: the hold says", multi, []string{"a"}, false},
		{"no tag: an earlier version", old, []string{"anything"}, false},
		{"not a value of this package", "foreign-value", []string{"x"}, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			err := CheckTokenFor(tt.token, tt.names...)
			if tt.other {
				assert.ErrorIs(t, err, ErrOtherLock)
			} else {
				assert.NoError(t, err)
			}
		})
	}
	var o Owner
	require.NoError(t, parseValueOwner(plain, &o))
	assert.Equal(t, nameTag("tokA"), o.For, "the tag survives the listing's fast decoder")
	assert.NotContains(t, plain, "tokA", "the name itself is not in the value")
}
