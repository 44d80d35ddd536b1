package events

import (
	"container/heap"
	"fmt"
	"math/rand"
	"slices"
	"time"

	"github.com/redlock/redlock/admin"
)

// A simulated cluster for attacking the Merger: lock clients, plain SET NX PX
// clients, extensions, expiries and force-expires act on simulated masters, whose
// notifications reach the merger late, each master's in order, some values unread
// (a GET after the key changed, a GET that failed) and some notifications lost.
// Every note carries the truth (the value the operation concerned), which the
// merger never sees: the checker compares each event with it.

// simNote is one master's notification as the merger gets it, with the truth.
type simNote struct {
	master int
	name   string
	op     string // set, expire, del, expired, force-expired
	truth  string // the value set, extended or deleted ("" for force-expired)
	value  string // what the merger is given (set: truth or "")
	own    bool   // an expire that is the set's own (SET ... PX)
	gen    time.Duration
	at     time.Duration // delivery
	seq    int
}

// simCfg shapes one simulated run.
type simCfg struct {
	masters, quorum int
	names           int
	clients         int              // lock clients per name
	plain           int              // single-master SET NX PX clients per name
	hold            [2]time.Duration // a lock's hold, min and max
	idle            [2]time.Duration // a client's pause between tries
	roundGap        time.Duration    // between a round's commands to two masters
	ttl             time.Duration
	extendP         float64          // chance a hold extends (each quarter TTL)
	crashP          float64          // chance a holder never releases (its keys expire)
	partialRelP     float64          // chance a release misses a master (its copy expires)
	forceP          float64          // chance per hold that an admin force-expires it
	forceIdleP      float64          // chance per cycle that an admin force-expires a free name
	lag             [2]time.Duration // per master base delivery lag, min and max
	lagJitter       time.Duration
	stall           float64 // chance a master's delivery stalls
	stallLen        time.Duration
	unreadP         float64       // chance a set's GET fails (besides a change before it)
	getDelay        time.Duration // from a set's delivery to its GET on the master
	loseP           float64       // chance a master loses a stretch of notifications
	duration        time.Duration
	bursty          bool // a short hold followed by a long one
	readEarly       bool // values are read right after the set, whatever the delivery's lag
}

type simKey struct {
	value string
	exp   time.Duration // 0: none
}

type simMaster struct {
	keys  map[string]*simKey
	notes []*simNote
}

type simWorld struct {
	cfg     simCfg
	rng     *rand.Rand
	now     time.Duration
	masters []*simMaster
	seq     int
	vals    int
	// expiries pending: a key whose TTL ended is expired (with a notification) at
	// its deadline plus a little, or earlier when a command touches it.
	q simQueue
}

type simTask struct {
	at time.Duration
	fn func()
	i  int
}

type simQueue []*simTask

func (q simQueue) Len() int { return len(q) }
func (q simQueue) Less(i, j int) bool {
	return q[i].at < q[j].at || (q[i].at == q[j].at && q[i].i < q[j].i)
}
func (q simQueue) Swap(i, j int) { q[i], q[j] = q[j], q[i] }
func (q *simQueue) Push(x any)   { *q = append(*q, x.(*simTask)) }
func (q *simQueue) Pop() any     { o := *q; n := len(o); x := o[n-1]; *q = o[:n-1]; return x }
func (w *simWorld) at(d time.Duration, fn func()) {
	w.seq++
	heap.Push(&w.q, &simTask{at: d, fn: fn, i: w.seq})
}

func (w *simWorld) note(m int, name, op, truth string, own bool) {
	w.masters[m].notes = append(w.masters[m].notes, &simNote{master: m, name: name, op: op, truth: truth, own: own, gen: w.now})
}

func (w *simWorld) dur(r [2]time.Duration) time.Duration {
	if r[1] <= r[0] {
		return r[0]
	}
	return r[0] + time.Duration(w.rng.Int63n(int64(r[1]-r[0])))
}

