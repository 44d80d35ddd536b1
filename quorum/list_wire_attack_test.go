package quorum

import (
	"context"
	"strconv"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/redlock/redlock/internal/redistest"
)

// TestAttackListingAndLossWatchMatrix: on masters with a password, an ACL user,
// a database other than 0 and TLS, Inspect, a Scanner's pass and Describe list
// the held lock as the masters hold it (not a key of the same name in another
// database), the loss watch tracks, hears a deletion or an overwrite on a quorum
// at once, and takes nothing in another database for a loss.
func TestAttackListingAndLossWatchMatrix(t *testing.T) {
	const pw = "s3cret"
	tests := []struct {
		name   string
		tls    bool
		pass   bool
		user   string
		db     int
		change string // del, set, other-db
		noName bool   // the TLS configuration names no server
	}{
		{name: "plain", change: "del"},
		{name: "requirepass", pass: true, change: "del"},
		{name: "requirepass set", pass: true, change: "set"},
		{name: "acl user db 3", pass: true, user: "locker", db: 3, change: "del"},
		{name: "db 5", db: 5, change: "set"},
		{name: "db 5 other db touched", db: 5, change: "other-db"},
		{name: "tls", tls: true, change: "del"},
		{name: "tls, server name from the address", tls: true, noName: true, change: "set"},
		{name: "tls requirepass db 2", tls: true, pass: true, db: 2, change: "set"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			ctx := context.Background()
			c := redistest.Start(t, 3, redistest.Options{TLS: tt.tls})
			admins := make([]*redis.Client, len(c.Servers))
			for i, s := range c.Servers {
				opt := &redis.Options{Addr: s.Addr(), DB: tt.db}
				if tt.tls {
					opt.TLSConfig = s.TLSConfig()
				}
				rc := redis.NewClient(opt)
				if tt.user != "" {
					require.NoError(t, rc.ACLSetUser(ctx, tt.user, "on", ">"+pw, "~*", "&*", "+@all").Err())
				}
				if tt.pass {
					require.NoError(t, rc.ConfigSet(ctx, "requirepass", pw).Err())
					_ = rc.Close()
					opt.Password = pw
					rc = redis.NewClient(opt)
				}
				t.Cleanup(func() { _ = rc.Close() })
				admins[i] = rc
			}
			nodes := make([]Node, len(c.Servers))
			for i, s := range c.Servers {
				nodes[i] = Node{Name: s.Name, Addr: s.Addr(), DB: tt.db, Username: tt.user}
				if tt.pass {
					nodes[i].Password = pw
				}
				if tt.tls {
					nodes[i].TLS = s.TLSConfig()
					if tt.noName {
						nodes[i].TLS.ServerName = ""
					}
				}
			}
			m, err := New(nodes, WithRestartQuarantine(0), WithNodeTimeout(500*time.Millisecond))
			require.NoError(t, err)
			t.Cleanup(func() { _ = m.Close() })
			// A decoy in another DB, named as our lock.
			for _, a := range admins {
				other := redis.NewClient(&redis.Options{Addr: a.Options().Addr, DB: tt.db + 1, Password: a.Options().Password, Username: a.Options().Username, TLSConfig: a.Options().TLSConfig})
				require.NoError(t, other.Set(ctx, "lock:decoy", "x", 0).Err())
				_ = other.Close()
			}
			l, err := m.Acquire(ctx, "w", time.Minute, WithLossWatch())
			require.NoError(t, err)
			// An acquisition returns at its quorum: a master slower than the others
			// (the race detector, a busy machine) may get its SET after Acquire
			// returned (once, under -race: "" on one master).
			for _, a := range admins {
				assert.Eventually(t, func() bool { return a.Get(ctx, l.Key()).Val() == l.Token() }, 5*time.Second, time.Millisecond,
					"%s holds the lock's value", a.Options().Addr)
			}
			check := func(lst *lockListing) {
				t.Helper()
				names := map[string]string{}
				for _, x := range lst.Locks {
					names[x.Name] = x.Value
				}
				assert.Equal(t, map[string]string{"w": l.Token()}, names)
				for _, a := range lst.Masters {
					assert.True(t, a.Answered, "%s: %v", a.Master, a.Err)
				}
			}
			everyListing(t, m, []string{"w"}, check)

			armed(t, m, l)
			for _, tr := range m.losses().trackers {
				assert.True(t, tr.tracking.Load(), "%s: polls instead of tracking", tr.n.name)
			}
			t0 := time.Now()
			switch tt.change {
			case "del":
				for _, a := range admins[:2] {
					require.NoError(t, a.Del(ctx, l.Key()).Err())
				}
			case "set":
				for _, a := range admins[:2] {
					require.NoError(t, a.Set(ctx, l.Key(), "thief", time.Minute).Err())
				}
			case "other-db":
				for _, a := range admins {
					other := redis.NewClient(&redis.Options{Addr: a.Options().Addr, DB: tt.db + 1, Password: a.Options().Password, Username: a.Options().Username, TLSConfig: a.Options().TLSConfig})
					require.NoError(t, other.Set(ctx, l.Key(), "thief", time.Minute).Err())
					_ = other.Close()
				}
				select {
				case <-l.Done():
					t.Fatalf("lost on a key of another DB: %v", l.Err())
				case <-time.After(trackPoll + time.Second):
				}
				for _, a := range admins[:2] {
					require.NoError(t, a.Del(ctx, l.Key()).Err())
				}
				t0 = time.Now()
			}
			select {
			case <-l.Done():
				require.ErrorIs(t, l.Err(), ErrLost)
				t.Logf("heard in %v", time.Since(t0))
				assert.Less(t, time.Since(t0), 500*time.Millisecond, "heard promptly (tracked, not polled)")
			case <-time.After(trackPoll + 3*time.Second):
				t.Fatal("the loss was not heard")
			}
		})
	}
}

