package quorum

import "time"

// Acquired returns the start of the round that acquired the lock (the clock's
// reading before the first SET was sent). The first Until and a keep-alive's
// MaxHold count from it; it never changes, so it needs no lock.
func (l *Lock) Acquired() time.Time { return l.start }
