package events

import (
	"time"

	"github.com/redlock/redlock/admin"
)

// lockClient runs rounds on every master of name, holds, extends, releases.
func (w *simWorld) lockClient(name string, short *bool) {
	var loop func()
	loop = func() {
		if w.now > w.cfg.duration {
			return
		}
		v := w.value()
		order := w.rng.Perm(w.cfg.masters)
		got := []int{}
		t := w.now
		for _, m := range order {
			t += time.Duration(w.rng.Int63n(int64(w.cfg.roundGap) + 1))
			w.at(t, func() {
				if w.setNX(m, name, v) {
					got = append(got, m)
				}
			})
		}
		t += w.cfg.roundGap
		w.at(t, func() {
			if len(got) < w.cfg.quorum {
				for _, m := range got {
					w.at(w.now+time.Duration(w.rng.Int63n(int64(w.cfg.roundGap)+1)), func() { w.del(m, name, v) })
				}
				w.at(w.now+w.dur(w.cfg.idle), loop)
				return
			}
			hold := w.dur(w.cfg.hold)
			if w.cfg.bursty {
				if *short {
					hold = time.Duration(w.rng.Int63n(int64(300 * time.Microsecond)))
				} else {
					hold = w.cfg.hold[1] + time.Duration(w.rng.Int63n(int64(w.cfg.hold[1])+1))
				}
				*short = !*short
			}
			end := w.now + hold
			if w.rng.Float64() < w.cfg.extendP {
				for e := w.now + w.cfg.ttl/4; e < end; e += w.cfg.ttl / 4 {
					for _, m := range w.rng.Perm(w.cfg.masters) {
						w.at(e+time.Duration(w.rng.Int63n(int64(w.cfg.roundGap)+1)), func() { w.extend(m, name, v) })
					}
				}
			} else if hold > w.cfg.ttl*3/4 {
				end = w.now + w.cfg.ttl*3/4
			}
			if w.rng.Float64() < w.cfg.forceP {
				fe := w.now + time.Duration(w.rng.Int63n(int64(hold)+1))
				w.at(fe, func() { w.forceExpire(name) })
			}
			if w.rng.Float64() < w.cfg.crashP {
				// Never released: its keys expire. Back after the TTL.
				w.at(w.now+w.cfg.ttl+w.dur(w.cfg.idle), loop)
				return
			}
			w.at(end, func() {
				t := w.now
				for _, m := range w.rng.Perm(w.cfg.masters) {
					if w.rng.Float64() < w.cfg.partialRelP {
						continue
					}
					t += time.Duration(w.rng.Int63n(int64(w.cfg.roundGap) + 1))
					w.at(t, func() { w.del(m, name, v) })
				}
				w.at(t+w.dur(w.cfg.idle), loop)
			})
		})
	}
	w.at(w.now+w.dur(w.cfg.idle), loop)
}

// plainClient takes the name on one master only (SET NX PX), and deletes it.
func (w *simWorld) plainClient(name string) {
	m := w.rng.Intn(w.cfg.masters)
	var loop func()
	loop = func() {
		if w.now > w.cfg.duration {
			return
		}
		v := w.value()
		if w.setNX(m, name, v) {
			w.at(w.now+w.dur(w.cfg.hold)/4, func() { w.del(m, name, v) })
		}
		w.at(w.now+w.dur(w.cfg.idle), loop)
	}
	w.at(w.now+w.dur(w.cfg.idle), loop)
}

// forceExpire deletes name on every master, whatever holds it, and announces it
// on the wake-up channel (admin.Admin.ForceExpire without a token: DEL and PUBLISH in
// one transaction on each master).
func (w *simWorld) forceExpire(name string) {
	t := w.now
	for _, m := range w.rng.Perm(w.cfg.masters) {
		t += time.Duration(w.rng.Int63n(int64(w.cfg.roundGap) + 1))
		w.at(t, func() {
			w.del(m, name, "")
			w.note(m, name, admin.ForceExpiredMessage, "", false)
		})
	}
}
