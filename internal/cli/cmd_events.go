package cli

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/redlock/redlock/admin"
	"github.com/redlock/redlock/internal/connect"
	"github.com/redlock/redlock/internal/escape"
	"github.com/redlock/redlock/internal/events"
	"github.com/redlock/redlock/topology"
)

// eventsArgs are the arguments of events.
type eventsArgs struct {
	common
	match, mode          string
	interval, quorumWait time.Duration
}

func (a *eventsArgs) flags(f *Flags) {
	f.String(&a.match, "match", "GLOB", "*", "only lock names matching GLOB (default all)")
	f.Bool(&a.json, "json", "JSON lines (docs/json/events.schema.json)")
	f.Choice(&a.mode, "mode", "M", []string{"auto", "keyspace", "poll"}, `auto (keyspace when a quorum has notifications on, else poll),
keyspace, or poll (default auto)`)
	f.Duration(&a.interval, "interval", 500*time.Millisecond, `poll mode: time between listings; both modes: time between pings
of the masters, at most 1s (default 500ms)`).atLeast(positive)
	f.Duration(&a.quorumWait, "quorum-wait", 10*time.Second, `exit 1 once fewer than a quorum of masters has answered the
pings for D (default 10s; 0: at the first ping without a quorum)`).atLeast(0)
	a.common.flags(f)
}

var _ = define(&Command{
	Name:     "events",
	Synopsis: "stream lock events: acquired, extended, released, expired, changed hands",
	About: `
Streams lock events until Ctrl-C: acquired, extended, released, force-expired, revoked
(keyspace mode), expired and changed-hands, each with the name, owner, library, the masters and the time.
Each event names the primitive its key belongs to (kind: lock, multi, semaphore
with the permit's slot, leader, shared); shared holders coming and going are
events in poll mode only (keyspace mode sees only the deletion of the shared key).

Two modes, named on stderr at start and in every JSON line ("mode"):
  keyspace  Redis keyspace notifications (notify-keyspace-events with K and
            either A or g, $ and x, on a quorum of masters: declare
            notify_keyspace_events = "Kg$x" in the settings block and run apply).
            Each master's notifications are merged: an event is a quorum of
            masters reporting the same operation about the same value (the
            expire of SET ... PX is part of the acquisition, not an extension),
            so a lock taken and released between two polls still appears. It
            waits up to 150ms for the other masters and names those that
            reported ("(5 of 5 masters)"; "masters" in JSON).
  poll      the fallback: a listing every -interval compared with the previous
            one; a lock held for less than an interval can be missed.

A dead cluster does not look like a quiet one: every master is pinged every
-interval (at most 1s, each ping bounded by the node timeout), and the masters'
changes are events of their own: master-unreachable (with the reason),
master-reachable, quorum-lost and quorum-regained; "masters" lists the masters
answering. Without a quorum answering at the start, events exits 1 at once; once
the quorum is lost it exits 1 when no quorum has answered for -quorum-wait, or
when stopped before the quorum came back (under -json, the quorum-lost line is
the last one: no error document follows the stream).`,
	Exits: []Exit{
		{0, "stopped by Ctrl-C while a quorum of masters answers"},
		{1, `error: no quorum of masters answers (at the start, for -quorum-wait, or when
stopped), -mode keyspace without notifications`},
		exitBadInput,
	},
}, withSession(runEvents))

// eventJSON is one line of `events -json`.
type eventJSON struct {
	Time    time.Time  `json:"time"`
	Event   string     `json:"event"`
	Name    string     `json:"name"`
	Mode    string     `json:"mode"`
	Owner   *ownerJSON `json:"owner,omitempty"`
	Library string     `json:"library,omitempty"`
	Value   string     `json:"value,omitempty"`
	Masters []string   `json:"masters"`
	// Kind and Primitive: what the key belongs to (prim_events.go); Permit is a
	// semaphore permit's slot.
	Kind      string `json:"kind,omitempty"`
	Primitive string `json:"primitive,omitempty"`
	Permit    *int   `json:"permit,omitempty"`
}

// eventLine is one event, as a JSON line or a human line.
type eventLine struct {
	eventJSON
	ev    events.Event
	total int // masters declared
}