// everyListing runs check on Inspect's listing, a Scanner's first pass and
// Describe of names.
func everyListing(t *testing.T, m *Manager, names []string, check func(*lockListing)) {
	t.Helper()
	ctx := context.Background()
	lst, err := m.inspect(ctx, "")
	require.NoError(t, err)
	check(lst)
	s := m.newScanner("")
	scanAll(t, s)
	lst, err = s.Listing()
	require.NoError(t, err)
	check(lst)
	lst, err = m.describe(ctx, names)
	require.NoError(t, err)
	check(lst)
}

// TestAttackListingHostileKeys: keys named like RESP replies, with CR LF, of 2
// MiB, of other types and with values of megabytes beside a held lock: every
// listing lists the lock as held on every master, and writes to those keys are
// no loss for the loss watch, which still hears the lock's own.
func TestAttackListingHostileKeys(t *testing.T) {
	ctx := context.Background()
	c, m := testCluster(t, 3)
	big := "lock:" + string(make([]byte, 2<<20))
	hostile := []string{"lock:a\r\nb", big, "lock:*1\r\n$3\r\nfoo\r\n", "lock:-ERR x\r\n", "lock:+OK", "lock:$-1\r\n"}
	for _, s := range c.Servers {
		for _, k := range hostile {
			require.NoError(t, s.Client().Set(ctx, k, "*3\r\n", 0).Err())
		}
		require.NoError(t, s.Client().RPush(ctx, "lock:alist", "x").Err())
		require.NoError(t, s.Client().ZAdd(ctx, "lock:az", redis.Z{Score: 1, Member: "y"}).Err())
		require.NoError(t, s.Client().Set(ctx, "lock:bigval", string(make([]byte, 3<<20)), 0).Err())
	}
	l, err := m.Acquire(ctx, "x*2$3-ERR", time.Minute, WithLossWatch())
	require.NoError(t, err)
	check := func(lst *lockListing) {
		t.Helper()
		found := false
		for _, x := range lst.Locks {
			if x.Name == "x*2$3-ERR" {
				found = true
				assert.Equal(t, l.Token(), x.Value)
				assert.Equal(t, 3, x.Votes)
			}
		}
		assert.True(t, found, "the held lock is listed")
		for _, a := range lst.Masters {
			assert.True(t, a.Answered, "%s: %v", a.Master, a.Err)
		}
		t.Logf("%d locks", len(lst.Locks))
	}
	everyListing(t, m, []string{"x*2$3-ERR", big[len("lock:"):], "a\r\nb"}, check)
	armed(t, m, l)
	// Touch every hostile key, then delete ours on two masters.
	for _, s := range c.Servers {
		for _, k := range hostile {
			require.NoError(t, s.Client().Set(ctx, k, "y", 0).Err())
		}
	}
	select {
	case <-l.Done():
		t.Fatalf("lost early: %v", l.Err())
	case <-time.After(200 * time.Millisecond):
	}
	for _, s := range c.Servers[:2] {
		require.NoError(t, s.Client().Del(ctx, l.Key()).Err())
	}
	select {
	case <-l.Done():
		require.ErrorIs(t, l.Err(), ErrLost)
	case <-time.After(trackPoll + 3*time.Second):
		t.Fatal("the loss was not heard")
	}
}

