package quorum

import (
	"cmp"
	"context"
	_ "embed"
	"fmt"
	"slices"
	"time"

	"github.com/redis/go-redis/v9"
)

var (
	//go:embed scripts/shared_read.lua
	sharedReadLua    string
	sharedReadScript = redis.NewScript(sharedReadLua)
)

// SharedHolder is one shared holder of a name as a quorum read it.
type SharedHolder struct {
	// Value is the holder's full value: a secret of its owner (show Redact(Value)).
	Value string `json:"-"`
	// Owner is decoded from Value when this package wrote it.
	Owner *Owner `json:"owner,omitempty"`
	// Votes is how many masters hold it.
	Votes int `json:"votes"`
	// Validity is what is left of it on the quorum's view at ObservedAt: the time
	// left that a quorum of masters still exceeds, minus its drift budget.
	Validity time.Duration `json:"validity_ns"`
}

// SharedInfo is the shared holders of a name, as observed at ObservedAt. It
// describes; it does not guarantee.
type SharedInfo struct {
	Name string `json:"name"`
	// Holders are the holders held on a quorum with validity left, longest first.
	Holders []SharedHolder `json:"holders"`
	// WriterWaiting: an exclusive waiter's marker lives on some master, so new
	// shared grants are refused there.
	WriterWaiting bool      `json:"writer_waiting"`
	Quorum        int       `json:"quorum"`
	Total         int       `json:"total"`
	ObservedAt    time.Time `json:"observed_at"`
}

// SharedHolders reads the shared holders of name from every master (one script
// each). When fewer than a quorum answer the error is a *RoundError matching
// ErrUnavailable.
func (m *Manager) SharedHolders(ctx context.Context, name string) (*SharedInfo, error) {
	if err := checkName(name); err != nil {
		return nil, err
	}
	key := m.Key(name)
	left := make([]map[string]time.Duration, len(m.nodes))
	marked := make([]bool, len(m.nodes))
	rep := m.fanout(ctx, "inspect", key, func(ctx context.Context, n *node) (Outcome, error) {
		r, err := sharedReadScript.Run(ctx, n.client, []string{key, key + xwaitSuffix}).Slice()
		if err != nil {
			return OutcomeError, err
		}
		i := m.nodeIndex(n)
		if len(r) == 0 || len(r)%2 != 1 {
			return OutcomeError, fmt.Errorf("%w: shared read gave %d values", errProtocol, len(r))
		}
		ms, _ := r[0].(int64)
		marked[i] = ms != -2
		left[i] = map[string]time.Duration{}
		for j := 1; j+1 < len(r); j += 2 {
			v, _ := r[j].(string)
			d, _ := r[j+1].(int64)
			left[i][v] = time.Duration(d) * time.Millisecond
		}
		return OutcomeOK, nil
	})
	si := &SharedInfo{Name: name, Quorum: m.quorum, Total: len(m.nodes), ObservedAt: time.Now()}
	if rep.Votes < m.quorum {
		return nil, &RoundError{Report: *rep, Kind: ErrUnavailable}
	}
	all := map[string][]time.Duration{}
	for i, l := range left {
		si.WriterWaiting = si.WriterWaiting || marked[i]
		for v, d := range l {
			all[v] = append(all[v], d)
		}
	}
	for v, ds := range all {
		if len(ds) < m.quorum {
			continue
		}
		slices.SortFunc(ds, func(a, b time.Duration) int { return cmp.Compare(b, a) })
		q := ds[m.quorum-1]
		h := SharedHolder{Value: v, Votes: len(ds), Validity: q - m.cfg.drift(q)}
		if h.Validity <= 0 {
			continue
		}
		if pv, err := ParseValue(v); err == nil {
			owner := pv.Owner
			h.Owner = &owner
		}
		si.Holders = append(si.Holders, h)
	}
	slices.SortFunc(si.Holders, func(a, b SharedHolder) int {
		return cmp.Or(cmp.Compare(b.Validity, a.Validity), cmp.Compare(a.Value, b.Value))
	})
	return si, nil
}
