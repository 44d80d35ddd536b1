package events

import (
	"fmt"
	"time"

	"github.com/redlock/redlock/admin"
)

// simCheck feeds notes to m and checks every event against the truth of the notes
// delivered so far. It returns the violations (empty: none) by class and the events:
//   - "false": the event is not true of a quorum of masters by the time it is
//     printed (an acquisition that fewer than a quorum set, a release while a quorum
//     still holds the value, an extension fewer than a quorum made);
//   - "order": an acquisition reported twice, an end reported twice or without its
//     acquisition, an extension of a value not reported held;
//   - "masters": the event names a master that did not report it (the value was
//     another's there).
func simCheck(m *Merger, notes []*simNote, masters []string, lossy bool) (map[string][]string, []Event) {
	bad := map[string][]string{}
	var evs []Event
	type opKey struct {
		master int
		name   string
		op     string
		truth  string
	}
	seen := map[opKey]bool{}
	// holding: per master and name, the value it holds as delivered so far.
	holding := map[opKey]bool{}
	holders := func(name, v string) int {
		n := 0
		for i := range masters {
			if holding[opKey{i, name, "", v}] {
				n++
			}
		}
		return n
	}
	did := func(name, v string, ops ...string) int {
		n := 0
		for i := range masters {
			for _, op := range ops {
				if seen[opKey{i, name, op, v}] {
					n++
					break
				}
			}
		}
		return n
	}
	// didRead counts the masters that reported the end of a copy of v whose set
	// they reported with its value read.
	didRead := func(name, v string) int {
		n := 0
		for i := range masters {
			if seen[opKey{i, name, "read-end", v}] {
				n++
			}
		}
		return n
	}
	idx := map[string]int{}
	for i, ms := range masters {
		idx[ms] = i
	}
	// firstSet: when each value was first set on a master (its truth).
	firstSet := map[string]time.Duration{}
	for _, n := range notes {
		k := n.name + "\x00" + n.truth
		if n.op == "set" {
			if t, ok := firstSet[k]; !ok || n.gen < t {
				firstSet[k] = n.gen
			}
		}
	}
	type vstate struct{ acquired, ended int }
	cur := map[string]string{}
	vals := map[string]*vstate{}
	vs := func(v string) *vstate {
		s := vals[v]
		if s == nil {
			s = &vstate{}
			vals[v] = s
		}
		return s
	}
	kindOps := map[string][]string{
		Acquired: {"set"}, ChangedHands: {"set"}, Extended: {"expire"},
		Released: {"del"}, ForceExpired: {"del"}, Expired: {"expired"},
	}
	check := func(now time.Duration, out []Event) {
		for _, ev := range out {
			evs = append(evs, ev)
			desc := fmt.Sprintf("t=%v %s %s %q %v", now, ev.Kind, ev.Name, ev.Value, ev.Masters)
			if len(ev.Masters) < m.quorum {
				bad["false"] = append(bad["false"], "fewer masters than a quorum: "+desc)
			}
			if ev.Value == "" {
				if !lossy {
					bad["order"] = append(bad["order"], "no value: "+desc)
				}
				continue
			}
			for _, ms := range ev.Masters {
				ok := false
				for _, op := range kindOps[ev.Kind] {
					if seen[opKey{idx[ms], ev.Name, op, ev.Value}] {
						ok = true
					}
				}
				if !ok {
					bad["masters"] = append(bad["masters"], fmt.Sprintf("%s never reported %v of %q: %s", ms, kindOps[ev.Kind], ev.Value, desc))
				}
			}
			switch ev.Kind {
			case Acquired, ChangedHands, Extended:
				if n := did(ev.Name, ev.Value, kindOps[ev.Kind]...); n < m.quorum {
					bad["false"] = append(bad["false"], fmt.Sprintf("only %d masters reported it: %s", n, desc))
				}
			default:
				if n := holders(ev.Name, ev.Value); n >= m.quorum {
					bad["false"] = append(bad["false"], fmt.Sprintf("%d masters still hold it: %s", n, desc))
				}
			}
			key := ev.Name + "\x00" + ev.Value
			switch ev.Kind {
			case Acquired, ChangedHands:
				s := vs(key)
				s.acquired++
				if s.acquired > 1 {
					bad["order"] = append(bad["order"], "acquired twice: "+desc)
				}
				if p := cur[ev.Name]; p != "" && firstSet[ev.Name+"\x00"+p] > firstSet[key] {
					bad["invented"] = append(bad["invented"], fmt.Sprintf("%s over %q, which was set after it: %s", ev.Kind, p, desc))
				}
				if ev.Kind == ChangedHands {
					p := cur[ev.Name]
					if p == "" {
						bad["order"] = append(bad["order"], "changed hands from nothing: "+desc)
					} else {
						vs(ev.Name+"\x00"+p).ended++
						if n := didRead(ev.Name, p); n >= m.quorum {
							bad["invented"] = append(bad["invented"], fmt.Sprintf("changed hands, but %d masters reported the end of %q: %s", n, p, desc))
						}
					}
				} else if p := cur[ev.Name]; p != "" {
					bad["order"] = append(bad["order"], fmt.Sprintf("acquired while %q is reported held: %s", p, desc))
				}
				cur[ev.Name] = ev.Value
			case Released, Expired, ForceExpired:
				s := vs(key)
				if s.acquired == 0 && !lossy {
					bad["order"] = append(bad["order"], "ended without its acquisition: "+desc)
				}
				s.ended++
				if s.ended > 1 {
					bad["order"] = append(bad["order"], "ended twice: "+desc)
				}
				if cur[ev.Name] == ev.Value {
					cur[ev.Name] = ""
				}
			case Extended:
				if vs(key).acquired == 0 && !lossy {
					bad["order"] = append(bad["order"], "extended without its acquisition: "+desc)
				}
				if vs(key).ended > 0 {
					bad["order"] = append(bad["order"], "extended after its end: "+desc)
				}
			}
		}
	}
	t0 := time.Unix(1_700_000_000, 0)
	var last time.Duration
	for _, n := range notes {
		if n.op == "" {
			continue
		}
		// The CLI flushes every 50 ms.
		for f := (last/(50*time.Millisecond) + 1) * 50 * time.Millisecond; f < n.at; f += 50 * time.Millisecond {
			check(f, m.Flush(t0.Add(f)))
		}
		last = n.at
		switch n.op {
		case admin.ForceExpiredMessage:
		case "set":
			seen[opKey{n.master, n.name, "set", n.truth}] = true
			holding[opKey{n.master, n.name, "", n.truth}] = true
			seen[opKey{n.master, n.name, "read", n.truth}] = n.value != ""
		case "expire":
			if !n.own {
				seen[opKey{n.master, n.name, "expire", n.truth}] = true
			}
		default:
			seen[opKey{n.master, n.name, n.op, n.truth}] = true
			delete(holding, opKey{n.master, n.name, "", n.truth})
			if seen[opKey{n.master, n.name, "read", n.truth}] {
				seen[opKey{n.master, n.name, "read-end", n.truth}] = true
			}
		}
		check(n.at, m.Add(masters[n.master], n.name, n.op, n.value, t0.Add(n.at)))
	}
	check(last+time.Hour, m.Flush(t0.Add(last+time.Hour)))
	return bad, evs
}
