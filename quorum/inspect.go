package quorum

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"math"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/redis/go-redis/v9"
)

// LockState is the quorum view of one lock name across the masters.
type LockState string

// Lock states, as `locks` and the console show them.
const (
	// StateHeld: a majority of masters agree on one value.
	StateHeld LockState = "held"
	// StatePartial: one value, present on fewer than a majority (a round in progress,
	// a failed round's leftovers, or keys expiring at different times).
	StatePartial LockState = "partial"
	// StateContested: different values on different masters, none on a majority.
	StateContested LockState = "contested"
	// StateOrphaned: leftovers with no majority and no live holder: a value whose
	// remaining quorum validity is gone, or keys of the wrong type.
	StateOrphaned LockState = "orphaned"
)

// MasterView is what one master holds under one lock key.
type MasterView struct {
	Master string `json:"master"`
	// Present is false when the key does not exist on this master.
	Present bool `json:"present"`
	// Type is the Redis type of the key ("string", "hash", ...).
	Type string `json:"type,omitempty"`
	// Value is the full string value. It is a secret of its owner: presenters show
	// Redact(Value), never Value.
	Value string `json:"-"`
	// PTTL is the remaining TTL on this master; -1 when the key has no TTL.
	PTTL time.Duration `json:"pttl_ns"`
	// Err is set when the master did not answer; the other fields are then empty.
	Err error `json:"-"`
}

// LockInfo is the merged view of one lock name over every master, as observed at
// ObservedAt. It describes; it does not guarantee: by the time it is read the lock
// may have changed hands.
type LockInfo struct {
	Name  string    `json:"name"`
	Key   string    `json:"key"`
	State LockState `json:"state"`
	// Votes is how many masters hold the leading value; Quorum and Total for k/N.
	Votes  int `json:"votes"`
	Quorum int `json:"quorum"`
	Total  int `json:"total"`
	// Value is the leading value (the one on most masters). Secret: show Redact(Value).
	Value string `json:"-"`
	// Owner is decoded from Value when this package wrote it, else nil.
	Owner *Owner `json:"owner,omitempty"`
	// Library is Library(Value), or "redisson" for hash keys.
	Library string `json:"library"`
	// Validity is the remaining validity from the quorum's view at ObservedAt: the
	// PTTL that a quorum of masters still exceeds, minus the drift budget of it; zero
	// or negative when no quorum holds the value.
	Validity   time.Duration `json:"validity_ns"`
	ObservedAt time.Time     `json:"observed_at"`
	// Fence is the lock's fence counter when fencing was used, else 0.
	Fence   int64        `json:"fence,omitempty"`
	Masters []MasterView `json:"masters"`
}

// Deadline returns when the quorum validity ends, as observed: ObservedAt plus Validity.
func (li *LockInfo) Deadline() time.Time { return li.ObservedAt.Add(li.Validity) }

// NoExpiry is the Validity of a lock whose keys on a quorum of masters have no TTL
// (set without PX by some other tool): it never expires by itself.
const NoExpiry = time.Duration(math.MaxInt64)

// MasterAnswer says whether one master answered a listing.
type MasterAnswer struct {
	Master string `json:"master"`
	// Answered is false when the master failed or timed out; Error then says why
	// (it never contains a password).
	Answered bool   `json:"answered"`
	Err      error  `json:"-"`
	Error    string `json:"error,omitempty"`
	// Keys is how many lock keys the master holds under the match.
	Keys    int           `json:"keys"`
	Latency time.Duration `json:"latency_ns"`
}

// Listing is every lock under the key prefix, merged over the masters, as observed
// at ObservedAt. It describes; it does not guarantee: locks change hands at any time.
type Listing struct {
	ObservedAt time.Time `json:"observed_at"`
	Match      string    `json:"match"`
	Quorum     int       `json:"quorum"`
	Total      int       `json:"total"`
	// Masters says, in declared order, which masters answered.
	Masters []MasterAnswer `json:"masters"`
	// Locks are sorted by name. A master that did not answer appears in each lock's
	// Masters with Err set.
	Locks []LockInfo `json:"locks"`
}

// Answered returns how many masters answered.
func (l *Listing) Answered() int {
	n := 0
	for _, m := range l.Masters {
		if m.Answered {
			n++
		}
	}
	return n
}

// Lock returns the entry of a lock name, or nil when no master holds it.
func (l *Listing) Lock(name string) *LockInfo {
	for i := range l.Locks {
		if l.Locks[i].Name == name {
			return &l.Locks[i]
		}
	}
	return nil
}

// inspectBatch is the SCAN COUNT and the size of one TYPE/PTTL/GET pipeline.
const inspectBatch = 1000

