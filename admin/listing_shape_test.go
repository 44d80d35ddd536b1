package admin

import (
	"reflect"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/redlock/redlock/internal/listing"
)

// TestListingShapesMatch checks that each exported listing type has the memory
// layout of the type package quorum builds it as (internal/listing), field for
// field and down through the fields' own types, so that listingOf and
// lockInfoOf reinterpret a listing rather than misread it.
func TestListingShapesMatch(t *testing.T) {
	for _, tc := range []struct{ ours, theirs reflect.Type }{
		{reflect.TypeFor[Listing](), reflect.TypeFor[shape]()},
		{reflect.TypeFor[LockInfo](), reflect.TypeFor[lockShape]()},
		{reflect.TypeFor[MasterView](), reflect.TypeFor[listing.MasterView]()},
		{reflect.TypeFor[MasterAnswer](), reflect.TypeFor[listing.MasterAnswer]()},
		{reflect.TypeFor[LockState](), reflect.TypeFor[listing.State]()},
	} {
		t.Run(tc.ours.Name(), func(t *testing.T) { sameLayout(t, tc.ours.Name(), tc.ours, tc.theirs) })
	}
}

// sameLayout fails t unless a and b have the same size, alignment and kind
// and, for structs, the same fields (names, offsets, layouts) in the same order;
// named types other than this package's and internal/listing's must be identical.
func sameLayout(t *testing.T, path string, a, b reflect.Type) {
	t.Helper()
	require.Equal(t, a.Kind(), b.Kind(), path)
	require.Equal(t, a.Size(), b.Size(), path)
	require.Equal(t, a.Align(), b.Align(), path)
	ours := func(t reflect.Type) bool {
		return t.PkgPath() == reflect.TypeFor[Listing]().PkgPath() || t.PkgPath() == reflect.TypeFor[listing.State]().PkgPath()
	}
	if a == b {
		return
	}
	for _, x := range []reflect.Type{a, b} {
		require.True(t, x.Name() == "" || ours(x), "%s: %s and %s differ", path, a, b)
	}
	switch a.Kind() {
	case reflect.Struct:
		require.Equal(t, a.NumField(), b.NumField(), path)
		for i := range a.NumField() {
			fa, fb := a.Field(i), b.Field(i)
			assert.Equal(t, fa.Name, fb.Name, path)
			assert.Equal(t, fa.Offset, fb.Offset, path+"."+fa.Name)
			sameLayout(t, path+"."+fa.Name, fa.Type, fb.Type)
		}
	case reflect.Slice, reflect.Pointer:
		sameLayout(t, path+"[]", a.Elem(), b.Elem())
	case reflect.String:
	default:
		t.Fatalf("%s: kind %s is not checked", path, a.Kind())
	}
}

// The exported states and NoExpiry are the values package quorum writes into a
// listing.
func TestListingStatesMatch(t *testing.T) {
	for ours, theirs := range map[LockState]listing.State{
		StateHeld:      listing.StateHeld,
		StatePartial:   listing.StatePartial,
		StateContested: listing.StateContested,
		StateOrphaned:  listing.StateOrphaned,
		StateRevoked:   listing.StateRevoked,
	} {
		assert.Equal(t, string(theirs), string(ours))
	}
	assert.Equal(t, listing.NoExpiry, NoExpiry)
}
