package e2e

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/redlock/redlock/internal/redistest"
)

// aclUsers returns the ACL SETUSER lines of docs/acl.md, by user name, as
// arguments after "ACL SETUSER NAME".
func aclUsers(t *testing.T) map[string][]string {
	t.Helper()
	f, err := os.Open(filepath.Join("..", "..", "docs", "acl.md"))
	require.NoError(t, err)
	defer f.Close()
	users := map[string][]string{}
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		fields := strings.Fields(sc.Text())
		if len(fields) > 3 && fields[0] == "ACL" && fields[1] == "SETUSER" {
			users[fields[2]] = fields[3:]
		}
	}
	require.NoError(t, sc.Err())
	require.Contains(t, users, "locker", "docs/acl.md declares the lock user")
	require.Contains(t, users, "admin", "docs/acl.md declares the admin user")
	return users
}

// newACLEnv is three masters on which the users of docs/acl.md exist with the
// password aclPassword, and a topology file that logs in as var.user.
func newACLEnv(t *testing.T) *env {
	t.Helper()
	c := redistest.Start(t, 3, redistest.Options{})
	ctx := context.Background()
	for name, rules := range aclUsers(t) {
		args := []any{"ACL", "SETUSER", name}
		for _, r := range rules {
			args = append(args, strings.Replace(r, ">CHANGE-ME", ">"+aclPassword, 1))
		}
		for _, s := range c.Servers {
			require.NoError(t, s.Client().Do(ctx, args...).Err(), "master %s: user %s", s.Name, name)
		}
	}
	var b strings.Builder
	b.WriteString(`variable "user" {
  type    = string
  default = "locker"
}
variable "redis_password" {
  type      = string
  sensitive = true
  default   = "` + aclPassword + `"
}
`)
	b.WriteString(clusterHead("e2e-acl"))
	b.WriteString(`  defaults {
    username = var.user
    password = var.redis_password
  }
  lock "fair/*" {
    fair = true
  }
  lock "fenced/*" {
    fencing = true
  }
  lock "pool/*" {
    permits = 2
  }
`)
	for _, s := range c.Servers {
		fmt.Fprintf(&b, "  master %q { address = %q }\n", s.Name, s.Addr())
	}
	b.WriteString("}\n")
	path := filepath.Join(t.TempDir(), "redlock.hcl")
	require.NoError(t, os.WriteFile(path, []byte(b.String()), 0o600))
	return &env{t: t, c: c, config: path}
}

const aclPassword = "acl-test-password"

