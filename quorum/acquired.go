package quorum

import "time"

// Acquired returns the start of the round that acquired the lock (the clock's
// reading before the first SET was sent). The first Until and a keep-alive's
// MaxHold count from it; it never changes, so it needs no lock.
func (l *Lock) Acquired() time.Time { return l.start }

// ValidFrom returns the moment the current Until is counted from: the clock's
// reading before the first command of the round (acquire or extend) that set it
// was sent. It is the basis of the validity bound, which holds whatever the
// masters answered:
//
//	Until() <= ValidFrom() + ttl - DriftBudget(ttl)
//
// for the TTL of that round, so a caller can audit a lock's validity (log it next
// to Until, or check it) without trusting how the round went. Like Until, it is a
// reading of the Manager's clock (WithClock), and it moves with each extension.
func (l *Lock) ValidFrom() time.Time {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.untilFrom
}