// inspectCallTimeout bounds one SCAN call or one pipeline on one master: the node
// timeout is sized for a single small command, a listing batch carries more.
func (m *Manager) inspectCallTimeout() time.Duration {
	return max(4*m.cfg.nodeTimeout, 250*time.Millisecond)
}

// rawKey is one key as one master reported it.
type rawKey struct {
	typ   string
	value string
	pttl  time.Duration // -1: no TTL
}

// Inspect lists the locks whose names match the glob match ("" or "*" for all;
// Redis MATCH syntax) on every master: SCAN (never KEYS) under the key prefix, then
// TYPE, PTTL and GET per batch in one pipeline. Side keys of this package (names
// ending ":fence" or ":queue") are not listed; a fence counter is reported in the
// lock's Fence. Per lock it merges the masters' views into a quorum state (see
// LockState), the votes of the leading value, the remaining validity from the
// quorum's view, the decoded owner and the guessed library.
//
// Masters that fail are reported in Listing.Masters and in every lock's Masters; the
// listing is complete as long as a quorum answered. When fewer than a quorum
// answered, Inspect returns the partial listing together with an error matching
// ErrUnavailable that names the failing masters. It writes nothing.
func (m *Manager) Inspect(ctx context.Context, match string) (*Listing, error) {
	if match == "" {
		match = "*"
	}
	pattern := EscapeGlob(m.cfg.prefix) + match
	return m.listEach(match, "inspect", func(n *node) (map[string]rawKey, error) { return m.scanNode(ctx, n, pattern) })
}

// listEach reads every master in parallel with read, records each one's answer
// (op names it in errors) and merges what they reported into a Listing; the error
// matches ErrUnavailable when fewer than a quorum answered.
func (m *Manager) listEach(match, op string, read func(n *node) (map[string]rawKey, error)) (*Listing, error) {
	lst := &Listing{Match: match, Quorum: m.quorum, Total: len(m.nodes), Masters: make([]MasterAnswer, len(m.nodes))}
	perNode := make([]map[string]rawKey, len(m.nodes))
	var wg sync.WaitGroup
	wg.Add(len(m.nodes))
	for i, n := range m.nodes {
		go func() {
			defer wg.Done()
			t0 := time.Now()
			keys, err := read(n)
			ans := MasterAnswer{Master: n.name, Answered: err == nil, Latency: time.Since(t0)}
			if err != nil {
				ans.Err = &NodeError{Node: n.name, Op: op, Err: n.explain(err)}
				ans.Error = ans.Err.Error()
			} else {
				perNode[i] = keys
			}
			lst.Masters[i] = ans
		}()
	}
	wg.Wait()
	lst.ObservedAt = time.Now()
	lst.Locks = m.merge(perNode, lst)
	return lst, m.unanswered(op, lst)
}

// unanswered returns nil when a quorum of masters answered the listing, else an
// error matching ErrUnavailable that names the masters that failed.
func (m *Manager) unanswered(op string, lst *Listing) error {
	if lst.Answered() >= m.quorum {
		return nil
	}
	errs := []error{fmt.Errorf("%s: %w: %d of %d masters answered (quorum %d)", op, ErrUnavailable, lst.Answered(), len(m.nodes), m.quorum)}
	for _, a := range lst.Masters {
		if a.Err != nil {
			errs = append(errs, a.Err)
		}
	}
	return errors.Join(errs...)
}

// scanNode returns every key matching pattern on one master, by name (the key
// without the prefix), fence counters included.
func (m *Manager) scanNode(ctx context.Context, n *node, pattern string) (map[string]rawKey, error) {
	out := map[string]rawKey{}
	var cursor uint64
	for {
		cctx, cancel := context.WithTimeout(ctx, m.inspectCallTimeout())
		keys, next, err := n.client.Scan(cctx, cursor, pattern, inspectBatch).Result()
		cancel()
		if err != nil {
			return nil, fmt.Errorf("SCAN: %w", err)
		}
		if err := m.describeKeys(ctx, n, keys, func(name string, rk rawKey) { out[name] = rk }); err != nil {
			return nil, err
		}
		if next == 0 {
			return out, nil
		}
		cursor = next
	}
}