// touch expires key on master m if its TTL ended (a command looking it up does).
func (w *simWorld) touch(m int, name string) *simKey {
	k := w.masters[m].keys[name]
	if k != nil && k.exp > 0 && k.exp <= w.now {
		delete(w.masters[m].keys, name)
		w.note(m, name, "expired", k.value, false)
		return nil
	}
	return k
}

func (w *simWorld) setNX(m int, name, value string) bool {
	if w.touch(m, name) != nil {
		return false
	}
	w.masters[m].keys[name] = &simKey{value: value, exp: w.now + w.cfg.ttl}
	w.note(m, name, "set", value, false)
	w.note(m, name, "expire", value, true)
	exp := w.now + w.cfg.ttl
	w.at(exp+time.Duration(w.rng.Int63n(int64(20*time.Millisecond))), func() {
		if k := w.masters[m].keys[name]; k != nil && k.exp > 0 && k.exp <= w.now {
			w.touch(m, name)
		}
	})
	return true
}

func (w *simWorld) del(m int, name, value string) bool {
	k := w.touch(m, name)
	if k == nil || (value != "" && k.value != value) {
		return false
	}
	delete(w.masters[m].keys, name)
	w.note(m, name, "del", k.value, false)
	return true
}

func (w *simWorld) extend(m int, name, value string) {
	k := w.touch(m, name)
	if k == nil || k.value != value {
		return
	}
	k.exp = w.now + w.cfg.ttl
	w.note(m, name, "expire", value, false)
	exp := k.exp
	w.at(exp+time.Duration(w.rng.Int63n(int64(20*time.Millisecond))), func() {
		if k := w.masters[m].keys[name]; k != nil && k.exp > 0 && k.exp <= w.now {
			w.touch(m, name)
		}
	})
}

func (w *simWorld) value() string {
	w.vals++
	return fmt.Sprint("v", w.vals)
}

// deliver sets each note's delivery time and unread values, drops lost stretches,
// and returns every master's notes merged in delivery order.
func (w *simWorld) deliver() []*simNote {
	var all []*simNote
	for mi, ms := range w.masters {
		base := w.dur(w.cfg.lag)
		last := time.Duration(0)
		losing := time.Duration(-1)
		for i, n := range ms.notes {
			d := n.gen + base + time.Duration(w.rng.Int63n(int64(w.cfg.lagJitter)+1))
			if w.rng.Float64() < w.cfg.stall {
				d += w.cfg.stallLen
			}
			d = max(d, last)
			last = d
			n.at = d
			if w.rng.Float64() < w.cfg.loseP {
				losing = n.gen + w.cfg.stallLen
			}
			if n.gen <= losing {
				n.op = "" // lost
				continue
			}
			if n.op == "set" {
				// The reader GETs after the delivery: the value is read only when nothing
				// changed the key since the set on this master.
				get := d + w.cfg.getDelay
				if w.cfg.readEarly {
					// The reader read the value at once and was then held up before it
					// passed the note on (the events process descheduled).
					get = n.gen + time.Duration(w.rng.Int63n(int64(4*w.cfg.getDelay)+1))
				}
				n.value = n.truth
				for _, x := range ms.notes[i+1:] {
					if x.gen > get {
						break
					}
					if x.name == n.name && x.op != "expire" && x.op != admin.ForceExpiredMessage {
						n.value = ""
						break
					}
				}
				if w.rng.Float64() < w.cfg.unreadP {
					n.value = ""
				}
			}
			_ = mi
			all = append(all, n)
		}
	}
	slices.SortStableFunc(all, func(a, b *simNote) int {
		if a.at != b.at {
			return int(a.at - b.at)
		}
		return a.master - b.master
	})
	for i, n := range all {
		n.seq = i
	}
	return all
}

