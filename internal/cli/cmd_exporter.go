package cli

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"sync"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/promhttp"

	"github.com/redlock/redlock/internal/escape"
	"github.com/redlock/redlock/internal/health"
	"github.com/redlock/redlock/internal/human"
	"github.com/redlock/redlock/metrics"
	"github.com/redlock/redlock/quorum/observe"
	"github.com/redlock/redlock/topology"
)

// exporterArgs are the arguments of exporter.
type exporterArgs struct {
	common
	listen   string
	interval time.Duration
}

func (a *exporterArgs) flags(f *Flags) {
	f.String(&a.listen, "listen", "ADDR", "127.0.0.1:9452", "where to serve /metrics (default 127.0.0.1:9452: loopback only)")
	f.Duration(&a.interval, "interval", 5*time.Second, "time between polls (default 5s)").atLeast(positive)
	a.common.flags(f)
}

var _ = define(&Command{
	Name:     "exporter",
	Synopsis: "serve Prometheus metrics of the cluster, as seen from outside",
	About: `
Polls every master (health, as nodes does, and the live locks, as locks does)
every -interval and serves the last poll at http://ADDR/metrics: one poll feeds
every scrape, so scrapes put no load on Redis. A master going down shows within
one interval. -timeout bounds one poll. Metrics (their help is on /metrics):
` + exporterMetricsText(),
	Exits: []Exit{
		{0, "stopped by Ctrl-C"},
		{1, "cannot listen, or the first poll failed to run"},
		exitBadInput,
	},
}, withSession(runExporter))

func runExporter(ctx context.Context, env *Env, s *lockSession, a *exporterArgs) error {
	listen, interval := &a.listen, &a.interval
	prober, err := health.NewProber(s.cluster)
	if err != nil {
		return s.fail(ExitError, err)
	}
	defer prober.Close()

	col := &clusterCollector{cluster: s.cluster}
	reg := prometheus.NewRegistry()
	reg.MustRegister(col, buildInfo())
	ln, err := net.Listen("tcp", *listen)
	if err != nil {
		return s.fail(ExitError, fmt.Errorf("-listen %s: %w", *listen, err))
	}
	col.update(s.poll(ctx, prober, a.timeout))
	srv := serveMetrics(ln, reg)
	defer srv.Close()
	fmt.Fprintf(env.Stderr, "redlock exporter: serving http://%s/metrics, polling every %s\n", ln.Addr(), human.Duration(*interval))
	tick := time.NewTicker(*interval)
	defer tick.Stop()
	for {
		select {
		case <-ctx.Done():
			return nil
		case <-tick.C:
			col.update(s.poll(ctx, prober, a.timeout))
		}
	}
}

// serveMetrics serves reg's /metrics on ln until Close, and at / a small page
// linking to it.
func serveMetrics(ln net.Listener, reg *prometheus.Registry) *http.Server {
	mux := http.NewServeMux()
	mux.Handle("/metrics", promhttp.HandlerFor(reg, promhttp.HandlerOpts{Registry: reg}))
	mux.HandleFunc("/{$}", func(w http.ResponseWriter, _ *http.Request) {
		w.Header().Set("Content-Type", "text/html; charset=utf-8")
		_, _ = io.WriteString(w, indexPage)
	})
	srv := &http.Server{Handler: mux, ReadHeaderTimeout: 5 * time.Second}
	go func() { _ = srv.Serve(ln) }()
	return srv
}

// indexPage is what / serves: where the metrics are.
const indexPage = `<!doctype html>
<html><head><title>redlock metrics</title></head>
<body><h1>redlock</h1><p>Prometheus metrics: <a href="/metrics">/metrics</a></p></body></html>
`

// buildInfo is redlock_build_info{version,commit,goversion} 1.
func buildInfo() prometheus.Collector {
	v := buildVersion()
	return buildInfoCollector{v.Version, v.Commit, v.GoVersion}
}

// clusterPoll is one observation of the cluster: the masters' health and what
// the listing adds up to (lockMetrics), not the listing itself.
type clusterPoll struct {
	at       time.Time
	took     time.Duration
	nodes    []topology.NodeHealth
	locks    *lockMetrics
	inspectE error
}

