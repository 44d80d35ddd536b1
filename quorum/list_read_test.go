package quorum

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"runtime"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/redlock/redlock/internal/keyspace"
	"github.com/redlock/redlock/internal/wire"
)

// allocatedBy returns the bytes the process allocated while f ran.
func allocatedBy(f func()) uint64 {
	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	f()
	runtime.ReadMemStats(&after)
	return after.TotalAlloc - before.TotalAlloc
}

// One hostile value of many megabytes is read as its first ValueReadCap bytes and
// its length by every listing (Inspect, InspectStream, Describe, a Scanner): the
// listing allocates far less than the value, shows it truncated, and still tells
// two long values apart by their length.
func TestListingsReadHostileValuesCapped(t *testing.T) {
	ctx := context.Background()
	c, m := testCluster(t, 3)
	const size = 4 << 20
	huge := strings.Repeat("x", size)
	for i, s := range c.Servers {
		v := huge
		if i == 2 {
			v += "x" // same first bytes, one byte longer: another value
		}
		require.NoError(t, s.Client().Set(ctx, "lock:huge", v, time.Minute).Err())
	}
	check := func(t *testing.T, li *lockInfo) {
		t.Helper()
		require.NotNil(t, li)
		assert.Equal(t, 2, li.Votes, "the longer value on master 2 is another value")
		assert.Equal(t, stateHeld, li.State, "two of three masters agree")
		for i, mv := range li.Masters {
			assert.True(t, mv.Truncated, mv.Master)
			assert.Len(t, mv.Value, keyspace.ValueReadCap, mv.Master)
			assert.Equal(t, int64(size+i/2), mv.Size, mv.Master)
		}
	}
	readers := map[string]func(t *testing.T){
		"inspect": func(t *testing.T) {
			lst, err := m.inspect(ctx, "")
			require.NoError(t, err)
			check(t, lst.Lock("huge"))
		},
		"stream": func(t *testing.T) {
			_, locks, err := m.inspectStream(ctx, "huge")
			require.NoError(t, err)
			n := 0
			for li := range locks {
				check(t, li)
				n++
			}
			assert.Equal(t, 1, n)
		},
		"describe": func(t *testing.T) {
			lst, err := m.describe(ctx, []string{"huge"})
			require.NoError(t, err)
			check(t, lst.Lock("huge"))
		},
		"scanner": func(t *testing.T) {
			sc := m.newScanner("")
			for !sc.Progress().Complete {
				require.NoError(t, sc.Step(ctx))
			}
			lst, err := sc.Listing()
			require.NoError(t, err)
			check(t, lst.Lock("huge"))
		},
	}
	for name, read := range readers {
		t.Run(name, func(t *testing.T) {
			read(t) // warm connections and the script cache
			got := allocatedBy(func() { read(t) })
			assert.Less(t, got, uint64(size/4), "a listing allocated %d bytes beside a %d-byte value", got, size)
		})
	}
}

// Every key shape a master can hold reads back as it was written, through the
// listing script and through the SCAN pass (MULTI/EXEC of GETRANGE and PTTL,
// the script for what needs more): strings of any bytes, empty strings, keys
// without a TTL, other types, values at and past the cap, fence counters, and a
// fair queue, which is skipped.
func TestListReadScriptKeyShapes(t *testing.T) {
	ctx := context.Background()
	c, m := testCluster(t, 1)
	cl := c.Servers[0].Client()
	odd := "a:b,c\x00d\r\n:" + strings.Repeat("é", 10)
	require.NoError(t, cl.Set(ctx, "lock:"+odd, odd, time.Minute).Err())
	require.NoError(t, cl.Set(ctx, "lock:empty", "", 0).Err())
	require.NoError(t, cl.HSet(ctx, "lock:hash", "f", "1").Err())
	require.NoError(t, cl.Set(ctx, "lock:empty:fence", "41", 0).Err())
	require.NoError(t, cl.RPush(ctx, "lock:empty:queue", "w").Err())
	atCap := strings.Repeat("c", keyspace.ValueReadCap)
	require.NoError(t, cl.Set(ctx, "lock:atcap", atCap, 0).Err())
	require.NoError(t, cl.Set(ctx, "lock:long", atCap+"more", 0).Err())
	require.NoError(t, cl.Set(ctx, "lock:"+strings.Repeat("k", listKeyCap+1), "v", 0).Err())
	readers := map[string]func(put func([]listRecord)){
		"script": func(put func([]listRecord)) {
			var buf []listRecord
			var cursor uint64
			for {
				next, err := m.readKeys(ctx, m.nodes[0], cursor, "lock:*", nil, &buf, put)
				require.NoError(t, err)
				if next == 0 {
					break
				}
				cursor = next
			}
		},
		"scan": func(put func([]listRecord)) {
			next, err := m.scanPass(ctx, m.nodes[0], fromStart, "lock:*", 0, put)
			require.NoError(t, err)
			require.Zero(t, next)
		},
	}
	for name, read := range readers {
		t.Run(name, func(t *testing.T) {
			byName := map[string]listRecord{}
			read(func(recs []listRecord) {
				for _, r := range recs {
					r.name, r.value = strings.Clone(r.name), strings.Clone(r.value)
					byName[r.name] = r
				}
			})
			if name == "scan" {
				assert.Len(t, byName, 6, "the queue and the key past listKeyCap are skipped: %v", byName)
			} else {
				delete(byName, strings.Repeat("k", listKeyCap+1))
			}
			assert.Equal(t, odd, byName[odd].value)
			assert.Equal(t, int64(len(odd)), byName[odd].size)
			assert.InDelta(t, 60_000, byName[odd].pttl, 5_000)
			assert.Equal(t, listRecord{name: "empty", typ: "string", pttl: -1}, byName["empty"])
			assert.Equal(t, listRecord{name: "hash", typ: "hash", pttl: -1}, byName["hash"])
			assert.Equal(t, "41", byName["empty:fence"].value)
			assert.Equal(t, listRecord{name: "atcap", typ: "string", value: atCap, size: keyspace.ValueReadCap, pttl: -1}, byName["atcap"])
			assert.Equal(t, listRecord{name: "long", typ: "string", value: atCap, size: keyspace.ValueReadCap + 4, pttl: -1}, byName["long"])
		})
	}
}