func runSim(cfg simCfg, seed int64) []*simNote {
	w := &simWorld{cfg: cfg, rng: rand.New(rand.NewSource(seed))}
	for range cfg.masters {
		w.masters = append(w.masters, &simMaster{keys: map[string]*simKey{}})
	}
	for i := range cfg.names {
		name := fmt.Sprint("n", i)
		if i == 1 {
			name = "a:b*c?[x]" // glob characters and colons
		}
		for range cfg.clients {
			short := w.rng.Intn(2) == 0
			w.lockClient(name, &short)
		}
		for range cfg.plain {
			w.plainClient(name)
		}
		if cfg.forceIdleP > 0 {
			var loop func()
			loop = func() {
				if w.now > cfg.duration {
					return
				}
				if w.rng.Float64() < cfg.forceIdleP {
					w.forceExpire(name)
				}
				w.at(w.now+w.dur(cfg.idle)*4, loop)
			}
			w.at(w.dur(cfg.idle), loop)
		}
	}
	for w.q.Len() > 0 {
		t := heap.Pop(&w.q).(*simTask)
		w.now = t.at
		t.fn()
	}
	return w.deliver()
}

// simBase is the cluster of the attack's scenarios: five masters, two lock clients
// on one name, holds of 1-50 ms, rounds whose commands reach the masters 0-100 us
// apart, notifications 0.1-2 ms late.
func simBase() simCfg {
	ms := time.Millisecond
	return simCfg{masters: 5, quorum: 3, names: 1, clients: 2, hold: [2]time.Duration{ms, 50 * ms}, idle: [2]time.Duration{0, 5 * ms},
		roundGap: 100 * time.Microsecond, ttl: 2 * time.Second, lag: [2]time.Duration{100 * time.Microsecond, 2 * ms}, lagJitter: 500 * time.Microsecond,
		getDelay: 200 * time.Microsecond, duration: 3 * time.Second}
}

// simScenarios change simBase.
var simScenarios = map[string]func(c *simCfg){
	"contention":      func(c *simCfg) {},
	"one client":      func(c *simCfg) { c.clients = 1 },
	"one slow client": func(c *simCfg) { c.clients = 1; c.idle = [2]time.Duration{5 * time.Millisecond, 20 * time.Millisecond} },
	"quick then long": func(c *simCfg) { c.bursty = true; c.hold = [2]time.Duration{time.Millisecond, 300 * time.Millisecond} },
	"lagging masters": func(c *simCfg) { c.lag = [2]time.Duration{0, 20 * time.Millisecond} },
	"lagging delivery, early reads": func(c *simCfg) {
		c.lag = [2]time.Duration{0, 20 * time.Millisecond}
		c.readEarly = true
	},
	"quick then long, lagging": func(c *simCfg) {
		c.bursty = true
		c.clients = 1
		c.hold = [2]time.Duration{time.Millisecond, 1200 * time.Millisecond}
		c.lag = [2]time.Duration{0, 20 * time.Millisecond}
	},
	"extensions": func(c *simCfg) {
		c.extendP = 0.5
		c.ttl = 200 * time.Millisecond
		c.hold = [2]time.Duration{time.Millisecond, 400 * time.Millisecond}
	},
	"expiries":             func(c *simCfg) { c.crashP = 0.2; c.ttl = 100 * time.Millisecond },
	"partial":              func(c *simCfg) { c.partialRelP = 0.3; c.ttl = 100 * time.Millisecond },
	"force-expire held":    func(c *simCfg) { c.forceP = 0.3 },
	"force-expire free":    func(c *simCfg) { c.forceIdleP = 0.3; c.clients = 1 },
	"stalls":               func(c *simCfg) { c.stall = 0.01; c.stallLen = 300 * time.Millisecond },
	"single-master SET NX": func(c *simCfg) { c.plain = 2 },
	"failed GETs":          func(c *simCfg) { c.unreadP = 0.3 },
	"three names":          func(c *simCfg) { c.names = 3 },
	"three masters":        func(c *simCfg) { c.masters = 3; c.quorum = 2 },
}
