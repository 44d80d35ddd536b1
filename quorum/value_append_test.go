package quorum

import (
	"context"
	"encoding/json"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// FuzzAppendOwnerJSON: the value built on the stack (appendValue) is, byte for
// byte, the one lockValue.String builds with encoding/json, for any owner, including
// one that changes between calls (the cached parts must follow it).
func FuzzAppendOwnerJSON(f *testing.F) {
	f.Add("host-1", 4242, "worker", int64(1700000000123), int64(10000), "", 0, "other")
	f.Add("", 0, "", int64(0), int64(0), "", 0, "")
	f.Add("h\x00<>&\"\\\u2028\u2029\xff", -1, "é\t\n\r\b\f", int64(-5), int64(1), "sem", 3, "x")
	f.Add("", 0, "", int64(0), int64(1), "multi", 0, "")
	f.Fuzz(func(t *testing.T, host string, pid int, label string, at, ttl int64, kind string, count int, label2 string) {
		for _, o := range []ownerWire{
			{H: host, P: pid, O: label, T: at, L: ttl, K: kind, N: count},
			{H: host, P: pid, O: label2, T: at, L: ttl, K: kind, N: count},
			{H: host, P: pid, O: label, K: kind, N: count},
			{T: at, L: ttl},
		} {
			want, err := json.Marshal(o)
			require.NoError(t, err)
			got := appendOwnerJSON(nil, &o)
			if string(got) != string(want) {
				t.Fatalf("owner %+v: got %s, want %s", o, got, want)
			}
			tok := []byte("0123456789abcdefghij")
			if v, w := string(appendValue(nil, tok, &o)), valueVersion+"."+b64.EncodeToString(tok)+"."+b64.EncodeToString(want); v != w {
				t.Fatalf("value %q, want %q", v, w)
			}
		}
	})
}

func TestNewValueMatchesString(t *testing.T) {
	tests := []Owner{
		{Host: "h", PID: 1, Label: "o", At: time.UnixMilli(1), TTL: time.Second},
		{Host: string(make([]byte, 64)), Label: "<<<<<<<<<<<<<<<<<<<<<<<<<<<<<<<<<<<<<<<<<<<<<<<<<<<<<<<<<<<<<<<<"}, // shrunk to fit
		{Kind: "xwait"},
	}
	for _, o := range tests {
		s, err := newValue(o)
		require.NoError(t, err)
		assert.LessOrEqual(t, len(s), maxValueLen)
		v, err := parseValue(s)
		require.NoError(t, err)
		assert.Equal(t, s, v.String(), "newValue and lockValue.String disagree")
	}
}

// TestCycleAllocations holds the allocations of one TryAcquire + Release of a
// plain lock on five masters: the Lock with both its reports (one), its value
// (one), its key (one), its release's queue key and channel (one), and the
// owner's time; none in the wire path. 20 before the Lock made its context,
// timer and channels on first use and shared one allocation with its reports.
func TestCycleAllocations(t *testing.T) {
	if raceOn {
		t.Skip("the race detector allocates: counted without it")
	}
	_, m := testCluster(t, 5)
	ctx := context.Background()
	cycle := func() {
		l, err := m.TryAcquire(ctx, "allocs", 10*time.Second)
		if err != nil {
			t.Fatal(err)
		}
		if err := l.Release(ctx); err != nil {
			t.Fatal(err)
		}
	}
	cycle() // connections, pools
	allocs := testing.AllocsPerRun(200, cycle)
	t.Logf("%.1f allocations per cycle", allocs)
	assert.LessOrEqual(t, allocs, 5.0)
}