// encodeRecords writes records as list_read.lua does, their keys under prefix.
func encodeRecords(prefix string, recs []listRecord) string {
	var b strings.Builder
	for _, r := range recs {
		typ := r.typ
		if typ == "string" {
			typ = ""
		}
		fmt.Fprintf(&b, "%s,%d,%d,%d,%d:%s%s%s", typ, r.pttl, r.size, len(prefix)+len(r.name), len(r.value), prefix, r.name, r.value)
	}
	return b.String()
}

func TestParseRecordsRejectsMalformedReplies(t *testing.T) {
	good := []listRecord{{name: "a:b", typ: "string", value: "v,:1", size: 4, pttl: 10}, {name: "h", typ: "hash", pttl: -1}}
	recs, err := parseRecords(encodeRecords("lock:", good)+encodeRecords("other:", good), "lock:", nil)
	require.NoError(t, err)
	assert.Equal(t, good, recs, "keys without the prefix are left out")
	for _, bad := range []string{
		"x",            // no header
		",1,1,1:ab",    // a field missing
		",1,1,5,0:ab",  // a name past the end
		",1,1,1,9:ab",  // a value past the end
		",-2,1,1,0:a",  // a PTTL below -1
		",1,-1,1,0:a",  // a negative length
		",1,1,1,2:abc", // a value longer than its length
		fmt.Sprintf(",1,%d,1,%d:a%s", keyspace.ValueReadCap+1, keyspace.ValueReadCap+1, strings.Repeat("v", keyspace.ValueReadCap+1)), // more than the cap
		",1,1,9223372036854775807,9223372036854775807:a", // lengths that overflow
	} {
		_, err := parseRecords(bad, "", nil)
		assert.ErrorIs(t, err, errBadRecords, "%q", bad)
	}
}

// parseRecords never panics and gives back what encodeRecords wrote.
func FuzzParseRecords(f *testing.F) {
	f.Add("a", "v", int64(5), "")
	f.Add("a:b,c", ":,", int64(-1), "hash")
	f.Add("", "", int64(0), "zset")
	f.Fuzz(func(t *testing.T, name, value string, pttl int64, typ string) {
		_, _ = parseRecords(name+value+typ, "", nil) // arbitrary text: an error at most
		if len(value) > keyspace.ValueReadCap || pttl < -1 || strings.ContainsAny(typ, ",:") {
			return
		}
		if typ == "" {
			typ = "string"
		}
		r := listRecord{name: name, typ: typ, value: value, size: int64(len(value)), pttl: pttl}
		recs, err := parseRecords(encodeRecords("lock:", []listRecord{r, r}), "lock:", nil)
		require.NoError(t, err)
		assert.Equal(t, []listRecord{r, r}, recs)
	})
}

// An edit to the listing script must be deliberate: update the pin with it.
func TestListReadScriptSHA1IsPinned(t *testing.T) {
	assert.Equal(t, "6843834450b18e951b8ff67bff8675a15aa68011", listReadScript.Hash())
}

