// Package admin administers and inspects the locks of a quorum.Manager: it
// lists what the masters hold (Inspect, InspectStream, a Scanner for large key
// spaces, Describe for a few names), groups the keys into the primitives that
// wrote them (Primitives), and acts on holds it does not own: force-expire and
// revocation, release and extension by token. ParseValue decodes the value a
// lock key holds (the token and who took it), with no Admin and no I/O.
//
// A listing describes, it does not guarantee: every lock may have changed hands
// by the time it is read, and nothing here takes a lock. The actions that
// delete or revoke compare what was seen (or the token given) on each master
// before they touch it, so another owner's key is never removed unless asked
// for by name alone (ForceExpire with no token); but they break the mutual
// exclusion of whoever held what they remove: that is what they are for.
//
// A lock user needs none of this: package quorum takes, extends and releases
// locks. An Admin costs nothing to make and shares the Manager's connections.
//
// The listing (Listing, LockInfo, MasterView, MasterAnswer and the LockState
// of each lock) is built by package quorum from what the masters answered and
// declared here, where it is read.
package admin

import (
	"fmt"

	"github.com/redlock/redlock/internal/adminlink"
	"github.com/redlock/redlock/quorum"
)

// Admin administers the locks of one quorum.Manager, on the same masters, key
// prefix, node timeout and drift budget. It is safe for concurrent use (a
// Scanner is not) and needs no Close: closing the Manager ends it.
type Admin struct {
	m    *quorum.Manager
	side side
}

// New returns the Admin of m, which must not be nil. It does no I/O.
func New(m *quorum.Manager) *Admin {
	if m == nil {
		panic("admin.New: nil Manager")
	}
	s, ok := adminlink.Of(m).(side)
	if !ok {
		// The link and side disagree: a build of mismatched packages, which
		// TestLinkMatches catches before a release.
		panic(fmt.Sprintf("admin: quorum's administration side %T lacks admin's methods", adminlink.Of(m)))
	}
	return &Admin{m: m, side: s}
}

// Manager returns the Manager a administers.
func (a *Admin) Manager() *quorum.Manager { return a.m }
