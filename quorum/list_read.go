package quorum

import (
	"context"
	_ "embed"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/redis/go-redis/v9"
	"github.com/redlock/redlock/internal/keyspace"
)

//go:embed scripts/list_read.lua
var listReadLua string

var listReadScript = redis.NewScript(listReadLua)

// errBadRecords: a reply of list_read.lua that does not parse (never expected
// from a real master; reported rather than guessed at).
var errBadRecords = errors.New("malformed listing reply")

// listRecord is one key as one master reported it. name and value are
// substrings of the reply: callers that keep them copy them.
type listRecord struct {
	name  string // the key without the prefix
	typ   string // "string", or the Redis type of another key
	value string // at most ValueReadCap bytes of a string value
	size  int64  // the full length of a string value
	pttl  int64  // ms; -1: no TTL
}

// readKeys runs list_read.lua on master n, under the listing's per-call deadline:
// one SCAN step from cursor under pattern when keys is empty, else exactly keys.
// It calls put with the records of the keys that exist (in *buf, reused from
// call to call) and returns the next cursor (0 once a SCAN pass is over, and
// always with keys).
func (m *Manager) readKeys(ctx context.Context, n *node, cursor uint64, pattern string, keys []string, buf *[]listRecord, put func([]listRecord)) (uint64, error) {
	cctx, cancel := context.WithTimeout(ctx, m.inspectCallTimeout())
	defer cancel()
	op := "SCAN"
	if len(keys) > 0 {
		op = "read"
	}
	// A script call answers at its end: its read timeout is the call's, not the
	// node timeout sized for one small command.
	cl := n.client.WithTimeout(m.inspectCallTimeout())
	reply, err := listReadScript.Run(cctx, cl, keys, keyspace.ValueReadCap, strconv.FormatUint(cursor, 10), pattern, inspectBatch).Slice()
	if err != nil {
		return 0, fmt.Errorf("%s: %w", op, err)
	}
	next, blob, err := splitListReply(reply)
	if err != nil {
		return 0, fmt.Errorf("%s: %w", op, err)
	}
	recs, err := parseRecords(blob, m.cfg.prefix, (*buf)[:0])
	*buf = recs
	if err != nil {
		return 0, fmt.Errorf("%s: %w", op, err)
	}
	put(recs)
	return next, nil
}

// splitListReply returns the cursor and the records of a list_read.lua reply.
func splitListReply(reply []any) (uint64, string, error) {
	if len(reply) != 2 {
		return 0, "", fmt.Errorf("%w: %d elements", errBadRecords, len(reply))
	}
	cs, ok1 := reply[0].(string)
	blob, ok2 := reply[1].(string)
	if !ok1 || !ok2 {
		return 0, "", fmt.Errorf("%w: %T, %T", errBadRecords, reply[0], reply[1])
	}
	next, err := strconv.ParseUint(cs, 10, 64)
	if err != nil {
		return 0, "", fmt.Errorf("%w: cursor %q", errBadRecords, cs)
	}
	return next, blob, nil
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
