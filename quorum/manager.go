package quorum

import (
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"net"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/redlock/redlock/internal/wire"
	"github.com/redlock/redlock/quorum/observe"
)

const (
	opAcquire     = "acquire"
	opExtend      = "extend"
	opRelease     = "release"
	opForceExpire = "force-expire"
	opConnect     = "connect"
)

// Node is one independent Redis master. Name is how errors and reports refer to it.
type Node struct {
	Name     string
	Addr     string
	Username string
	// Password never appears in errors or reports.
	Password string
	DB       int
	TLS      *tls.Config
	// Dialer, when set, replaces the TCP dialer (tests route connections through a
	// fault-injecting proxy with it).
	Dialer func(ctx context.Context, network, addr string) (net.Conn, error)
}

// Manager takes locks on a fixed set of independent Redis masters with the Redlock
// algorithm. It is safe for concurrent use, and meant to be shared: the acquire,
// extend and release commands of every goroutine go out pipelined on one
// connection per master, so many locks taken at once cost few system calls. Its
// guarantees hold under Redlock's assumptions: masters fail independently, keep
// their data across restarts (or the restart quarantine is on), and clocks drift
// less than the drift budget.
type Manager struct {
	cfg    config
	nodes  []*node
	quorum int
	owner  Owner

	// tr sends the hot commands (hot.go): the pipelined transport of package
	// wire, one connection per master shared by every round in flight.
	tr    wire.Rounder
	calls chan *call // the hot rounds' memory, reused (hot.go)
	// reads sends Lock.Verify's reads (verify_read.go): pipes of their own, so
	// that a read never waits behind a write a master holds back (CLIENT PAUSE
	// WRITE, a FAILOVER) on tr's connection.
	reads wire.Rounder
	votes votes // the acquisition rounds' ends at a quorum (at_quorum.go)

	wakeMu     sync.Mutex
	wake       *wakeHub // started by the first waiter (wake.go)
	wakeClosed bool
	wakeTag    string       // names the Manager's own wake-up channels (wake.go)
	loss       *lossWatcher // started by the first watched lock (track.go)

	// bg counts the Manager's background clean-ups (fair.go's stragglers); Close
	// waits for them, and none starts after Close.
	bgMu     sync.Mutex
	bgClosed bool
	bg       sync.WaitGroup
	// life ends when Close has waited cleanUpGrace: a failed round's clean-up of
	// a master that did not answer (cleanUp) gives up then rather than hold
	// Close up.
	life    context.Context
	endLife context.CancelFunc
}

// node is one master and its restart-quarantine state.
type node struct {
	name   string
	client *redis.Client
	tls    *tls.Config // the node's TLS configuration with the server name set

	mu         sync.Mutex
	runID      string
	quarUntil  time.Time // no vote before this time
	connectErr error     // INFO refused while the quarantine needs it

	// master is how the transport reaches the node; the listings' connections
	// (list_conn.go) are dialled and opened the same way.
	master wire.Master
	list   listConns // list_conn.go
}

// New returns a Manager over nodes. It checks the options and the node list (not
// empty, names unique and non-empty, addresses unique) and does no I/O: connections
// are made on first use.
func New(nodes []Node, opts ...Option) (*Manager, error) {
	cfg := defaultConfig()
	for _, o := range opts {
		o(&cfg)
	}
	var errs []error
	if len(nodes) == 0 {
		errs = append(errs, errors.New("no masters given"))
	}
	names := map[string]bool{}
	addrs := map[string]bool{}
	for i, n := range nodes {
		switch {
		case n.Name == "":
			errs = append(errs, fmt.Errorf("master #%d has no name", i+1))
		case names[n.Name]:
			errs = append(errs, fmt.Errorf("master %s declared twice", n.Name))
		}
		names[n.Name] = true
		switch {
		case n.Addr == "":
			errs = append(errs, fmt.Errorf("master %s has no address", n.Name))
		case addrs[n.Addr]:
			errs = append(errs, fmt.Errorf("master %s: address %s used twice", n.Name, n.Addr))
		}
		addrs[n.Addr] = true
	}
	if err := cfg.validate(); err != nil {
		errs = append(errs, err)
	}
	if err := errors.Join(errs...); err != nil {
		return nil, fmt.Errorf("quorum.New: %w", err)
	}
	m := &Manager{cfg: cfg, quorum: len(nodes)/2 + 1, owner: defaultOwner(cfg.owner), wakeTag: newWakeTag()}
	m.life, m.endLife = context.WithCancel(context.Background())
	masters := make([]wire.Master, len(nodes))
	for i, n := range nodes {
		nd := m.newNode(n)
		m.nodes = append(m.nodes, nd)
		masters[i] = wire.Master{Addr: n.Addr, Username: n.Username, Password: n.Password, DB: n.DB, TLS: nd.tls, Dialer: n.Dialer}
		nd.master = masters[i]
	}
	m.tr = m.newPipes(masters)
	m.reads = m.newPipes(masters)
	m.votes = m.newVotes()
	m.calls = make(chan *call, 256)
	return m, nil
}