func (l eventLine) humanLine() string {
	who := ""
	if l.ev.Owner != nil || l.ev.Library != "" {
		li := admin.LockInfo{Owner: l.ev.Owner, Library: l.ev.Library}
		who = " by " + holder(&li)
	}
	return fmt.Sprintf("%s %-13s %s%s%s (%d of %d masters) [%s]", l.ev.At.Format("15:04:05.000"), l.ev.Kind, escape.Line(l.ev.Name, 60), l.primitiveText(), who, len(l.ev.Masters), l.total, l.Mode)
}

func runEvents(ctx context.Context, env *Env, s *lockSession, a *eventsArgs) error {
	clients, err := connect.Clients(s.cluster, s.cluster.NodeTimeout)
	if err != nil {
		return s.fail(ExitError, err)
	}
	defer func() {
		for _, c := range clients {
			_ = c.Close()
		}
	}()
	probe := &masterProbe{cluster: s.cluster, clients: clients, timeout: s.cluster.NodeTimeout, redact: s.redact}
	if err := probe.check(ctx); err != nil {
		return s.fail(ExitError, err)
	}
	on, unread := notificationsOn(ctx, s.cluster, clients, a.timeout)
	mode := &a.mode
	switch {
	case *mode == "keyspace" && on < s.cluster.Quorum() && len(unread) > 0:
		return s.fail(ExitError, fmt.Errorf("-mode keyspace: notifications are on for %d of %d masters, a quorum needs %d; %s", on, len(clients), s.cluster.Quorum(), unreadText(unread)))
	case *mode == "keyspace" && on < s.cluster.Quorum():
		return s.fail(ExitError, fmt.Errorf("-mode keyspace: notifications are on for %d of %d masters, a quorum needs %d: declare notify_keyspace_events = \"Kg$x\" in settings and run apply", on, len(clients), s.cluster.Quorum()))
	case *mode == "auto" && on >= s.cluster.Quorum():
		*mode = "keyspace"
	case *mode == "auto":
		*mode = "poll"
	}
	why := ""
	if len(unread) > 0 {
		names := make([]string, len(unread))
		for i, u := range unread {
			names[i] = u.master
		}
		why = "; notify-keyspace-events unread on " + strings.Join(names, ", ")
	}
	fmt.Fprintf(env.Stderr, "redlock events: %s mode (keyspace notifications on %d of %d masters%s)\n", *mode, on, len(clients), escape.Text(s.redact(why)))
	var lineMu sync.Mutex // the stream and the masters' watch print lines
	printLine := func(l lineDoc) {
		lineMu.Lock()
		defer lineMu.Unlock()
		_ = showLine(env, a.json, l)
	}
	sctx, stop := context.WithCancel(ctx)
	defer stop()
	health := make(chan error, 1)
	go func() {
		err := probe.watch(sctx, min(a.interval, maxProbePeriod), a.quorumWait, *mode, printLine)
		stop()
		health <- err
	}()
	emit := func(ev events.Event) {
		out := eventJSON{Time: ev.At, Event: ev.Kind, Name: ev.Name, Mode: *mode, Owner: toOwnerJSON(ev.Owner), Library: ev.Library, Masters: ev.Masters}
		if ev.Value != "" {
			out.Value = admin.Redact(ev.Value)
		}
		if out.Masters == nil {
			out.Masters = []string{}
		}
		if !out.annotate(ev) {
			return
		}
		printLine(eventLine{eventJSON: out, ev: ev, total: len(clients)})
	}
	if *mode == "keyspace" {
		warned := map[string]bool{} // a refusal is said once per master and text
		var mu sync.Mutex
		warn := func(master string, err error) {
			text := fmt.Sprintf("master %s: %v", master, err)
			mu.Lock()
			defer mu.Unlock()
			if warned[text] {
				return
			}
			warned[text] = true
			advice := ""
			if strings.Contains(text, "NOPERM") {
				advice = ": its keyspace events are not seen (grant the channels of docs/acl.md, or use -mode poll)"
			}
			fmt.Fprintf(env.Stderr, "redlock events: %s%s\n", escape.Text(s.redact(text)), advice)
		}
		s.keyspaceEvents(sctx, clients, a.match, emit, warn)
	} else {
		s.pollEvents(sctx, a.match, a.interval, a.timeout, emit)
	}
	stop()
	if err := <-health; err != nil {
		// The stream's quorum-lost line said it: no error document after the lines.
		return &exitError{code: ExitError, err: redacted(err, s.redact), doc: skipDoc{}}
	}
	return nil
}

