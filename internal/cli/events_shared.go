package cli

import (
	"context"
	"strings"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/redlock/redlock/internal/events"
)

// Shared holders in keyspace mode. A shared key is a sorted set, one member per
// holder (quorum/shared.go): its notifications (zadd, zrem, pexpire, del,
// expired) say that the set changed, not which holder came or went. On each, the
// master's members are read and compared with the ones it had: a new member is
// a "set" of that holder, a changed score an extension, a member gone a "del" (or
// "expired" when its score had passed). Each holder goes to the merger under a
// name of its own (the key's name, NUL, the holder's value), so that two holders
// are two acquisitions, each counted on the masters that hold it, and events
// name the key again when they are printed (sharedEventName).

// sharedMembers is one master's shared keys as last read: per name, each
// holder's value and expiry score; and the names it last saw set as strings
// (a lock's extension, an "expire" after its "set", is no shared key's).
type sharedMembers struct {
	sets    map[string]map[string]float64
	strings map[string]bool
}

func newSharedMembers() *sharedMembers {
	return &sharedMembers{sets: map[string]map[string]float64{}, strings: map[string]bool{}}
}

// mayBeShared reports whether a notification op may concern a sorted set: an
// op of one ("zadd", "zrem", ... with the z class on), or a generic op ("expire",
// "del", ...; with only "Kg$x" on, the shared scripts' only notifications) on a
// name not last seen set as a string. It records the strings it sees go and come.
func (sm *sharedMembers) mayBeShared(name, op string) bool {
	switch {
	case strings.HasPrefix(op, "z"):
		return true
	case op == "set":
		sm.strings[name] = true
		return false
	case sm.strings[name]:
		if op == "del" || op == "unlink" || op == "expired" || op == "evicted" {
			delete(sm.strings, name)
		}
		return false
	}
	return true
}

// notes reads name's members on c (its key is key) after op and returns the
// merger notes of the holders that came, moved or went since the last read;
// shared is false when name neither is nor was a shared key here (the op is
// then a string lock's, for the merger as it is).
func (sm *sharedMembers) notes(ctx context.Context, c *redis.Client, timeout time.Duration, master, key, name, op string, at time.Time) (out []keyspaceNote, shared bool) {
	rctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	cur := map[string]float64{}
	if zs, err := c.ZRangeWithScores(rctx, key, 0, -1).Result(); err == nil {
		for _, z := range zs {
			if m, ok := z.Member.(string); ok {
				cur[m] = z.Score
			}
		}
	}
	prev, was := sm.sets[name]
	if len(cur) == 0 && !was {
		return nil, false
	}
	note := func(member, op, value string) {
		out = append(out, keyspaceNote{master: master, name: name + "\x00" + member, op: op, value: value, at: at})
	}
	for m, score := range cur {
		was, ok := prev[m]
		switch {
		case !ok:
			note(m, "set", m)
			note(m, "pexpire", "") // as SET ... PX: the set's own expiry
		case was != score:
			note(m, "pexpire", "")
		}
	}
	now := float64(at.UnixMilli())
	for m, score := range prev {
		if _, ok := cur[m]; !ok {
			gone := "del"
			if score <= now || op == "expired" {
				gone = "expired"
			}
			note(m, gone, "")
		}
	}
	if len(cur) == 0 {
		delete(sm.sets, name)
	} else {
		sm.sets[name] = cur
	}
	return out, true
}

// sharedEventName gives an event of a shared holder (named by
// sharedMembers.notes) its key's name back.
func sharedEventName(ev events.Event) events.Event {
	if i := strings.IndexByte(ev.Name, 0); i >= 0 {
		ev.Name = ev.Name[:i]
	}
	return ev
}