func (m *Manager) newNode(n Node) *node {
	nd := &node{name: n.Name, tls: tlsFor(n.TLS, n.Addr)}
	opt := &redis.Options{
		Addr:      n.Addr,
		Username:  n.Username,
		Password:  n.Password,
		DB:        n.DB,
		TLSConfig: n.TLS,
		Protocol:  2,
		// Lock traffic must never outlive the caller's per-node deadline, and a
		// driver retry of SET NX can answer "not set" for our own key.
		ContextTimeoutEnabled: true,
		MaxRetries:            -1,
		DialTimeout:           m.cfg.nodeTimeout,
		DialerRetries:         1,
		ReadTimeout:           m.cfg.nodeTimeout,
		WriteTimeout:          m.cfg.nodeTimeout,
		DisableIdentity:       true,
	}
	if n.Dialer != nil {
		opt.Dialer = dialTLS(n.Dialer, nd.tls)
	}
	if m.cfg.quarantine > 0 {
		opt.OnConnect = func(ctx context.Context, cn *redis.Conn) error {
			server, err := cn.Info(ctx, "server").Result()
			if err != nil {
				return nd.infoFailed("INFO server", err)
			}
			repl, err := cn.Info(ctx, "replication").Result()
			if err != nil {
				return nd.infoFailed("INFO replication", err)
			}
			m.quarantined(nd, nd.observe(server, repl, m.cfg.clock.Now(), m.cfg.quarantine))
			return nil
		}
	}
	nd.client = redis.NewClient(opt)
	return nd
}

// observe records INFO server and INFO replication as read on a new connection,
// and starts a quarantine when the master may have forgotten locks it granted:
//
//   - a process started less than the window ago (first sight, or a new run_id with
//     second_repl_offset:-1, a fresh start) can have granted nothing before its
//     start, so it is quarantined until its start (now - uptime) + window;
//   - a new run_id of a replica promoted behind the address (master_replid2 set,
//     second_repl_offset >= 0) may lack locks the old master granted up to the
//     failover, which cannot be dated: it is quarantined until now + window.
//
// A replica promoted before this client first met the master cannot be told apart
// from a master that always was one: only a run_id change is noticed.
//
// It returns the end of a quarantine it started (zero when none).
func (n *node) observe(server, repl string, now time.Time, window time.Duration) (began time.Time) {
	runID := infoField(server, "run_id")
	upSecs, _ := strconv.ParseInt(infoField(server, "uptime_in_seconds"), 10, 64)
	// uptime_in_seconds is truncated: count one more second to be safe.
	started := now.Add(-time.Duration(upSecs) * time.Second)
	until := started.Add(window + time.Second)
	// Several handshakes may run at once on one master (the hot path's and
	// go-redis's connections): the run_id is read and written under n.mu.
	n.mu.Lock()
	defer n.mu.Unlock()
	if n.runID != "" && runID != n.runID && promoted(repl) {
		until = now.Add(window)
	}
	n.connectErr = nil
	if until.After(now) && until.After(n.quarUntil) {
		n.quarUntil = until
		began = until
	}
	n.runID = runID
	return began
}

// quarantined reports a quarantine a new connection to n started.
func (m *Manager) quarantined(n *node, until time.Time) {
	if !until.IsZero() {
		m.observe(observe.Event{Kind: observe.EventQuarantine, Master: n.name, Until: until})
	}
}

// promoted reports whether INFO replication describes a master that was a replica
// (REPLICAOF NO ONE, a failover): it keeps its old master's replication id as
// master_replid2, from second_repl_offset on. A fresh start has -1 there; an
// unreadable section counts as promoted, the cautious reading.
func promoted(repl string) bool {
	off, err := strconv.ParseInt(infoField(repl, "second_repl_offset"), 10, 64)
	return err != nil || off >= 0
}

// quarantinedUntil returns the end of the node's quarantine, zero if none.
func (n *node) quarantinedUntil(now time.Time) time.Time {
	n.mu.Lock()
	defer n.mu.Unlock()
	if now.Before(n.quarUntil) {
		return n.quarUntil
	}
	return time.Time{}
}

func infoField(info, field string) string { return wire.InfoField(info, field) }

// Close closes the connections to every master and waits for the Manager's
// goroutines (wake-up subscriptions, background clean-ups, the connections'
// readers and writers) to end. The clean-ups of failed acquisition rounds on
// masters that did not answer them get 100 ms (the node timeout when shorter) to
// finish, then end: a key such a master set for a failed round may then stay
// until its TTL. Locks still held are not released; a held lock's
// keep-alive fails from then on and ends with the lock's validity. A listing
// already running (admin's Inspect, a Scanner step, Describe) is not ended: its
// connection closes when it returns, at its context's end or its per-call
// timeout at the latest; cancel its context to end it sooner.
func (m *Manager) Close() error {
	m.closeWake()
	m.closeLosses()
	m.bgMu.Lock()
	m.bgClosed = true
	m.bgMu.Unlock()
	m.waitBackground()
	_ = m.tr.Close()
	_ = m.reads.Close()
	var errs []error
	for _, n := range m.nodes {
		n.closeList()
		if err := n.client.Close(); err != nil {
			errs = append(errs, &NodeError{Node: n.name, Op: "close", Err: err})
		}
	}
	return errors.Join(errs...)
}

