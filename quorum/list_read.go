package quorum

import (
	"context"
	_ "embed"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/redlock/redlock/internal/keyspace"
	"github.com/redlock/redlock/internal/wire"
)

//go:embed scripts/list_read.lua
var listReadLua string

var listReadScript = wire.NewScript(listReadLua)

// errBadRecords: a reply of list_read.lua that does not parse (never expected
// from a real master; reported rather than guessed at).
var errBadRecords = errors.New("malformed listing reply")

// listBlobCap bounds the records of one list_read.lua reply, and listAgainBytes
// the key names of one call made for a batch's keys that need it (readAgain):
// hostile names of up to listKeyCap each stay far below the cap.
const (
	listBlobCap    = 512 << 20
	listAgainBytes = 64 << 20
)

// listRecord is one key as one master reported it. name and value are
// substrings of the reply: callers that keep them copy them.
type listRecord struct {
	name  string // the key without the prefix
	typ   string // "string", or the Redis type of another key
	value string // at most ValueReadCap bytes of a string value
	size  int64  // the full length of a string value
	pttl  int64  // ms; -1: no TTL
}

// readKeys runs list_read.lua on master n, on a listing connection of its own
// (list_conn.go) under the listing's per-call deadline: one SCAN step from
// cursor under pattern when keys is empty, else exactly keys. It calls put with
// the records of the keys that exist (in *buf, reused from call to call; valid
// until put returns) and returns the next cursor (0 once a SCAN pass is over,
// and always with keys).
func (m *Manager) readKeys(ctx context.Context, n *node, cursor uint64, pattern string, keys []string, buf *[]listRecord, put func([]listRecord)) (next uint64, err error) {
	op := "SCAN"
	if len(keys) > 0 {
		op = "read"
	}
	// A failure comes before put: the call can be tried again on a new connection.
	err = n.withListConn(ctx, m.inspectCallTimeout(), func(lc *listConn) (err error) {
		next, err = m.readKeysOn(ctx, lc, cursor, pattern, keys, buf, put)
		return err
	})
	if err != nil {
		return 0, fmt.Errorf("%s: %w", op, err)
	}
	return next, nil
}

// readAgain reads keys (a batch's keys that need more than its reads) with
// list_read.lua on lc, in calls of at most listAgainBytes of key names.
func (m *Manager) readAgain(ctx context.Context, lc *listConn, keys []string, put func([]listRecord)) error {
	var buf []listRecord
	for len(keys) > 0 {
		n, size := 0, 0
		for n < len(keys) && (n == 0 || size+len(keys[n]) <= listAgainBytes) {
			size += len(keys[n])
			n++
		}
		if _, err := m.readKeysOn(ctx, lc, 0, "", keys[:n], &buf, put); err != nil {
			return fmt.Errorf("read: %w", err)
		}
		keys = keys[n:]
	}
	return nil
}

// readKeysOn is readKeys on lc. The records point into lc.blob.
func (m *Manager) readKeysOn(ctx context.Context, lc *listConn, cursor uint64, pattern string, keys []string, buf *[]listRecord, put func([]listRecord)) (next uint64, err error) {
	args := []string{strconv.Itoa(keyspace.ValueReadCap), strconv.FormatUint(cursor, 10), pattern, strconv.Itoa(inspectBatch)}
	// A script call answers at its end: its deadline is the listing's per-call
	// one, not the node timeout sized for one small command.
	stop := lc.c.Bind(ctx, time.Now().Add(m.inspectCallTimeout()))
	defer stop()
	n, err := lc.c.Script(listReadScript, keys, args, '*')
	if err != nil {
		return 0, err
	}
	if n != 2 {
		return 0, fmt.Errorf("%w: %d elements", errBadRecords, n)
	}
	cur, kept, err := lc.c.Bulk(lc.blob[:0], 20)
	if err != nil {
		return 0, err
	}
	if next, err = strconv.ParseUint(string(cur), 10, 64); !kept || err != nil {
		return 0, fmt.Errorf("%w: cursor %q", errBadRecords, cur)
	}
	if lc.blob, kept, err = lc.c.Bulk(cur[:0], listBlobCap); err != nil {
		return 0, err
	}
	if !kept {
		return 0, fmt.Errorf("%w: records of more than %d bytes", errBadRecords, listBlobCap)
	}
	recs, err := parseRecords(bstr(lc.blob), m.cfg.prefix, (*buf)[:0])
	*buf = recs
	if err != nil {
		return 0, err
	}
	put(recs)
	clear(recs) // the records point into lc.blob
	if cap(lc.blob) > listKeyCap {
		lc.blob = nil
	}
	return next, nil
}

// parseRecords appends to out the records of list_read.lua's second reply,
// "<type>,<pttl>,<length>,<key bytes>,<value bytes>:<key><value>" each, naming
// each key without prefix (a key without it, and a queue key or waiting flag, are
// left out: sideName), and returns them; any
// other text is an error matching errBadRecords.
func parseRecords(blob, prefix string, out []listRecord) ([]listRecord, error) {
	for len(blob) > 0 {
		head, rest, ok := strings.Cut(blob, ":")
		if !ok {
			return out, fmt.Errorf("%w: record without ':'", errBadRecords)
		}
		var f [5]string
		for i := range 4 {
			if f[i], head, ok = strings.Cut(head, ","); !ok {
				return out, fmt.Errorf("%w: record header %q", errBadRecords, f[i])
			}
		}
		f[4] = head
		var nums [4]int64 // pttl, length, key bytes, value bytes
		for i := range nums {
			v, err := strconv.ParseInt(f[i+1], 10, 64)
			if err != nil || v < 0 && (i > 0 || v != -1) {
				return out, fmt.Errorf("%w: field %q", errBadRecords, f[i+1])
			}
			nums[i] = v
		}
		kl, vl := nums[2], nums[3]
		if kl > int64(len(rest)) || vl > int64(len(rest))-kl || vl > keyspace.ValueReadCap || vl > nums[1] {
			return out, fmt.Errorf("%w: lengths %d+%d past the reply", errBadRecords, kl, vl)
		}
		if key := rest[:kl]; strings.HasPrefix(key, prefix) && !sideName(key[len(prefix):]) {
			out = append(out, listRecord{name: key[len(prefix):], typ: typeName(f[0]), value: rest[kl : kl+vl], size: nums[1], pttl: nums[0]})
		}
		blob = rest[kl+vl:]
	}
	return out, nil
}

// typeName returns the Redis type named by a record ("" is a string) without
// keeping the reply alive.
func typeName(s string) string {
	for _, t := range [...]string{"string", "hash", "zset", "list", "set", "stream"} {
		if s == t || s == "" && t == "string" {
			return t
		}
	}
	return strings.Clone(s)
}

// pttlOf converts a PTTL in ms (-1: no TTL) to a duration (-1: no TTL).
func pttlOf(ms int64) time.Duration {
	if ms < 0 {
		return -1
	}
	return time.Duration(ms) * time.Millisecond
}
