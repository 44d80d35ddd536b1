package cli

import (
	"fmt"
	"time"

	"github.com/redlock/redlock/admin"
	"github.com/redlock/redlock/internal/escape"
	"github.com/redlock/redlock/internal/events"
)

// Events of the primitives: each lock event names the primitive its key belongs
// to (a semaphore's permit, an election's leadership, a multi-name hold's name),
// a primitive's records (a leader's term record, an exclusive waiter's marker)
// make no events of their own, and in poll mode shared holders come and go as
// events of their own.

// primitiveOfEvent says which primitive an event's key belongs to: its kind, its
// name and the permit slot (-1 when not a permit). skip is true for a
// primitive's record, which makes no event.
func primitiveOfEvent(ev events.Event) (kind admin.PrimitiveKind, name string, permit int, skip bool) {
	kc := admin.ClassifyKey(ev.Name, "")
	switch {
	case kc.Kind.Bookkeeping():
		return "", "", -1, true
	case kc.Kind == admin.KeyPermit && admin.OwnerPrimitive(ev.Owner) == admin.KindSemaphore && kc.Permit >= ev.Owner.Count:
		// A semaphore's value in a slot beyond the limit it declares: no
		// permit of it (a forged or stray key), shown as the key it is.
		return admin.KindLock, ev.Name, -1, false
	case kc.Kind == admin.KeyPermit:
		return admin.KindSemaphore, kc.Name, kc.Permit, false
	case kc.Kind == admin.KeyLeader:
		return admin.KindLeader, kc.Name, -1, false
	}
	switch kind := admin.OwnerPrimitive(ev.Owner); kind {
	case admin.KindMulti, admin.KindShared:
		return kind, ev.Name, -1, false
	}
	return admin.KindLock, ev.Name, -1, false
}

// annotate fills the primitive members of an event line; false for an event
// that is not shown.
func (out *eventJSON) annotate(ev events.Event) bool {
	kind, name, permit, skip := primitiveOfEvent(ev)
	if skip {
		return false
	}
	out.Kind, out.Primitive = string(kind), name
	if permit >= 0 {
		out.Permit = &permit
	}
	return true
}

// primitiveText is the primitive of an event line for humans: " (permit 1 of
// semaphore sem)", " (leadership of crond)", "" for a plain lock.
func (out *eventJSON) primitiveText() string {
	switch admin.PrimitiveKind(out.Kind) {
	case admin.KindSemaphore:
		return fmt.Sprintf(" (permit %d of semaphore %s)", *out.Permit, escape.Line(out.Primitive, 60))
	case admin.KindLeader:
		return " (leadership of " + escape.Line(out.Primitive, 60) + ")"
	case admin.KindMulti:
		return " (one name of a multi-name hold)"
	case admin.KindShared:
		return " (shared holder)"
	}
	return ""
}

// sharedEvents compares the shared holders of two polls, read at prevAt and now:
// a holder held on a quorum that was not is acquired, one that is gone is
// released, or expired when its validity had ended by now. Events name the
// shared key.
func sharedEvents(prev, cur []admin.Primitive, prevAt, now time.Time) []events.Event {
	holders := func(prims []admin.Primitive) map[string]map[string]admin.SharedHolder {
		out := map[string]map[string]admin.SharedHolder{}
		for _, p := range prims {
			if p.Kind != admin.KindShared {
				continue
			}
			hs := map[string]admin.SharedHolder{}
			for _, h := range p.Holders {
				if h.Validity > 0 {
					hs[h.Value] = h
				}
			}
			out[p.Name] = hs
		}
		return out
	}
	before, after := holders(prev), holders(cur)
	var out []events.Event
	ev := func(kind, name string, h admin.SharedHolder) events.Event {
		masters := h.Masters
		if masters == nil {
			masters = []string{}
		}
		return events.Event{At: now, Kind: kind, Name: name, Value: h.Value, Owner: h.Owner, Library: admin.Library(h.Value), Masters: masters}
	}
	for name, hs := range after {
		for v, h := range hs {
			if _, ok := before[name][v]; !ok {
				out = append(out, ev(events.Acquired, name, h))
			}
		}
	}
	for name, hs := range before {
		for v, h := range hs {
			if _, ok := after[name][v]; !ok {
				kind := events.Released
				if !now.Before(prevAt.Add(h.Validity)) {
					kind = events.Expired
				}
				out = append(out, ev(kind, name, h))
			}
		}
	}
	return out
}
