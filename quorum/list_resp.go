package quorum

import (
	"context"
	"fmt"
	"strconv"
	"strings"
	"time"
	"unsafe"

	"github.com/redlock/redlock/internal/keyspace"
	"github.com/redlock/redlock/internal/wire"
)

// The read path of SCAN listings (admin.Admin.Inspect, InspectStream, an
// admin.Scanner): a connection of its own per master (list_conn.go), whose
// replies wire.Conn reads piece by piece. Per
// batch of keys it costs a master one SCAN and, in one MULTI/EXEC (atomic, as
// the listing script was), a GETRANGE 0 ValueReadCap-1 and a PTTL per key:
// about 2 µs of the master's CPU per key against 4-5 µs for list_read.lua
// (PERFORMANCE.md section 5). The next batch's SCAN goes out with the current
// batch's MULTI/EXEC: one round trip per batch. A key that needs more (a value
// of ValueReadCap bytes or more, whose length STRLEN gives; a key of another
// type, whose TYPE is asked) is read again by list_read.lua, atomically, on the
// same connection (list_read.go).
//
// The replies are read into buffers reused from batch to batch; the
// records handed to put point into them (listRecord says so) and are valid
// until put returns.

// span is a piece of a batch buffer.
type span struct{ off, n int32 }

// scanBatch is the state of one master's SCAN pass on a listConn: the keys of
// the batch in flight, and the buffers that the records point into.
type scanBatch struct {
	keys    []byte // the key names of the batch, back to back
	spans   []span
	next    []byte // the next batch's key names, read while this one is decoded
	nspans  []span
	values  []byte
	vspans  []span   // the values of records, in values
	again   []string // keys to read with list_read.lua
	records []listRecord
}

// readSCAN reads a SCAN reply: the next cursor, the keys into b.next.
func (lc *listConn) readSCAN(b *scanBatch) (uint64, error) {
	b.next, b.nspans = b.next[:0], b.nspans[:0]
	if n, err := lc.c.Header('*'); err != nil || n != 2 {
		return 0, firstErr(err, fmt.Errorf("%w: SCAN reply of %d elements", wire.ErrProtocol, n))
	}
	cur, kept, err := lc.c.Bulk(b.next, 20)
	if err != nil {
		return 0, err
	}
	cursor, perr := strconv.ParseUint(string(cur), 10, 64)
	if !kept || perr != nil {
		return 0, fmt.Errorf("%w: cursor", wire.ErrProtocol)
	}
	b.next = cur[:0]
	count, err := lc.c.Header('*')
	if err != nil {
		return 0, err
	}
	for range count {
		start := len(b.next)
		if b.next, kept, err = lc.c.Bulk(b.next, listKeyCap); err != nil {
			return 0, err
		}
		if kept {
			b.nspans = append(b.nspans, span{int32(start), int32(len(b.next) - start)})
		}
	}
	return cursor, nil
}

// firstErr returns err, or other when err is nil.
func firstErr(err, other error) error {
	if err != nil {
		return err
	}
	return other
}