// The owner decoder takes what Value.String writes without json.Unmarshal, and
// gives json.Unmarshal's result for whatever it takes; the rest goes to
// json.Unmarshal.
func FuzzOwnerDecoder(f *testing.F) {
	for _, o := range []Owner{
		{},
		{Host: "h", PID: 1, Label: "nightly <report> & co", At: time.UnixMilli(1732500000000), TTL: time.Minute, Kind: "sem", Count: 3},
		{Host: "é\u2028\x01", Label: "\"quoted\"\\", PID: -5},
	} {
		v := lockValue{Token: "AAAAAAAAAAAAAAAAAAAAAAAAAAA", Owner: o}
		_, enc, _ := strings.Cut(strings.TrimPrefix(v.String(), "rl1."), ".")
		raw, err := b64.DecodeString(enc)
		require.NoError(f, err)
		f.Add(raw)
	}
	for _, s := range []string{`null`, `{}`, `{"h":"a","h":"b"}`, `{"H":"x"}`, `{"p":01}`, `{"p":1.0}`, `{"p":1e2}`, `{"p":-0}`,
		`{"t":9999999999999999999}`, `{"x":[1,{"y":2}],"o":"z"}`, `{ "h" : "a" }`, `{"h":"a",}`, `{"h":"\u00e9"}`, "{\"h\":\"\xff\"}",
		`{"n":123456789012345678}`, `{"p":"1"}`, `{"h":1}`, `{"k":null}`} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		var fast, slow ownerWire
		if !decodeOwnerFast(b, &fast, nil) {
			return
		}
		require.NoError(t, json.Unmarshal(b, &slow), "taken by the fast decoder: %q", b)
		require.Equal(t, slow, fast, "%q", b)
	})
}

func TestOwnerDecoderTakesWhatValuesHold(t *testing.T) {
	o := Owner{Host: "host-1", PID: 42, Label: "nightly", At: time.UnixMilli(1732500000000), TTL: 30 * time.Second, Kind: "multi", Count: 2}
	v := lockValue{Token: "AAAAAAAAAAAAAAAAAAAAAAAAAAA", Owner: o}
	_, enc, _ := strings.Cut(strings.TrimPrefix(v.String(), "rl1."), ".")
	raw, err := b64.DecodeString(enc)
	require.NoError(t, err)
	var w ownerWire
	require.True(t, decodeOwnerFast(raw, &w, nil), "%s", raw)
	got, err := parseValue(v.String())
	require.NoError(t, err)
	assert.Equal(t, v.Token, got.Token)
	assert.Equal(t, o, got.Owner)
	var into Owner
	s := v.String()
	assert.Equal(t, 3.0, testing.AllocsPerRun(100, func() { _ = parseValueOwner(s, &into) }), "the host, the label and the kind, nothing else")
}

// Whatever a master (or something posing as one) sends, the listing's reader
// returns records or an error, and never panics or keeps more than the cap.
func FuzzListReplies(f *testing.F) {
	f.Add([]byte("*2\r\n$1\r\n0\r\n*2\r\n$6\r\nlock:a\r\n$12\r\nlock:a:queue\r\n"), []byte("+OK\r\n+QUEUED\r\n+QUEUED\r\n*2\r\n$3\r\nabc\r\n:1000\r\n"))
	f.Add([]byte("*2\r\n$1\r\n7\r\n*1\r\n$-1\r\n"), []byte("+OK\r\n-ERR no\r\n"))
	f.Add([]byte("*2\r\n$1\r\n0\r\n*1\r\n$6\r\nlock:b\r\n"), []byte("+OK\r\n+QUEUED\r\n+QUEUED\r\n*2\r\n-WRONGTYPE x\r\n:-1\r\n"))
	f.Add([]byte("*2\r\n$1\r\n0\r\n*1\r\n$6\r\nlock:c\r\n"), []byte("+OK\r\n+QUEUED\r\n+QUEUED\r\n*2\r\n$600\r\nxx\r\n:-2\r\n"))
	f.Fuzz(func(t *testing.T, scan, batch []byte) {
		lc := &listConn{c: wire.NewConn(readerConn{r: bytes.NewReader(scan)})}
		if _, err := lc.readSCAN(&lc.batch); err != nil {
			return
		}
		b := &lc.batch
		b.keys, b.next = b.next, b.keys
		b.spans, b.nspans = b.nspans, b.spans
		queued := 0
		for _, s := range b.spans {
			require.LessOrEqual(t, int(s.n), listKeyCap)
			if !strings.HasSuffix(string(b.keys[s.off:s.off+s.n]), queueSuffix) {
				queued++
			}
		}
		lc.c = wire.NewConn(readerConn{r: bytes.NewReader(batch)})
		if err := lc.readBatch(b, queued, "lock:"); err != nil {
			return
		}
		for _, r := range b.records {
			require.LessOrEqual(t, len(r.value), keyspace.ValueReadCap)
			require.Equal(t, int64(len(r.value)), r.size)
			require.GreaterOrEqual(t, r.pttl, int64(-1))
		}
	})
}

// readerConn is a connection that reads r and does nothing else.
type readerConn struct {
	net.Conn
	r io.Reader
}

func (c readerConn) Read(b []byte) (int, error) { return c.r.Read(b) }

// A batch's reads of a key are the commands wire.AppendCommand writes for them.
func TestAppendReadKeyIsGETRANGEAndPTTL(t *testing.T) {
	for _, k := range []string{"", "lock:a", strings.Repeat("k", 70000), "lock:\r\n*1\r\n"} {
		want := wire.AppendCommand(wire.AppendCommand(nil, "GETRANGE", k, "0", strconv.Itoa(keyspace.ValueReadCap-1)), "PTTL", k)
		require.Equal(t, string(want), string(appendReadKey(nil, k)))
	}
}
