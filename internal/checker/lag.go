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
// seen through a timer and a goroutine of the test process, so on a loaded machine
// it can be seen late for no fault of the library. A Done seen later than its
// deadline + DoneSlack is then a violation unless the probe's own timer was stalled
// at least as long within the same window [deadline - lagProbeEvery, seen]
// (schedulingLag), counting a stall that began before the window and outlasted its
// start: a process that runs no timer for 160ms runs neither the probe's nor the
// lock's expiry, and both fire together when it resumes. The allowance is what the
// machine measurably did to this process at that moment, never a wider constant. A library that signals late on its own (a mutex
// held across the deadline) is caught whenever the machine was not starving the
// test at that moment. Mutual exclusion is not loosened: overlaps are still
// checked on the moment Done was seen.
func (r *Recorder) ProbeScheduling() (stop func()) {
	quit := make(chan struct{})
	done := make(chan struct{})
	go func() {
		defer close(done)
		t := time.NewTimer(lagProbeEvery)
		defer t.Stop()
		for {
			due := time.Now().Add(lagProbeEvery)
			t.Reset(lagProbeEvery)
			select {
			case <-quit:
				return
			case <-t.C:
			}
			s := lagSample{due: r.ms(due), late: max(0, time.Since(due))}
			r.mu.Lock()
			r.lags = append(r.lags, s)
			r.mu.Unlock()
		}
	}()
	return func() {
		select {
		case <-quit:
		default:
			close(quit)
		}
		<-done
	}
}

// schedulingLag returns how long the probe's timer was stalled within the window
// [from, to] ms: for each wake-up whose stall [due, due+late] overlaps the window,
// how far it reaches past the later of its due time and from. A wake-up due before
// the window that came only after the window began counts (the process had not run
// the probe's earlier timer by the time the lock's expiry was due); one that came
// before the window began does not. r.mu is held.
func (r *Recorder) schedulingLag(from, to float64) time.Duration {
	var worst time.Duration
	for _, s := range r.lags {
		fired := s.due + float64(s.late)/float64(time.Millisecond)
		if s.due > to || fired < from {
			continue
		}
		worst = max(worst, time.Duration((fired-max(s.due, from))*float64(time.Millisecond)))
	}
	return worst
}

// lateDone returns a violation for each Done seen later than its deadline plus
// DoneSlack plus the measured scheduling lag of that window. r.mu is held.
func (r *Recorder) lateDone() []Violation {
	var out []Violation
	window := float64(lagProbeEvery) / float64(time.Millisecond)
	for _, h := range r.holds {
		if h.DoneAt == nil {
			continue
		}
		late := time.Duration((*h.DoneAt - h.doneDue) * float64(time.Millisecond))
		if late <= DoneSlack {
			continue
		}
		lag := r.schedulingLag(h.doneDue-window, *h.DoneAt)
		if late <= DoneSlack+lag {
			continue
		}
		out = append(out, Violation{Kind: KindLateDone,
			Detail: fmt.Sprintf("%s: Done of %s seen %v after its deadline (the test process's timers were at most %v late then)",
				h.Owner, h.Lock, late.Round(time.Microsecond), lag)})
	}
	return out
}
