package tui

import (
	"testing"
	"time"

	"github.com/redlock/redlock/admin"
	"github.com/stretchr/testify/assert"
)

// A revoked lock shows as such, with the time it is free, and who holds it is
// the revocation, not an unknown owner.
func TestRevokedLockShowsWhenItIsFree(t *testing.T) {
	m, src, _, _ := fixture(t, 160, 30, false)
	src.edit(func(s *Snapshot) {
		li := &s.Locks[0]
		li.State, li.Owner, li.Validity = admin.StateRevoked, nil, 0
		li.FreeAt = li.ObservedAt.Add(42 * time.Second)
	})
	started(t, m)
	view := m.View()
	assert.Contains(t, view, "⊘ revoked")
	assert.Contains(t, view, "revoked: free at")
	assert.Contains(t, view, "free in")
	assert.NotContains(t, view, "unknown owner")
}
