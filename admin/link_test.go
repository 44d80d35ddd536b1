package admin

import (
	"testing"

	"github.com/redlock/redlock/internal/adminlink"
	"github.com/redlock/redlock/quorum"
)

// TestLinkMatches checks that what package quorum lends through adminlink.Of
// and adminlink.Values has every method of side and valueCodec, with the same signatures: a change on either side
// fails here rather than when an Admin is made.
func TestLinkMatches(t *testing.T) {
	m, err := quorum.New([]quorum.Node{{Name: "a", Addr: "127.0.0.1:1"}})
	if err != nil {
		t.Fatal(err)
	}
	defer m.Close()
	if _, ok := adminlink.Of(m).(side); !ok {
		t.Fatalf("adminlink.Of returns %T, which does not implement admin's side", adminlink.Of(m))
	}
	if _, ok := adminlink.Values.(valueCodec); !ok {
		t.Fatalf("adminlink.Values is %T, which does not implement admin's valueCodec", adminlink.Values)
	}
	if New(m).Manager() != m {
		t.Fatal("New(m).Manager() is not m")
	}
}