// describeKeys reads PTTL and GET of keys in one pipeline (and TYPE, in a second
// one, of the few keys GET refuses: a Redisson hash, a queue) and calls put with
// each key that exists, by name (the key without the prefix).
func (m *Manager) describeKeys(ctx context.Context, n *node, keys []string, put func(name string, rk rawKey)) error {
	// A copy: Describe shares keys between its masters' goroutines.
	keys = slices.DeleteFunc(slices.Clone(keys), func(k string) bool { return strings.HasSuffix(k, ":queue") })
	if len(keys) == 0 {
		return nil
	}
	cctx, cancel := context.WithTimeout(ctx, m.inspectCallTimeout())
	defer cancel()
	pipe := n.client.Pipeline()
	pttls := make([]*redis.Cmd, len(keys))
	gets := make([]*redis.StringCmd, len(keys))
	for i, k := range keys {
		pttls[i] = pipe.Do(cctx, "PTTL", k)
		gets[i] = pipe.Get(cctx, k)
	}
	// Exec reports the first failed command, which may be a harmless reply (GET on a
	// hash, GET of a key that just expired); failures that matter show up in PTTL.
	_, _ = pipe.Exec(cctx)
	var odd []int // keys of another type than string
	for i, k := range keys {
		ms, err := pttls[i].Int64()
		if err != nil {
			return fmt.Errorf("PTTL %s: %w", k, err)
		}
		if ms == -2 { // expired or deleted since SCAN
			continue
		}
		rk := rawKey{typ: "string", pttl: -1}
		if ms >= 0 {
			rk.pttl = time.Duration(ms) * time.Millisecond
		}
		v, err := gets[i].Result()
		switch {
		case errors.Is(err, redis.Nil): // gone between PTTL and GET
			continue
		case err != nil && strings.HasPrefix(err.Error(), "WRONGTYPE"):
			odd = append(odd, i)
			continue
		case err != nil:
			return fmt.Errorf("GET %s: %w", k, err)
		}
		rk.value = v
		put(strings.TrimPrefix(k, m.cfg.prefix), rk)
	}
	if len(odd) == 0 {
		return nil
	}
	pipe = n.client.Pipeline()
	types := make([]*redis.StatusCmd, len(odd))
	for j, i := range odd {
		types[j] = pipe.Type(cctx, keys[i])
	}
	_, _ = pipe.Exec(cctx)
	for j, i := range odd {
		typ, err := types[j].Result()
		if err != nil {
			return fmt.Errorf("TYPE %s: %w", keys[i], err)
		}
		if typ == "none" {
			continue
		}
		ms, _ := pttls[i].Int64()
		rk := rawKey{typ: typ, pttl: -1}
		if ms >= 0 {
			rk.pttl = time.Duration(ms) * time.Millisecond
		}
		put(strings.TrimPrefix(keys[i], m.cfg.prefix), rk)
	}
	return nil
}

// merge builds the per-lock views from what each master reported (nil: the
// master did not answer).
func (m *Manager) merge(perNode []map[string]rawKey, lst *Listing) []LockInfo {
	names := map[string]bool{}
	views := make([]func(string) (rawKey, bool), len(perNode))
	for i, keys := range perNode {
		if keys == nil {
			continue
		}
		for name := range keys {
			if !strings.HasSuffix(name, ":fence") {
				names[name] = true
			}
		}
		views[i] = func(name string) (rawKey, bool) { rk, ok := keys[name]; return rk, ok }
	}
	return m.mergeViews(slices.Sorted(maps.Keys(names)), views, lst)
}

// mergeViews builds the views of the sorted lock names from one lookup per master
// (nil: the master did not answer) and counts each master's keys in lst.Masters.
func (m *Manager) mergeViews(sorted []string, views []func(string) (rawKey, bool), lst *Listing) []LockInfo {
	out := make([]LockInfo, 0, len(sorted))
	for _, name := range sorted {
		li := LockInfo{Name: name, Key: m.Key(name), Quorum: m.quorum, Total: len(m.nodes), ObservedAt: lst.ObservedAt}
		li.Masters = make([]MasterView, 0, len(m.nodes))
		present := false
		for i, n := range m.nodes {
			mv := MasterView{Master: n.name}
			if views[i] == nil {
				mv.Err = lst.Masters[i].Err
			} else if rk, ok := views[i](name); ok {
				lst.Masters[i].Keys++
				present = true
				mv.Present, mv.Type, mv.Value, mv.PTTL = true, rk.typ, rk.value, rk.pttl
				if f, ok := views[i](name + ":fence"); ok && f.typ == "string" {
					if v, err := strconv.ParseInt(f.value, 10, 64); err == nil && v > li.Fence {
						li.Fence = v
					}
				}
			}
			li.Masters = append(li.Masters, mv)
		}
		if !present { // every key of the name aged out since it was read
			continue
		}
		m.classify(&li)
		out = append(out, li)
	}
	return out
}

// EscapeGlob escapes the glob characters of a literal for Redis MATCH, so that
// Inspect(ctx, EscapeGlob(name)) lists exactly the lock name.
func EscapeGlob(s string) string {
	var b strings.Builder
	for _, r := range s {
		switch r {
		case '*', '?', '[', ']', '\\':
			b.WriteByte('\\')
		}
		b.WriteRune(r)
	}
	return b.String()
}
