package checker

import (
	"fmt"
	"time"
)

// lagProbeEvery is the period of the scheduling probe's timer.
const lagProbeEvery = 5 * time.Millisecond

// lagSample is one wake-up of the scheduling probe: its timer was due at due (ms
// since the recorder's start) and fired late by late.
type lagSample struct {
	due  float64
	late time.Duration
}

// ProbeScheduling starts a goroutine that sleeps lagProbeEvery at a time and
// records how late each wake-up came, until stop is called (stop waits for it).
//
// The Done check uses it: a holder's Done is due at the lock's deadline and is
// seen through a timer and goroutines of the test process (the expiry's callback,
// the watcher), so on a loaded machine it can be seen late for no fault of the
// library. A Done seen later than its deadline + DoneSlack is then a violation
// unless the probe measured at least as much stall of this process in the same
// window [deadline - lagProbeEvery, seen] (schedulingLag), or the hold's own
// timer due at the deadline (Hold.TimerLate) fired at least as late, or one thread
// of the process waited on the machine's run queue at least as long in the window
// (sampleThreads): the runtime keeps timers and runnable goroutines per
// scheduler, and one scheduler's thread descheduled by the machine delays them
// while the probe's, on another, fire on time. A process that runs no
// timer for 160ms runs neither the probe's nor the lock's expiry, and both fire
// together when it resumes: the probe's wake-up due before the window counts for
// the part of its stall inside it. Each step on the way to Done (the timer, the
// callback closing Done, the watcher) can be hit by a stall of its own, so the
// stalls in the window add up. The allowance is what the machine measurably did to
// this process at that moment, never a wider constant. A library that signals late
// on its own (a mutex held across the deadline) is caught whenever the machine was
// not starving the test at that moment. Overlaps are checked on the moment Done was
// seen less the same measured stall (intervals): every client of a test shares its
// process, so one that acquired once the stall ended may be scheduled before the
// expired holder's Done; a hold never ends before its deadline that way, and a
// lateness no stall explains still overlaps.
func (r *Recorder) ProbeScheduling() (stop func()) {
	quit := make(chan struct{})
	done := make(chan struct{})
	unsubscribe := subscribeThreads(r)
	go func() {
		defer close(done)
		t := time.NewTimer(lagProbeEvery)
		defer t.Stop()
		for {
			due := time.Now().Add(lagProbeEvery)
			t.Reset(lagProbeEvery)
			r.mu.Lock()
			r.pending = &lagSample{due: r.ms(due)}
			r.mu.Unlock()
			stopping := false
			select {
			case <-quit:
				stopping = true
			case <-t.C:
			}
			s := lagSample{due: r.ms(due), late: max(0, time.Since(due))}
			r.mu.Lock()
			r.pending = nil
			if !stopping || s.late > 0 { // a wake-up stopped while late still measured a stall
				r.lags = append(r.lags, s)
			}
			r.mu.Unlock()
			if stopping {
				return
			}
		}
	}()
	return func() {
		select {
		case <-quit:
		default:
			close(quit)
		}
		<-done
		unsubscribe()
	}
}

// schedulingLag returns how long the probe's timer was stalled within the window
// [from, to] ms: the parts of the stalls [due, due+late] of its wake-ups inside the
// window, added up, including the wake-up still awaited (late until now, when it
// is due before now). A stall that began before the window counts for its part
// inside it; one that ended before the window began, or began after it ended, does
// not. r.mu is held.
func (r *Recorder) schedulingLag(from, to, now float64) time.Duration {
	var total float64
	stall := func(due, fired float64) {
		total += max(0, min(fired, to)-max(due, from))
	}
	for _, s := range r.lags {
		stall(s.due, s.due+float64(s.late)/float64(time.Millisecond))
	}
	if r.pending != nil {
		stall(r.pending.due, now)
	}
	return time.Duration(total * float64(time.Millisecond))
}

// stallBeforeDone returns how much of the lateness of h's Done (seen after its
// deadline) the measured stalls of this process explain: the scheduling lag of the
// window [deadline - lagProbeEvery, seen], or how late the hold's own timer fired,
// whichever is more, at most the lateness. 0 for a Done seen on time. r.mu is held.
func (r *Recorder) stallBeforeDone(h *Hold, now float64) time.Duration {
	late := time.Duration((*h.DoneAt - h.doneDue) * float64(time.Millisecond))
	if late <= 0 {
		return 0
	}
	return min(late, r.stallAround(h, now))
}

// stallAround returns the measured stall of this process that can explain the
// lateness of h's Done: the scheduling lag of the window [deadline -
// lagProbeEvery, seen], how late the hold's own timer fired, or how long one
// thread of the process waited on a run queue in that window, whichever is
// most. r.mu is held.
func (r *Recorder) stallAround(h *Hold, now float64) time.Duration {
	from := h.doneDue - float64(lagProbeEvery)/float64(time.Millisecond)
	return max(r.schedulingLag(from, *h.DoneAt, now), h.timerLate, r.threadStall(from, *h.DoneAt))
}

// lateDone returns a violation for each Done seen later than its deadline plus
// DoneSlack plus the measured scheduling lag of that window, or plus how late the
// test's own timer due at the same deadline fired (Hold.TimerLate), whichever is
// more. r.mu is held.
func (r *Recorder) lateDone() []Violation {
	var out []Violation
	now := r.ms(time.Now())
	for _, h := range r.holds {
		if h.DoneAt == nil {
			continue
		}
		late := time.Duration((*h.DoneAt - h.doneDue) * float64(time.Millisecond))
		if late <= DoneSlack {
			continue
		}
		if late <= DoneSlack+r.stallAround(h, now) {
			continue
		}
		from := h.doneDue - float64(lagProbeEvery)/float64(time.Millisecond)
		out = append(out, Violation{Kind: KindLateDone,
			Detail: fmt.Sprintf("%s: Done of %s seen %v after its deadline (the test process's timers were late by %v then, its own timer by %v; one of its threads waited on a run queue %v)",
				h.Owner, h.Lock, late.Round(time.Microsecond), r.schedulingLag(from, *h.DoneAt, now), h.timerLate, r.threadStall(from, *h.DoneAt))})
	}
	return out
}
