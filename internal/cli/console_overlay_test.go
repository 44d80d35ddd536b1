package cli

import (
	"testing"

	"github.com/stretchr/testify/assert"

	"github.com/redlock/redlock/quorum"
)

func rowsNamed(names ...string) []quorum.LockInfo {
	out := make([]quorum.LockInfo, len(names))
	for i, n := range names {
		out[i] = quorum.LockInfo{Name: n, State: quorum.StatePartial}
	}
	return out
}

func TestOverlay(t *testing.T) {
	fresh := func(names ...string) []quorum.LockInfo {
		out := rowsNamed(names...)
		for i := range out {
			out[i].State = quorum.StateHeld
		}
		return out
	}
	tests := []struct {
		name    string
		all     []quorum.LockInfo
		fresh   []quorum.LockInfo
		visible []string
		gone    []string
		want    []string // name, with * when the row is the fresh one
	}{
		{"nothing on screen", rowsNamed("a", "b"), nil, nil, nil, []string{"a", "b"}},
		{"fresh rows replace", rowsNamed("a", "b", "c"), fresh("b"), []string{"b"}, nil, []string{"a", "b*", "c"}},
		{"a row gone", rowsNamed("a", "b", "c"), fresh("c"), []string{"b", "c"}, []string{"b"}, []string{"a", "c*"}},
		{"gone off screen too", rowsNamed("a", "b", "c"), nil, nil, []string{"a", "c"}, []string{"b"}},
		{"a new row and a gone one", rowsNamed("a", "c", "e"), fresh("b", "d"), []string{"a", "b", "d"}, []string{"a", "e"}, []string{"b*", "c", "d*"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			gone := map[string]bool{}
			for _, n := range tt.gone {
				gone[n] = true
			}
			before := append([]quorum.LockInfo(nil), tt.all...)
			got := []string{}
			for _, li := range overlay(tt.all, tt.fresh, tt.visible, gone) {
				n := li.Name
				if li.State == quorum.StateHeld {
					n += "*"
				}
				got = append(got, n)
			}
			assert.Equal(t, tt.want, got)
			assert.Equal(t, before, tt.all, "the shared listing is not changed")
		})
	}
}