// cleanUpGrace is how long Close lets the failed rounds' clean-ups of masters that
// did not answer (cleanUp) go on, at most: a master that resumed may still take
// them; one that did not is not waited for.
const cleanUpGrace = 100 * time.Millisecond

// waitBackground waits for the background work, ending the clean-ups that
// cleanUp runs after cleanUpGrace (the node timeout when shorter).
func (m *Manager) waitBackground() {
	done := make(chan struct{})
	go func() {
		m.bg.Wait()
		close(done)
	}()
	t := time.NewTimer(min(cleanUpGrace, m.cfg.nodeTimeout))
	defer t.Stop()
	select {
	case <-done:
	case <-t.C:
	}
	m.endLife()
	<-done
}

// background runs fn in a goroutine that Close waits for; after Close it does
// not run fn, and says so (started false).
func (m *Manager) background(fn func()) (started bool) {
	m.bgMu.Lock()
	defer m.bgMu.Unlock()
	if m.bgClosed {
		return false
	}
	m.bg.Add(1)
	go func() {
		defer m.bg.Done()
		fn()
	}()
	return true
}

// closed reports whether Close was called: every round fails from then on.
func (m *Manager) closed() bool {
	m.bgMu.Lock()
	defer m.bgMu.Unlock()
	return m.bgClosed
}

// Quorum returns the number of votes a lock needs: N/2+1.
func (m *Manager) Quorum() int { return m.quorum }

// Nodes returns the masters' names in declared order.
func (m *Manager) Nodes() []string {
	names := make([]string, len(m.nodes))
	for i, n := range m.nodes {
		names[i] = n.name
	}
	return names
}

// Key returns the Redis key of a lock name: the key prefix plus the name.
func (m *Manager) Key(name string) string { return m.cfg.prefix + name }

// quarantineEnds is admin.Admin.Quarantine, which documents it.
func (m *Manager) quarantineEnds() map[string]time.Time {
	out := map[string]time.Time{}
	now := m.cfg.clock.Now()
	for _, n := range m.nodes {
		if t := n.quarantinedUntil(now); !t.IsZero() {
			out[n.name] = t
		}
	}
	return out
}

// DriftBudget returns the drift budget for ttl: ttl*factor + extra.
func (m *Manager) DriftBudget(ttl time.Duration) time.Duration { return m.cfg.drift(ttl) }

// fanout runs fn on every master in parallel, each under its own deadline of the node
// timeout (which also bounds dialling), and returns the results in declared order.
// fn's error, when set, makes the outcome OutcomeError.
func (m *Manager) fanout(ctx context.Context, op, key string, fn func(ctx context.Context, n *node) (Outcome, error)) *Report {
	rep := &Report{Op: op, Key: key, Quorum: m.quorum, Nodes: make([]NodeResult, len(m.nodes))}
	// Every node starts at the same moment, so one deadline context serves them all:
	// each command still ends within the node timeout, and the round costs one
	// timer instead of one per node.
	nctx, cancel := context.WithTimeout(ctx, m.cfg.nodeTimeout)
	defer cancel()
	var wg sync.WaitGroup
	wg.Add(len(m.nodes))
	for i, n := range m.nodes {
		go func() {
			defer wg.Done()
			t0 := time.Now()
			out, err := fn(nctx, n)
			if err != nil {
				out = OutcomeError
				err = n.explain(err)
			}
			rep.Nodes[i] = NodeResult{Node: n.name, Outcome: out, Err: err, Latency: time.Since(t0)}
		}()
	}
	wg.Wait()
	rep.Votes = rep.count(OutcomeOK)
	m.observeRound(rep)
	return rep
}

// explain turns driver errors into errors that say what happened; context deadline
// errors become "no reply within the node timeout".
func (n *node) explain(err error) error {
	n.mu.Lock()
	cerr := n.connectErr
	n.mu.Unlock()
	if cerr != nil && !errors.Is(err, cerr) {
		err = fmt.Errorf("%w (%w)", err, cerr)
	}
	if strings.HasPrefix(err.Error(), "WRONGTYPE") {
		return fmt.Errorf("%w: %w", ErrWrongType, err)
	}
	return err
}

// backgroundFor returns a context for clean-up work that must run even when ctx
// was cancelled (releasing partial keys), keeping ctx's values.
func backgroundFor(ctx context.Context) context.Context { return context.WithoutCancel(ctx) }
