package quorum

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// A value carries the tag of the name it was taken for, which the listing's
// decoder keeps, and not the name itself (admin's TestBugTokenCarriesItsName
// checks that CheckTokenFor refuses it for another name).
func TestTokenCarriesItsNameTag(t *testing.T) {
	o := Owner{Host: "h", For: nameTag("tokA")}
	plain, err := newValue(o)
	require.NoError(t, err)
	var got Owner
	require.NoError(t, parseValueOwner(plain, &got))
	assert.Equal(t, nameTag("tokA"), got.For, "the tag survives the listing's fast decoder")
	v, err := parseValue(plain)
	require.NoError(t, err)
	assert.Equal(t, nameTag("tokA"), v.Owner.For, "and parseValue")
	assert.NotContains(t, plain, "tokA", "the name itself is not in the value")
}