// poll probes the masters and lists the locks concurrently. The listing is
// streamed into the lock gauges (exporter_metrics.go): a poll holds the
// listing's compact table while it runs and keeps only the gauges.
func (s *lockSession) poll(ctx context.Context, prober *health.Prober, timeout time.Duration) clusterPoll {
	t0 := time.Now()
	cctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	var p clusterPoll
	var wg sync.WaitGroup
	wg.Go(func() { p.nodes = prober.Probe(cctx) })
	p.locks, p.inspectE = s.lockMetrics(cctx, s.cluster)
	wg.Wait()
	p.at, p.took = time.Now(), time.Since(t0)
	return p
}

// clusterCollector exports the last poll.
type clusterCollector struct {
	cluster *topology.Cluster
	mu      sync.Mutex
	last    clusterPoll
}

func (c *clusterCollector) update(p clusterPoll) {
	c.mu.Lock()
	c.last = p
	c.mu.Unlock()
}

var (
	descMasterUp       = prometheus.NewDesc("redlock_master_up", "1 when the master answered the last poll.", []string{"master"}, nil)
	descMasterLatency  = prometheus.NewDesc("redlock_master_latency_seconds", "Round trip of the last poll's PING.", []string{"master"}, nil)
	descMasterUptime   = prometheus.NewDesc("redlock_master_uptime_seconds", "uptime_in_seconds of the master.", []string{"master"}, nil)
	descMasterQuar     = prometheus.NewDesc("redlock_master_quarantined", "1 while the master is in its restart quarantine.", []string{"master"}, nil)
	descMasterClock    = prometheus.NewDesc("redlock_master_clock_offset_seconds", "The master's TIME minus the exporter's clock.", []string{"master"}, nil)
	descMasterFindings = prometheus.NewDesc("redlock_master_findings", "Findings of the master by severity (acknowledged ones excluded).", []string{"master", "severity"}, nil)
	descQuorum         = prometheus.NewDesc("redlock_quorum", "Votes a lock needs: N/2+1.", nil, nil)
	descMasters        = prometheus.NewDesc("redlock_masters", "Declared masters.", nil, nil)
	descHealthy        = prometheus.NewDesc("redlock_masters_healthy", "Masters up, without an error finding, out of quarantine.", nil, nil)
	descLocks          = prometheus.NewDesc("redlock_locks", "Live locks by state (held, partial, contested, orphaned, revoked): each primitive counts once (a multi-name hold, a semaphore, a name's shared holders, an election).", []string{"state"}, nil)
	descPrimitives     = prometheus.NewDesc("redlock_primitives", "Live primitives by kind (lock, multi, semaphore, shared, leader).", []string{"kind"}, nil)
	descPermitsHeld    = prometheus.NewDesc("redlock_policy_permits_held", "Semaphore permits held on a quorum, by policy.", []string{"policy"}, nil)
	descSharedHolders  = prometheus.NewDesc("redlock_policy_shared_holders", "Shared holders on a quorum, by policy.", []string{"policy"}, nil)
	descElectionTerm   = prometheus.NewDesc("redlock_election_term", "The term of the election's current leader (absent when nobody leads).", []string{"election"}, nil)
	descElectionLead   = prometheus.NewDesc("redlock_election_leading", "1 when a candidate leads the election on a quorum, else 0.", []string{"election"}, nil)
	descPolicyLocks    = prometheus.NewDesc("redlock_policy_locks", "Held locks by policy.", []string{"policy"}, nil)
	descOldest         = prometheus.NewDesc("redlock_policy_oldest_lock_age_seconds", "Age of the oldest held lock of the policy (from its owner metadata).", []string{"policy"}, nil)
	descMinValidity    = prometheus.NewDesc("redlock_policy_min_validity_seconds", "Smallest validity left among the policy's held locks.", []string{"policy"}, nil)
	descRevokedFree    = prometheus.NewDesc("redlock_policy_revoked_free_timestamp_seconds", "When the last of the policy's revoked names (force-expire's lock-delay) is free at the latest (Unix time); absent when none is revoked.", []string{"policy"}, nil)
	descPolicyTTL      = prometheus.NewDesc("redlock_policy_ttl_seconds", "The TTL the topology gives the policy's locks.", []string{"policy"}, nil)
	descPollDuration   = prometheus.NewDesc("redlock_poll_duration_seconds", "How long the last poll took.", nil, nil)
	descPollTime       = prometheus.NewDesc("redlock_poll_timestamp_seconds", "When the last poll ended (Unix time).", nil, nil)
)

