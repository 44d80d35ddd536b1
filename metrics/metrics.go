// Package metrics exports what a quorum.Manager observes as Prometheus metrics: a
// observe.Observer backed by client_golang.
//
// Names follow Prometheus conventions (base units, _total counters, _seconds
// histograms). Labels are bounded: policy (the matching lock policy of the
// topology, or what the caller's policy function returns), master (the topology's
// master name), op, and small result/cause/kind enums. The raw lock name is never a
// label: it is unbounded.
package metrics

import (
	"sync"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/redlock/redlock/quorum"
	"github.com/redlock/redlock/quorum/observe"
)

// DefaultPolicy is the policy label of names that no policy matches.
const DefaultPolicy = "default"

// Observer is a observe.Observer that updates Prometheus metrics. It is safe for
// concurrent use; Observe only updates in-memory metrics.
type Observer struct {
	policy func(name string) string

	acquireDuration *prometheus.HistogramVec
	held            *prometheus.GaugeVec
	holdDuration    *prometheus.HistogramVec
	lost            *prometheus.CounterVec
	extend          *prometheus.CounterVec
	roundDuration   *prometheus.HistogramVec
	masterErrors    *prometheus.CounterVec
	quarantined     *prometheus.GaugeVec
	connDropped     *prometheus.CounterVec
	lateReplies     *prometheus.CounterVec

	mu         sync.Mutex
	quarTimers map[string]*time.Timer
}

// latencyBuckets suit lock rounds: 100µs to ~1.6s.
var latencyBuckets = prometheus.ExponentialBuckets(0.0001, 2, 15)

// New registers the metrics with reg and returns the Observer. policy maps a lock
// name to its policy label (nil: every name is DefaultPolicy); it must return a
// small, fixed set of values.
func New(reg prometheus.Registerer, policy func(name string) string) (*Observer, error) {
	if policy == nil {
		policy = func(string) string { return DefaultPolicy }
	}
	o := &Observer{policy: policy, quarTimers: map[string]*time.Timer{}}
	o.acquireDuration = prometheus.NewHistogramVec(prometheus.HistogramOpts{
		Name: "redlock_acquire_duration_seconds", Help: "Time from the call to the return of Acquire and TryAcquire, by result.",
		Buckets: prometheus.ExponentialBuckets(0.0005, 2, 16),
	}, []string{"policy", "result"})
	o.held = prometheus.NewGaugeVec(prometheus.GaugeOpts{
		Name: "redlock_held_locks", Help: "Locks this process holds now.",
	}, []string{"policy"})
	o.holdDuration = prometheus.NewHistogramVec(prometheus.HistogramOpts{
		Name: "redlock_hold_duration_seconds", Help: "How long locks were held, from acquisition to release or loss.",
		Buckets: prometheus.ExponentialBuckets(0.01, 2, 16),
	}, []string{"policy"})
	o.lost = prometheus.NewCounterVec(prometheus.CounterOpts{
		Name: "redlock_lost_total", Help: "Held locks lost before their release, by cause (expired, extension_cap, majority_lost).",
	}, []string{"policy", "cause"})
	o.extend = prometheus.NewCounterVec(prometheus.CounterOpts{
		Name: "redlock_extend_total", Help: "Extension rounds (Extend and keep-alive), by result.",
	}, []string{"policy", "result"})
	o.roundDuration = prometheus.NewHistogramVec(prometheus.HistogramOpts{
		Name: "redlock_master_round_duration_seconds", Help: "Latency of one master's answer to one lock command, by operation.",
		Buckets: latencyBuckets,
	}, []string{"master", "op"})
	o.masterErrors = prometheus.NewCounterVec(prometheus.CounterOpts{
		Name: "redlock_master_errors_total", Help: "Lock commands a master failed (error) or could not vote in (quarantined).",
	}, []string{"master", "kind"})
	o.quarantined = prometheus.NewGaugeVec(prometheus.GaugeOpts{
		Name: "redlock_master_quarantined", Help: "1 while this process counts no vote from the master (restart quarantine).",
	}, []string{"master"})
	o.connDropped = prometheus.NewCounterVec(prometheus.CounterOpts{
		Name: "redlock_master_connections_dropped_total", Help: "Connections of the lock commands to a master closed by this process (no reply within the node timeout, a reply out of step, a reset).",
	}, []string{"master"})
	o.lateReplies = prometheus.NewCounterVec(prometheus.CounterOpts{
		Name: "redlock_master_late_replies_total", Help: "Replies of a master that came after their round had given up, read and thrown away.",
	}, []string{"master"})
	for _, c := range []prometheus.Collector{o.acquireDuration, o.held, o.holdDuration, o.lost, o.extend, o.roundDuration, o.masterErrors, o.quarantined, o.connDropped, o.lateReplies} {
		if err := reg.Register(c); err != nil {
			return nil, err
		}
	}
	return o, nil
}

// Observe implements observe.Observer.
func (o *Observer) Observe(e observe.Event) {
	switch e.Kind {
	case observe.EventAcquire:
		p := o.policy(e.Name)
		o.acquireDuration.WithLabelValues(p, e.Result).Observe(e.Wait.Seconds())
		if e.Result == observe.ResultAcquired {
			o.held.WithLabelValues(p).Inc()
		}
	case observe.EventExtend:
		o.extend.WithLabelValues(o.policy(e.Name), e.Result).Inc()
	case observe.EventRelease:
		p := o.policy(e.Name)
		o.held.WithLabelValues(p).Dec()
		o.holdDuration.WithLabelValues(p).Observe(e.Held.Seconds())
	case observe.EventLost:
		p := o.policy(e.Name)
		o.held.WithLabelValues(p).Dec()
		o.holdDuration.WithLabelValues(p).Observe(e.Held.Seconds())
		o.lost.WithLabelValues(p, e.Cause).Inc()
	case observe.EventMasterRound:
		o.roundDuration.WithLabelValues(e.Master, e.Op).Observe(e.Latency.Seconds())
		switch e.Outcome {
		case quorum.OutcomeError.String(), quorum.OutcomeQuarantined.String():
			o.masterErrors.WithLabelValues(e.Master, e.Outcome).Inc()
		}
	case observe.EventQuarantine:
		o.quarantine(e.Master, e.Until)
	case observe.EventConnDropped:
		o.connDropped.WithLabelValues(e.Master).Inc()
	case observe.EventLateReply:
		o.lateReplies.WithLabelValues(e.Master).Inc()
	}
}

// quarantine sets the master's gauge to 1 until the quarantine ends.
func (o *Observer) quarantine(master string, until time.Time) {
	g := o.quarantined.WithLabelValues(master)
	g.Set(1)
	o.mu.Lock()
	defer o.mu.Unlock()
	if t := o.quarTimers[master]; t != nil {
		t.Stop()
	}
	o.quarTimers[master] = time.AfterFunc(time.Until(until), func() { g.Set(0) })
}