// unreadMaster is a master whose notify-keyspace-events could not be read, and why.
type unreadMaster struct {
	master string
	err    error
}

// notificationsOn counts the masters whose notify-keyspace-events reports the
// events the keyspace mode needs: K, and A or all of g, $ and x. unread are the
// masters whose setting could not be read: for them nothing is known, on or off.
func notificationsOn(ctx context.Context, cluster *topology.Cluster, clients []*redis.Client, timeout time.Duration) (on int, unread []unreadMaster) {
	for i, c := range clients {
		cctx, cancel := context.WithTimeout(ctx, timeout)
		v, err := c.ConfigGet(cctx, "notify-keyspace-events").Result()
		cancel()
		if err != nil {
			unread = append(unread, unreadMaster{cluster.Masters[i].Name, err})
			continue
		}
		flags := v["notify-keyspace-events"]
		if strings.Contains(flags, "K") &&
			(strings.Contains(flags, "A") || strings.Contains(flags, "g") && strings.Contains(flags, "$") && strings.Contains(flags, "x")) {
			on++
		}
	}
	return on, unread
}

// unreadText says which masters' notification setting could not be read, and
// what to grant when the reason is a permission (docs/acl.md).
func unreadText(unread []unreadMaster) string {
	each := make([]string, len(unread))
	for i, u := range unread {
		each[i] = fmt.Sprintf("%s (%v)", u.master, u.err)
	}
	text := "could not read notify-keyspace-events on " + strings.Join(each, ", ")
	if strings.Contains(text, "NOPERM") {
		text += ": grant +config|get (docs/acl.md), or use -mode poll"
	}
	return text
}

// keyspaceNote is one master's notification, with the value read after a set.
type keyspaceNote struct {
	master, name, op, value string
	at                      time.Time
}

// keyspaceEvents subscribes to every master's keyspace notifications of the lock
// keys and merges them into quorum-level events until ctx ends.
func (s *lockSession) keyspaceEvents(ctx context.Context, clients []*redis.Client, match string, print func(events.Event), warn func(master string, err error)) {
	keyspaceStream(ctx, s.cluster, clients, match, print, warn)
}

