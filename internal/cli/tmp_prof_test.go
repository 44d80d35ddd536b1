package cli

import (
	"context"
	"crypto/sha1"
	"encoding/base64"
	"fmt"
	"io"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/redlock/redlock/internal/connect"
	"github.com/redlock/redlock/internal/redistest"
	"github.com/redlock/redlock/quorum"
	"github.com/redlock/redlock/topology"
)

func TestTmpProfLocks(t *testing.T) {
	if os.Getenv("TMPPROF") == "" {
		t.Skip()
	}
	rc := redistest.Start(t, 5, redistest.Options{})
	c := topology.NewCluster("p")
	c.RestartQuarantine = false
	for _, s := range rc.Servers {
		c.Masters = append(c.Masters, topology.Master{Name: s.Name, Address: s.Addr()})
	}
	m, err := connect.Manager(c)
	require.NoError(t, err)
	ctx := context.Background()
	l, err := m.TryAcquire(ctx, "listing:0", 5*time.Minute, quorum.WithLockOwner("nightly-report"))
	require.NoError(t, err)
	parts := strings.SplitN(l.Token(), ".", 3)
	for _, s := range rc.Servers {
		pipe := s.Client().Pipeline()
		for i := 1; i < 100000; i++ {
			tok := sha1.Sum([]byte(fmt.Sprint(i)))
			pipe.Set(ctx, fmt.Sprintf("lock:listing:%06d", i), parts[0]+"."+base64.RawURLEncoding.EncodeToString(tok[:])+"."+parts[2], time.Hour)
			if i%10000 == 0 {
				_, err := pipe.Exec(ctx)
				require.NoError(t, err)
			}
		}
		_, err := pipe.Exec(ctx)
		require.NoError(t, err)
	}
	s := &lockSession{cluster: c, m: m, redact: func(s string) string { return s }}
	for _, mode := range []string{"json", "table", "json", "table"} {
		t0 := time.Now()
		lst, locks, err := m.InspectStream(ctx, "*")
		require.NoError(t, err)
		t1 := time.Now()
		if mode == "json" {
			require.NoError(t, s.writeListingJSON(io.Discard, lst, locks, nil, nil))
		} else {
			s.printLockTable(io.Discard, lst, locks, nil)
		}
		t.Logf("%s: read %v, print %v", mode, t1.Sub(t0), time.Since(t1))
	}
}
