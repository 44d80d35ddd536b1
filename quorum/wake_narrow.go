package quorum

// Wake-ups from fewer masters. A release that can let a waiter in deleted the
// holder's key on at least a quorum Q of the N masters (the holder won it there), so
// a waiter that listens on N-Q+1 of them hears at least one master of that quorum:
// any Q masters and any N-Q+1 masters share one. A channel on which only fair
// waiters wait (the lock's channel and the Manager's own, wake_target.go) is
// therefore listened to on N-Q+1 masters, the narrow ones: a handoff then costs the
// head's process N-Q+1 messages instead of N (3 instead of 5), and the masters
// where nobody listens publish to no one. A channel on which some waiter wakes on
// every message (a plain waiter, a loss watch, an election) is listened to on every
// master, as before (wide), and keeps that while it lingers.
//
// A round writes its command to the masters in reverse order (wire.Pipes.Round), so
// a release reaches the narrow masters last: when one of them wakes the head, the
// release is already in the other masters' sockets, ahead of the head's round, even
// when the holder's thread stopped between two writes (preempted by the master it
// had just woken); the head's round is not refused there for a release still to
// come (TestBugFairHeadWokenBeforeTheReleaseWasSentToTheOthers).
//
// The narrow masters are the first N-Q+1 in the Manager's order whose subscription
// connection has not failed since it last answered; when one fails, its channels
// move to the next master, and move back once it answers again (every Manager of a
// name lists the masters in the same order in practice, so the masters where nobody
// listens are the same for all). What is not guaranteed: a wake-up published only
// where a waiter does not listen is not heard, and the waiter takes the lock after
// its retry delay, as with any lost wake-up. That happens when a master fails
// between the holder's acquisition and its release, until the hub notices (a
// broken connection: at once; a master that hangs: never: a hung master cannot
// publish the release, and when it is the only listened master of the holder's
// quorum (a second fault: a master missing when the holder acquired), the release
// goes unheard), and for the clean-up of a failed round that set the key only where
// the head does not listen. Each costs one retry delay, never a wrong grant.

// narrowCount is the number of masters a narrow channel is listened to on: N-Q+1.
func (h *wakeHub) narrowCount() int {
	return max(len(h.subs)-h.m.quorum+1, 1)
}

// narrowSubs returns the narrow masters: the first narrowCount masters whose
// connection has not failed, completed in order by failed ones when too few are
// left. The caller holds h.mu (it orders the changes of failed with the kicks).
func (h *wakeHub) narrowSubs() map[*nodeSub]bool {
	k := h.narrowCount()
	out := make(map[*nodeSub]bool, k)
	for _, pass := range []bool{false, true} {
		for _, s := range h.subs {
			if len(out) == k {
				return out
			}
			if s.failed.Load() == pass {
				out[s] = true
			}
		}
	}
	return out
}

// answered records that s's master answered again after its connection failed:
// narrow channels move back to it when it is one of the first masters.
func (h *wakeHub) answered(s *nodeSub) {
	h.mu.Lock()
	moved := s.failed.Swap(false)
	h.mu.Unlock()
	if moved {
		h.kickAll()
	}
}

// anyWakesOnAll reports whether a waiter of set wakes on every message: the
// channel is then listened to on every master.
func anyWakesOnAll(set map[*waiter]struct{}) bool {
	for w := range set {
		if w.id == "" {
			return true
		}
	}
	return false
}