// keyspaceStream subscribes to the keyspace notifications of cluster's lock keys
// on every master (clients in declared order) and prints the events a quorum of
// masters reported, until ctx ends. A master's error reply (a subscription its
// ACL refuses) goes to warn, when set.
func keyspaceStream(ctx context.Context, cluster *topology.Cluster, clients []*redis.Client, match string, print func(events.Event), warn func(master string, err error)) {
	notes := make(chan keyspaceNote, 1024)
	for i, c := range clients {
		m := cluster.Masters[i]
		prefix := fmt.Sprintf("__keyspace@%d__:", m.DB)
		// Keyspace notifications of the lock keys, and the locks' wake-up channels,
		// where a force-expire announces itself.
		ps := c.PSubscribe(ctx, prefix+admin.EscapeGlob(cluster.KeyPrefix)+match, admin.EscapeGlob(cluster.KeyPrefix)+match+":wake")
		go func() {
			defer ps.Close()
			rd := events.NewReader(ps)
			shared := newSharedMembers()
			for {
				msg, err := rd.Next(ctx)
				if ctx.Err() != nil {
					return
				}
				if err != nil {
					var re redis.Error
					if warn != nil && errors.As(err, &re) {
						warn(m.Name, err)
					}
					continue // go-redis reconnects and subscribes again
				}
				if wake, ok := strings.CutSuffix(msg.Channel, ":wake"); ok && !strings.HasPrefix(msg.Channel, prefix) {
					if msg.Payload == admin.ForceExpiredMessage {
						n := keyspaceNote{master: m.Name, name: strings.TrimPrefix(wake, cluster.KeyPrefix), op: msg.Payload, at: time.Now()}
						select {
						case notes <- n:
						case <-ctx.Done():
							return
						}
					}
					continue
				}
				key := strings.TrimPrefix(msg.Channel, prefix)
				name := strings.TrimPrefix(key, cluster.KeyPrefix)
				if k := admin.ClassifyKey(name, "").Kind; k == admin.KeyFence || k == admin.KeyQueue {
					continue // a fence counter, a queue or a waiting flag: no lock of its own
				}
				if shared.mayBeShared(name, msg.Payload) {
					if sn, ok := shared.notes(ctx, c, cluster.NodeTimeout, m.Name, key, name, msg.Payload, time.Now()); ok {
						for _, n := range sn {
							select {
							case notes <- n:
							case <-ctx.Done():
								return
							}
						}
						continue
					}
				}
				n := keyspaceNote{master: m.Name, name: name, op: msg.Payload, at: time.Now()}
				if n.op == "set" {
					n.value = rd.ValueAfterSet(ctx, msg.Channel, func(ctx context.Context) (string, error) {
						gctx, cancel := context.WithTimeout(ctx, cluster.NodeTimeout)
						defer cancel()
						return c.Get(gctx, key).Result()
					})
				}
				select {
				case notes <- n:
				case <-ctx.Done():
					return
				}
			}
		}()
	}
	merger := events.NewMerger(cluster.Quorum(), len(clients), time.Second)
	tick := time.NewTicker(50 * time.Millisecond)
	defer tick.Stop()
	for {
		var evs []events.Event
		select {
		case <-ctx.Done():
			return
		case n := <-notes:
			evs = merger.Add(n.master, n.name, n.op, n.value, n.at)
		case now := <-tick.C:
			if len(notes) > 0 {
				// Behind the readers: the merger's clock is the notes' (each Add flushes
				// at its note's time). Flushing at the wall clock now would count the
				// backlog as time passed: the grace and the window would run out on
				// notes still waiting in the channel.
				continue
			}
			evs = merger.Flush(now)
		}
		for _, ev := range evs {
			print(sharedEventName(ev))
		}
	}
}

// pollEvents lists the locks every interval and prints the differences. The
// listing streams by: a poll keeps the held locks (events.Held) and the shared
// holds, never the listing.
func (s *lockSession) pollEvents(ctx context.Context, match string, interval, timeout time.Duration, print func(events.Event)) {
	var prev *events.Held
	var prevPrims []admin.Primitive
	var prevAt time.Time
	tick := time.NewTicker(interval)
	defer tick.Stop()
	for {
		cctx, cancel := context.WithTimeout(ctx, timeout)
		cur, prims, err := s.pollHeld(cctx, match)
		cancel()
		if ctx.Err() != nil {
			return
		}
		if err == nil {
			now := time.Now()
			if prev != nil {
				for _, ev := range prev.Diff(cur, now) {
					print(ev)
				}
				for _, ev := range sharedEvents(prevPrims, prims, prevAt, now) {
					print(ev)
				}
			}
			prev, prevPrims, prevAt = cur, prims, now
		}
		select {
		case <-ctx.Done():
			return
		case <-tick.C:
		}
	}
}

// pollHeld lists the locks matching match as they stream by: the held ones, and
// the shared holds (from the keys of primitives, kept aside: few).
func (s *lockSession) pollHeld(ctx context.Context, match string) (*events.Held, []admin.Primitive, error) {
	head, locks, err := s.adm().InspectStream(ctx, match)
	if err != nil {
		return nil, nil, err
	}
	held := &events.Held{}
	var kept []admin.LockInfo
	for li := range locks {
		if kind, _, ok := admin.PrimitiveOf(li); ok && kind != admin.KindShared {
			held.Add(li) // shared holders come and go by sharedEvents, one event each
		}
		if isPrimitiveKey(li) {
			kept = append(kept, copyLockInfo(li))
		}
	}
	if len(kept) == 0 {
		return held, nil, nil
	}
	prims, err := s.adm().Primitives(ctx, &admin.Listing{ObservedAt: head.ObservedAt, Match: head.Match, Quorum: head.Quorum,
		Total: head.Total, Masters: head.Masters, Locks: kept})
	return held, prims, err
}