// exporterDescs are every metric the collector serves: Describe sends them, so
// a metric collected without being listed here fails the scrape, and the help
// lists them (exporterMetricsText).
var exporterDescs = []*prometheus.Desc{
	descMasterUp, descMasterLatency, descMasterUptime, descMasterQuar, descMasterClock, descMasterFindings,
	descQuorum, descMasters, descHealthy, descLocks, descPrimitives, descPermitsHeld, descSharedHolders,
	descElectionTerm, descElectionLead, descPolicyLocks, descOldest, descMinValidity, descPolicyTTL,
	descPollDuration, descPollTime,
}

// Describe implements prometheus.Collector: every metric it may serve.
func (c *clusterCollector) Describe(ch chan<- *prometheus.Desc) {
	for _, d := range exporterDescs {
		ch <- d
	}
}

// Collect implements prometheus.Collector: the last poll, no I/O.
func (c *clusterCollector) Collect(ch chan<- prometheus.Metric) {
	c.mu.Lock()
	p := c.last
	c.mu.Unlock()
	gauge := func(d *prometheus.Desc, v float64, labels ...string) {
		ch <- prometheus.MustNewConstMetric(d, prometheus.GaugeValue, v, labels...)
	}
	b2f := func(b bool) float64 {
		if b {
			return 1
		}
		return 0
	}
	healthy := 0
	for _, h := range p.nodes {
		gauge(descMasterUp, b2f(h.Reachable && !h.AuthFailed), h.Master)
		gauge(descMasterLatency, h.Latency.Seconds(), h.Master)
		gauge(descMasterUptime, h.Uptime.Seconds(), h.Master)
		gauge(descMasterQuar, b2f(p.at.Before(h.QuarantineUntil)), h.Master)
		gauge(descMasterClock, h.ClockOffset.Seconds(), h.Master)
		sev := map[string]float64{"error": 0, "warning": 0, "info": 0}
		for _, f := range h.Findings {
			if f.Acknowledged == "" {
				sev[f.Severity.String()]++
			}
		}
		for k, v := range sev {
			gauge(descMasterFindings, v, h.Master, k)
		}
		if h.Healthy(p.at) {
			healthy++
		}
	}
	gauge(descQuorum, float64(c.cluster.Quorum()))
	gauge(descMasters, float64(len(c.cluster.Masters)))
	gauge(descHealthy, float64(healthy))
	if p.locks != nil {
		p.locks.collect(gauge, c.cluster, p.at)
	}
	gauge(descPollDuration, p.took.Seconds())
	gauge(descPollTime, float64(p.at.UnixNano())/1e9)
}

// policyLabel is the metric label of a lock name: the glob of the policy that
// matches it, or metrics.DefaultPolicy. Never the name itself.
func policyLabel(c *topology.Cluster, name string) string {
	if p := c.PolicyFor(name); p.Match != "" {
		return p.Match
	}
	return metrics.DefaultPolicy
}

// metricsFlag is -metrics-addr of the long-running commands.
type metricsFlag struct {
	addr string
}

func (f *metricsFlag) flags(fl *Flags) {
	fl.String(&f.addr, "metrics-addr", "ADDR", "", "serve this process's metrics (Prometheus) at http://ADDR/metrics")
}

// start serves the process's metrics when -metrics-addr is set, and returns the
// observe.Observer to give the Manager (nil without the flag) and a stop function.
func (f *metricsFlag) start(env *Env, c *topology.Cluster) (observe.Observer, func(), error) {
	if f.addr == "" {
		return nil, func() {}, nil
	}
	reg := prometheus.NewRegistry()
	policy := func(name string) string { return metrics.DefaultPolicy }
	if c != nil {
		policy = func(name string) string { return policyLabel(c, name) }
	}
	obs, err := metrics.New(reg, policy)
	if err != nil {
		return nil, nil, err
	}
	reg.MustRegister(buildInfo())
	ln, err := net.Listen("tcp", f.addr)
	if err != nil {
		return nil, nil, fmt.Errorf("-metrics-addr %s: %w", f.addr, err)
	}
	srv := serveMetrics(ln, reg)
	fmt.Fprintf(env.Stderr, "redlock: serving metrics at http://%s/metrics\n", escape.Text(ln.Addr().String()))
	return obs, func() {
		if err := srv.Close(); err != nil && !errors.Is(err, http.ErrServerClosed) {
			fmt.Fprintf(env.Stderr, "redlock: metrics server: %v\n", err)
		}
	}, nil
}
