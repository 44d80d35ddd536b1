package quorum

import (
	"crypto/rand"
	"encoding/base64"
	"strings"
)

// Targeted wake-ups. On a release, only the head of a fair queue can take the lock,
// so waking every waiter (each then runs a fair round on every master, to learn that
// it is not the head) is wasted work on the masters and on the clients. When fair
// waiters are queued, release.lua (and fair_leave.lua, fair_unwind.lua when they
// free the lock) names the head instead: the message is the lock key, "\nnext " and
// the head's waiter id.
//
// A waiter id is "<random>.<tag>", where tag is its Manager's wake tag (random
// first: ties in the queue's order stay random). The Manager of a fair waiter
// listens on "<key>:wake:<tag>" besides "<key>:wake", and the message goes to the
// head's Manager alone when it listens there (no other client's process wakes up);
// otherwise (an older client's waiter, a subscription not in place yet) it goes to
// "<key>:wake". Either way only the waiter named wakes among a Manager's fair
// waiters; the others sleep until a later wake-up or their retry delay, which stays
// the fallback (a head that died or stopped is dropped from the queue when its
// heartbeat expires, by the next round of any waiter). Plain waiters and loss
// watches listen on "<key>:wake:any" besides "<key>:wake", where a message sent to
// the head's channel is copied: they wake on every release, as before. A message
// that names nobody (a plain release, an older client's release, a force-expire)
// wakes every waiter. A wake-up is a hint: fair_acquire.lua decides who takes the
// lock.

// wakeNext separates the lock key from the waiter ids a targeted wake-up names.
const wakeNext = "\nnext "

// ownWakeChannel returns the channel on which a release of key wakes the head of its
// fair queue when the head belongs to the Manager tagged tag.
func ownWakeChannel(key, tag string) string { return wakeChannel(key) + ":" + tag }

// anyWakeChannel returns the channel on which a release of key that wakes only the
// head of its fair queue also tells the waiters that are not fair ones.
func anyWakeChannel(key string) string { return wakeChannel(key) + ":any" }

// newWakeTag returns a Manager's random wake tag: 8 characters of base64url, which
// has no '.' (a fair waiter's id is a random part, '.' and the tag) and cannot be
// "any".
func newWakeTag() string {
	var b [6]byte
	_, _ = rand.Read(b[:]) // crypto/rand.Read never fails
	return base64.RawURLEncoding.EncodeToString(b[:])
}

// wakeNames returns the waiter ids a wake-up message names, space-separated, and
// whether it names any: a message that names nobody wakes every waiter.
func wakeNames(payload string) (string, bool) {
	i := strings.Index(payload, wakeNext)
	if i < 0 {
		return "", false
	}
	names := strings.TrimSpace(payload[i+len(wakeNext):])
	return names, names != ""
}

// named reports whether the space-separated list names id.
func named(names, id string) bool {
	for names != "" {
		var n string
		n, names, _ = strings.Cut(names, " ")
		if n == id {
			return true
		}
	}
	return false
}
