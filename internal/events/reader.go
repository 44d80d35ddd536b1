package events

import (
	"context"
	"time"

	"github.com/redis/go-redis/v9"
)

// Reader reads one master's keyspace notifications (a pattern subscription) in
// order, and reads the value a `set` stored without mistaking a later value for it.
//
// A notification carries no value: the value is read with GET after the `set`
// arrives, by which time the key may have changed again (released and taken by
// the next holder). ValueAfterSet therefore sends a PING on the subscription after
// the GET answered: every notification the master published before it processed
// the PING (all changes before the GET among them) arrives before the pong. When
// one of them changed the key, the value read may be a later holder's and the
// value is reported unknown (""); the events merger copes with unknown values.
//
// A Reader is not safe for concurrent use.
type Reader struct {
	ps    *redis.PubSub
	queue []*redis.Message
}

// NewReader reads from ps.
func NewReader(ps *redis.PubSub) *Reader { return &Reader{ps: ps} }

// Next returns the next message, or the error that ended the subscription's read
// (the context's, or a network error after which go-redis reconnects on the next
// call; Next waits 100 ms before returning such an error, so a loop on a master
// that is down does not spin).
func (r *Reader) Next(ctx context.Context) (*redis.Message, error) {
	if len(r.queue) > 0 {
		m := r.queue[0]
		r.queue[0] = nil
		r.queue = r.queue[1:]
		return m, nil
	}
	for {
		x, err := r.ps.Receive(ctx)
		if err != nil {
			if ctx.Err() == nil {
				select {
				case <-time.After(100 * time.Millisecond):
				case <-ctx.Done():
				}
			}
			return nil, err
		}
		if m, ok := x.(*redis.Message); ok {
			return m, nil
		}
	}
}

// valueOps are the operations that do not change a key's value.
var valueOps = map[string]bool{"expire": true, "pexpire": true, "expireat": true, "pexpireat": true, "persist": true}

// ValueAfterSet returns the value get reads for the key whose notification channel
// is channel, right after a `set` notification on it, or "" when the value cannot
// be known to be the one that `set` stored (see Reader). Messages that arrive
// meanwhile are kept for Next, in order.
func (r *Reader) ValueAfterSet(ctx context.Context, channel string, get func(context.Context) (string, error)) string {
	value, err := get(ctx)
	if err != nil {
		return ""
	}
	// Changes already queued before the GET was even sent.
	for _, m := range r.queue {
		if m.Channel == channel && !valueOps[m.Payload] {
			return ""
		}
	}
	if err := r.ps.Ping(ctx); err != nil {
		return ""
	}
	changed := false
	for {
		x, err := r.ps.Receive(ctx)
		if err != nil {
			return ""
		}
		switch x := x.(type) {
		case *redis.Pong:
			if changed {
				return ""
			}
			return value
		case *redis.Message:
			r.queue = append(r.queue, x)
			if x.Channel == channel && !valueOps[x.Payload] {
				changed = true
			}
		}
	}
}