// TestAttackLossWatchPausedMasterWithPassword: one master paused while the two
// others lose the key: heard promptly on masters that require a password.
func TestAttackLossWatchPausedMasterWithPassword(t *testing.T) {
	ctx := context.Background()
	c := redistest.Start(t, 3, redistest.Options{})
	admins := make([]*redis.Client, 3)
	for i, s := range c.Servers {
		require.NoError(t, s.Client().ConfigSet(ctx, "requirepass", "pw").Err())
		admins[i] = redis.NewClient(&redis.Options{Addr: s.Addr(), Password: "pw", DB: 1})
		t.Cleanup(func() { _ = admins[i].Close() })
	}
	m := managerVia(t, c, func(_ int, n *Node) { n.Password, n.DB = "pw", 1 }, WithNodeTimeout(300*time.Millisecond))
	l, err := m.Acquire(ctx, "pp", time.Minute, WithLossWatch())
	require.NoError(t, err)
	armed(t, m, l)
	c.Servers[2].Stop()
	defer c.Servers[2].Cont()
	time.Sleep(1500 * time.Millisecond)
	for _, a := range admins[:2] {
		require.NoError(t, a.Set(ctx, l.Key(), "other", time.Minute).Err())
	}
	t0 := time.Now()
	select {
	case <-l.Done():
		require.ErrorIs(t, l.Err(), ErrLost)
		t.Logf("heard in %v", time.Since(t0))
	case <-time.After(trackPoll + 3*time.Second):
		t.Fatal("the loss was not heard")
	}
}

// TestAttackScannerAcrossScriptFlush: a Scanner's steps with SCRIPT FLUSH
// between them (list_read.lua gone: NOSCRIPT, then EVAL) list every key.
func TestAttackScannerAcrossScriptFlush(t *testing.T) {
	ctx := context.Background()
	c, m := testCluster(t, 3)
	const n = 3000
	for _, s := range c.Servers {
		p := s.Client().Pipeline()
		for i := 0; i < n; i++ {
			if i%2 == 0 {
				p.HSet(ctx, "lock:h"+strconv.Itoa(i), "f", "v")
			} else {
				p.Set(ctx, "lock:s"+strconv.Itoa(i), "v", 0)
			}
		}
		_, err := p.Exec(ctx)
		require.NoError(t, err)
	}
	s := m.newScanner("")
	steps := 0
	for !s.Progress().Complete && steps < 1000 {
		require.NoError(t, s.Step(ctx))
		steps++
		for _, sv := range c.Servers {
			require.NoError(t, sv.Client().ScriptFlush(ctx).Err())
		}
	}
	lst, err := s.Listing()
	require.NoError(t, err)
	t.Logf("%d steps, %d locks", steps, len(lst.Locks))
	assert.Len(t, lst.Locks, n)
	for _, x := range lst.Locks {
		want := 3
		if x.Name[0] == 'h' {
			want = 0 // another type: no lock
		}
		if !assert.Equal(t, want, x.Votes, "%s", x.Name) {
			break
		}
	}
}