// Every operation of the lock user, as docs/acl.md lists them, works with
// exactly the rights that page grants, and leaves nothing behind.
func TestACLLockUserCanDoWhatTheDocsSay(t *testing.T) {
	e := newACLEnv(t)
	ok := func(args ...string) string {
		t.Helper()
		r := e.run(args...)
		require.Equal(t, 0, r.code, "%v: %s", args, r.stderr)
		assert.NotContains(t, r.stderr, "NOPERM", "%v", args)
		assert.NotContains(t, r.stderr, aclPassword, "%v", args)
		return strings.TrimSpace(r.stdout)
	}

	token := ok("acquire", "job", "-ttl", "5s")
	assert.Equal(t, 3, e.run("acquire", "job", "-wait", "0").code, "held")
	ok("extend", "job", "-token", token, "-ttl", "5s")
	ok("release", "job", "-token", token)
	assert.Empty(t, e.keys("lock:job"))

	// Fair: a waiter queued behind the holder gets the lock once it is released.
	fairTok := ok("acquire", "fair/a", "-ttl", "5s")
	waiter := e.start("acquire", "fair/a", "-ttl", "5s", "-wait", "8s")
	require.Eventually(t, func() bool {
		n, err := e.c.Servers[0].Client().Exists(context.Background(), "lock:fair/a:queue").Result()
		return err == nil && n == 1
	}, 5*time.Second, 10*time.Millisecond, "the waiter queues")
	ok("release", "fair/a", "-token", fairTok)
	require.Equal(t, 0, waiter.wait(t, 10*time.Second), waiter.stderr.String())

	var fenced struct {
		Fence int64 `json:"fence"`
	}
	require.NoError(t, json.Unmarshal([]byte(ok("acquire", "fenced/x", "-json")), &fenced))
	assert.Positive(t, fenced.Fence)

	ok("acquire", "pool/p")
	permit := ok("acquire", "pool/p")
	assert.Equal(t, 3, e.run("acquire", "pool/p", "-wait", "0").code, "both permits taken")
	ok("extend", "pool/p", "-token", permit, "-ttl", "5s")
	ok("release", "pool/p", "-token", permit)
	assert.Empty(t, e.keys("lock:pool/p:permit:1"), "the permit found by its token is released")
	ok("acquire", "pool/p")

	multi := ok("acquire", "m1", "m2")
	ok("release", "m1", "m2", "-token", multi)
	shared := ok("acquire", "s", "-shared")
	ok("acquire", "s", "-shared")
	ok("release", "s", "-token", shared)

	ok("acquire", "stuck", "-owner", "crashed")
	ok("force-expire", "stuck", "-yes", "-now")
	assert.Empty(t, e.keys("lock:stuck"))
	ok("acquire", "stuck", "-owner", "crashed")
	assert.Equal(t, 6, e.run("force-expire", "stuck", "-yes").code, "a revocation needs no more commands")
	assert.Len(t, e.keys("lock:stuck"), 3, "its tombstones")
	ok("force-expire", "stuck", "-yes", "-now")

	ok("run", "r", "--", "true")
	ok("elect", "e", "-wait", "5s", "--", "true")
	ok("nodes")

	var doc locksDoc
	require.NoError(t, json.Unmarshal([]byte(ok("locks", "-json")), &doc))
	names := map[string]bool{}
	for _, l := range doc.Locks {
		names[l.Name] = true
	}
	for _, n := range []string{"fair/a", "fenced/x", "pool/p:permit:0", "pool/p:permit:1", "s"} {
		assert.True(t, names[n], "locks -json lists %s: %v", n, names)
	}

	// events (poll mode) runs until Ctrl-C and reports what it saw.
	ev := e.start("events", "-mode", "poll", "-json", "-interval", "100ms", "-timeout", "20s")
	require.Eventually(t, func() bool { return strings.Contains(ev.stdout.String(), "fenced/x") }, 10*time.Second,
		20*time.Millisecond, "events lists the held locks; stderr: %s", ev.stderr)
	require.NoError(t, ev.cmd.Process.Signal(syscall.SIGINT))
	assert.Equal(t, 0, ev.wait(t, 10*time.Second), ev.stderr.String())
	assert.NotContains(t, ev.stderr.String(), "NOPERM")
	assert.Contains(t, ev.stderr.String(), "poll mode (keyspace notifications on 0 of 3 masters; notify-keyspace-events unread on a, b, c)",
		"auto mode lists, and says why")
}

// plan and apply work as the admin user; as the lock user, plan says which
// right is missing and apply changes nothing.
func TestACLAdminUserPlansAndApplies(t *testing.T) {
	e := newACLEnv(t)
	asLocker := e.run("plan", "-detailed-exitcode")
	assert.Equal(t, 1, asLocker.code, "the lock user cannot read CONFIG: no \"no changes\": %s", asLocker.stdout)
	assert.Contains(t, asLocker.stdout, "config-denied")
	assert.Contains(t, asLocker.stdout, "+config|get", "the refusal says which permission is missing")
	assert.NotContains(t, asLocker.stdout+asLocker.stderr, aclPassword)
	r := e.run("apply", "-auto-approve")
	assert.NotEqual(t, 0, r.code, "apply as the lock user: %s", r.stdout)
	for _, s := range e.c.Servers {
		got, err := s.Client().ConfigGet(context.Background(), "appendfsync").Result()
		require.NoError(t, err)
		assert.NotEqual(t, "always", got["appendfsync"], "master %s unchanged", s.Name)
	}

	plan := e.run("plan", "-detailed-exitcode", "-var", "user=admin")
	require.Equal(t, 2, plan.code, "admin sees the settings drift: %s%s", plan.stdout, plan.stderr)
	r = e.run("apply", "-auto-approve", "-var", "user=admin")
	require.Equal(t, 0, r.code, r.stdout+r.stderr)
	plan = e.run("plan", "-detailed-exitcode", "-var", "user=admin")
	assert.Equal(t, 0, plan.code, "settled: %s%s", plan.stdout, plan.stderr)
	assert.NotContains(t, plan.stdout+plan.stderr, "NOPERM")
}