// scanPass runs one SCAN pass on master n under pattern, from the cursor from
// gives for the connection it runs on (from is given the master's run_id: see
// listConn.readRunID): a batch per step, each read in one MULTI/EXEC sent with
// the next SCAN. It calls put with each batch's records (valid until put
// returns) and returns the next cursor: 0 once the pass is over, else where it
// stopped after steps batches (steps <= 0: no limit). Each round trip has the
// listing's per-call deadline.
func (m *Manager) scanPass(ctx context.Context, n *node, from func(runID string) uint64, pattern string, steps int, put func([]listRecord)) (next uint64, err error) {
	timeout := m.inspectCallTimeout()
	cursor := from("")
	if err := ctx.Err(); err != nil {
		return cursor, err
	}
	lc, err := n.openList(ctx, timeout, func(lc *listConn) (err error) {
		cursor = from(lc.runID)
		lc.appendSCAN(cursor, pattern)
		return lc.roundTrip(ctx, timeout, func() (err error) {
			next, err = lc.readSCAN(&lc.batch)
			return err
		})
	})
	if err != nil {
		return cursor, fmt.Errorf("SCAN: %w", err)
	}
	defer func() { n.putListConn(lc, err) }()
	stop := lc.c.Bind(ctx, time.Now().Add(timeout)) // each round trip extends it
	defer stop()
	b := &lc.batch
	for step := 1; ; step++ {
		b.keys, b.next = b.next, b.keys
		b.spans, b.nspans = b.nspans, b.spans
		// This batch's reads, and the next SCAN when the pass goes on.
		queued := 0
		lc.out = wire.AppendCommand(lc.out, "MULTI")
		for _, s := range b.spans {
			k := bstr(b.keys[s.off : s.off+s.n])
			if sideName(strings.TrimPrefix(k, m.cfg.prefix)) {
				continue
			}
			lc.out = appendReadKey(lc.out, k)
			queued++
		}
		lc.out = wire.AppendCommand(lc.out, "EXEC")
		more := next != 0 && (steps <= 0 || step < steps)
		if more {
			lc.appendSCAN(next, pattern)
		}
		lc.c.Extend(ctx, time.Now().Add(timeout))
		err := lc.c.Send(lc.out)
		lc.out = lc.out[:0]
		if err == nil {
			err = lc.readBatch(b, queued, m.cfg.prefix)
		}
		if err != nil {
			return cursor, fmt.Errorf("read: %w", err)
		}
		cursor = next
		if more {
			if next, err = lc.readSCAN(b); err != nil {
				return cursor, fmt.Errorf("SCAN: %w", err)
			}
		}
		put(b.records)
		if err := m.readAgain(ctx, lc, b.again, put); err != nil {
			return cursor, err
		}
		if !more {
			return cursor, nil
		}
	}
}

// appendSCAN buffers a SCAN step from cursor.
func (lc *listConn) appendSCAN(cursor uint64, pattern string) {
	lc.out = wire.AppendCommand(lc.out, "SCAN", strconv.FormatUint(cursor, 10), "MATCH", pattern, "COUNT", strconv.Itoa(inspectBatch))
}

// readBatch reads the replies of a batch's MULTI/EXEC (queued keys, two
// commands each) into b.records, and the keys to read again into b.again.
func (lc *listConn) readBatch(b *scanBatch, queued int, prefix string) error {
	b.records, b.again, b.values = b.records[:0], b.again[:0], b.values[:0]
	for range 1 + 2*queued {
		if err := lc.c.OK(); err != nil { // +OK, then +QUEUED
			return err
		}
	}
	n, err := lc.c.Header('*')
	switch {
	case err != nil:
		return err
	case n != int64(2*queued):
		return fmt.Errorf("%w: EXEC of %d replies for %d commands", wire.ErrProtocol, n, 2*queued)
	}
	b.vspans = b.vspans[:0]
	for _, s := range b.spans {
		key := bstr(b.keys[s.off : s.off+s.n])
		if sideName(strings.TrimPrefix(key, prefix)) {
			continue
		}
		// GETRANGE: the value's first bytes, or WRONGTYPE.
		val := span{off: int32(len(b.values))}
		var kept, wrongType bool
		b.values, kept, err = lc.c.Bulk(b.values, keyspace.ValueReadCap)
		// Bulk returns an error reply unwrapped; errors.As would allocate its
		// target, per key.
		_, isReply := err.(wire.ErrorReply)
		switch {
		case isReply:
			wrongType = true
		case err != nil:
			return err
		case !kept:
			return fmt.Errorf("%w: GETRANGE of more than %d bytes", wire.ErrProtocol, keyspace.ValueReadCap)
		}
		val.n = int32(len(b.values)) - val.off
		pttl, err := lc.c.Header(':')
		if err != nil {
			return err
		}
		name, ok := strings.CutPrefix(key, prefix)
		switch {
		case pttl == -2 || !ok: // no such key (any more)
		case wrongType || val.n == keyspace.ValueReadCap:
			b.again = append(b.again, strings.Clone(key))
		default:
			b.records = append(b.records, listRecord{name: name, typ: "string", size: int64(val.n), pttl: max(pttl, -1)})
			b.vspans = append(b.vspans, val)
		}
	}
	// b.values no longer moves: the records point into it.
	for i, v := range b.vspans {
		b.records[i].value = bstr(b.values[v.off : v.off+v.n])
	}
	return nil
}

// bstr returns the bytes of b as a string without copying them: b must not
// change while the string is in use.
func bstr(b []byte) string { return unsafe.String(unsafe.SliceData(b), len(b)) }