// A master whose user lacks a right the round needs counts as failed, named with
// its NOPERM error; when that costs the quorum, nothing is left locked anywhere.
func TestACLRefusedCommandLeavesNothingLocked(t *testing.T) {
	e := newACLEnv(t)
	ctx := context.Background()
	for _, s := range e.c.Servers[1:] {
		require.NoError(t, s.Client().Do(ctx, "ACL", "SETUSER", "locker", "-set").Err())
	}
	r := e.run("acquire", "job", "-ttl", "5s")
	assert.Equal(t, 1, r.code, "no quorum: %s%s", r.stdout, r.stderr)
	assert.Contains(t, r.stderr, "NOPERM")
	for _, s := range e.c.Servers[1:] {
		assert.Contains(t, r.stderr, s.Name+" (NOPERM", "names the refusing master")
	}
	assert.Empty(t, e.keys("lock:job"), "what the one permitted master set is released")
	assert.NotContains(t, r.stderr, aclPassword)
}

// Without +info and with the restart quarantine on, a master is not used, and
// the error says what to grant, as docs/acl.md says.
func TestACLWithoutInfoTheQuarantineSaysWhatToGrant(t *testing.T) {
	e := newACLEnv(t)
	ctx := context.Background()
	for _, s := range e.c.Servers {
		require.NoError(t, s.Client().Do(ctx, "ACL", "SETUSER", "locker", "-info").Err())
	}
	file := e.variant("quarantine.hcl", "restart_quarantine = false", "restart_quarantine = true")
	r := e.run("acquire", "job", "-config", file)
	assert.Equal(t, 1, r.code, "%s%s", r.stdout, r.stderr)
	assert.Contains(t, r.stderr, "grant +info")
	assert.Empty(t, e.keys("lock:job"))
}

// events in keyspace mode works for the lock user with the additions docs/acl.md
// names for it; without them it says what it could not read and what to grant.
func TestBugEventsSaidNotificationsOffWhenItCouldNotReadThem(t *testing.T) {
	e := newACLEnv(t)
	e.keyspaceOn()
	ctx := context.Background()
	run := func() *background {
		return e.start("events", "-mode", "keyspace", "-json", "-timeout", "20s")
	}
	// Regression: the lock user may not read notify-keyspace-events, and events
	// said notifications were off ("declare ... and run apply") though they were on.
	without := run()
	code := without.wait(t, 15*time.Second)
	assert.Equal(t, 1, code, "the setting cannot be read: %s", without.stderr)
	assert.Contains(t, without.stderr.String(), "could not read notify-keyspace-events")
	assert.Contains(t, without.stderr.String(), "+config|get")
	assert.NotContains(t, without.stderr.String(), "run apply", "it is not off, it is unknown")

	// Redis matches a subscribed pattern against the granted ones literally: a
	// pattern missing is a refusal events says, not silence.
	for _, s := range e.c.Servers {
		require.NoError(t, s.Client().Do(ctx, "ACL", "SETUSER", "locker", "+config|get", "&__keyspace@0__:lock:*", "+psubscribe", "+punsubscribe").Err())
	}
	partial := run()
	require.Eventually(t, func() bool { return strings.Contains(partial.stderr.String(), "NOPERM") }, 10*time.Second,
		20*time.Millisecond, "the refused pattern is said; stderr: %s", partial.stderr)
	assert.Contains(t, partial.stderr.String(), "docs/acl.md")
	assert.Equal(t, 1, strings.Count(partial.stderr.String(), "master a:"), "said once per master: %s", partial.stderr)
	require.NoError(t, partial.cmd.Process.Signal(syscall.SIGINT))
	partial.wait(t, 10*time.Second)

	for _, s := range e.c.Servers {
		require.NoError(t, s.Client().Do(ctx, "ACL", "SETUSER", "locker", "&lock:*:wake").Err())
	}
	ev := run()
	time.Sleep(500 * time.Millisecond) // subscribed before the acquisition
	token := strings.TrimSpace(e.run("acquire", "ks", "-ttl", "5s").stdout)
	require.NotEmpty(t, token)
	require.Eventually(t, func() bool { return strings.Contains(ev.stdout.String(), `"ks"`) }, 10*time.Second,
		20*time.Millisecond, "keyspace events seen; stderr: %s", ev.stderr)
	require.NoError(t, ev.cmd.Process.Signal(syscall.SIGINT))
	assert.Equal(t, 0, ev.wait(t, 10*time.Second), ev.stderr.String())
	assert.NotContains(t, ev.stderr.String(), "NOPERM")
}
