package e2e

import (
	"bytes"
	"context"
	"fmt"
	"maps"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// longTTLEnv is newEnv with a maximum TTL of two minutes: a hold that the
// keep-alive would not extend for tens of seconds.
func longTTLEnv(t *testing.T) *env {
	e := newEnv(t)
	b, err := os.ReadFile(e.config)
	require.NoError(t, err)
	require.NoError(t, os.WriteFile(e.config, bytes.Replace(b, []byte(`max_ttl      = "10s"`), []byte(`max_ttl      = "2m"`), 1), 0o600))
	return e
}

// startRun starts `redlock run NAME ARGS -- sh -c ...` whose child writes its
// token to a file and sleeps; it returns the command, its stderr, and the token
// once the child has it.
func startRun(t *testing.T, e *env, name string, args ...string) (*exec.Cmd, *syncBuffer, string) {
	t.Helper()
	tokFile := filepath.Join(t.TempDir(), "token")
	argv := append(append([]string{"run", name}, args...), "--", "sh", "-c", `printf %s "$REDLOCK_TOKEN" > `+tokFile+`.tmp && mv `+tokFile+`.tmp `+tokFile+` && exec sleep 120`)
	cmd := e.command("", argv...)
	errb := &syncBuffer{}
	cmd.Stderr = errb
	require.NoError(t, cmd.Start())
	t.Cleanup(func() { _ = cmd.Process.Kill() })
	var token []byte
	require.Eventually(t, func() bool {
		var err error
		token, err = os.ReadFile(tokFile)
		return err == nil && len(token) > 0
	}, 10*time.Second, 20*time.Millisecond, "run never started its command")
	return cmd, errb, string(token)
}

// waitListeners waits until, on every master, n clients listen for changes of
// the hold: subscribers of channel (the loss watch's wake-up channel), or
// clients with key tracking on (a watch that tracks the key instead).
func (e *env) waitListeners(channel string, n int64) {
	e.t.Helper()
	ctx := context.Background()
	require.Eventually(e.t, func() bool {
		for _, srv := range e.c.Servers {
			subs, err := srv.Client().PubSubNumSub(ctx, channel).Result()
			if err != nil {
				return false
			}
			list, err := srv.Client().ClientList(ctx).Result()
			if err != nil {
				return false
			}
			tracking := int64(0)
			for _, c := range strings.Split(list, "\n") {
				for _, f := range strings.Fields(c) {
					if flags, ok := strings.CutPrefix(f, "flags="); ok && strings.Contains(flags, "t") {
						tracking++
					}
				}
			}
			if subs[channel] < n && tracking < n {
				return false
			}
		}
		return true
	}, 10*time.Second, 20*time.Millisecond, "nobody listens on %s", channel)
}

// TestBugRunStopsWhenItsPermitOrShareIsRemoved: `run` of a semaphore permit, and
// of a shared hold whose holder is removed by token while another holder
// remains, stops its command once an administrator force-expires or releases the
// hold, long before the next extension (the TTL is 60 s: the keep-alive would
// not extend before 20 s), as a plain `run` does. It kept running until the
// next extension while the permit was already free for another holder.
func TestBugRunStopsWhenItsPermitOrShareIsRemoved(t *testing.T) {
	e := longTTLEnv(t)
	tests := []struct {
		name   string
		kind   []string
		remove func(name, token string) []string // the admin command
		code   int                               // its exit code: 6 for force-expire's revocation
	}{
		{"permit force-expired", []string{"-permits", "2"}, func(name, _ string) []string { return []string{"force-expire", name, "-yes"} }, 6},
		{"permit released by token", []string{"-permits", "2"}, func(name, token string) []string { return []string{"release", name, "-token", token} }, 0},
		{"share force-expired by token", []string{"-shared"}, func(name, token string) []string {
			return []string{"force-expire", name, "-token", token, "-yes"}
		}, 6},
		{"share released by token", []string{"-shared"}, func(name, token string) []string { return []string{"release", name, "-token", token} }, 0},
	}
	for i, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			name := fmt.Sprintf("adm%d", i)
			args := append([]string{"-ttl", "60s", "-grace", "1s"}, tt.kind...)
			other, otherErr, _ := startRun(t, e, name, args...) // another holder that stays
			cmd, errb, token := startRun(t, e, name, args...)
			// The loss watch subscribes in the background: a removal before
			// that is heard at the next extension only, by design. A permit's
			// holder listens on its slot's channel, a share's on the name's.
			channel, listeners := "lock:"+name+":wake", int64(2)
			for _, k := range []string{"lock:" + name + ":permit:0", "lock:" + name + ":permit:1"} {
				if slices.Contains(slices.Collect(maps.Values(e.keys(k))), token) {
					channel, listeners = k+":wake", 1
				}
			}
			e.waitListeners(channel, listeners)
			r := e.run(tt.remove(name, token)...)
			require.Equal(t, tt.code, r.code, r.stdout+r.stderr)
			start := time.Now()
			waited := make(chan error, 1)
			go func() { waited <- cmd.Wait() }()
			select {
			case err := <-waited:
				var ee *exec.ExitError
				require.ErrorAs(t, err, &ee, errb.String())
				assert.Equal(t, 4, ee.ExitCode(), errb.String())
				assert.Contains(t, errb.String(), "lock lost")
			case <-time.After(15 * time.Second):
				t.Fatalf("run kept its command running though its hold was removed: %s", errb.String())
			}
			t.Logf("stopped %v after the removal", time.Since(start))
			if strings.Contains(tt.name, "token") || strings.Contains(tt.name, "share") {
				assert.Nil(t, other.ProcessState, "the other holder's run goes on: %s", otherErr.String())
			}
		})
	}
}

// TestBugReleaseOfAnExpiredPermitByTokenIsMissing: `release NAME -token T` of a
// permit that expired (its slot free) while another holder keeps slot 0 says
// "missing" and exits 0, as for a plain lock; it said another owner held it on
// every master and exited 4. The other holder's permit is untouched.
func TestBugReleaseOfAnExpiredPermitByTokenIsMissing(t *testing.T) {
	e := newEnv(t)
	acquire := func(ttl string) string {
		r := e.run("acquire", "gone", "-permits", "2", "-ttl", ttl)
		require.Equal(t, 0, r.code, r.stderr)
		return strings.TrimSpace(r.stdout)
	}
	keep := acquire("10s")
	require.Len(t, e.keys("lock:gone:permit:0"), 5)
	ours := acquire("200ms")
	require.Eventually(t, func() bool { return len(e.keys("lock:gone:permit:1")) == 0 }, 10*time.Second, 20*time.Millisecond)

	r := e.run("release", "gone", "-token", ours)
	assert.Equal(t, 0, r.code, r.stdout+r.stderr)
	assert.Contains(t, r.stderr, "missing")
	assert.NotContains(t, r.stdout+r.stderr, "another owner")
	for _, v := range e.keys("lock:gone:permit:0") {
		assert.Equal(t, keep, v, "the other holder's permit is untouched")
	}
	assert.Len(t, e.keys("lock:gone:permit:0"), 5)
}

// TestBugPermitByTokenWithAMasterPaused: `extend` and `release` by token of the
// permit on slot 39 of 40, with one master of five paused, finish within their
// -timeout and act on that slot: the extension succeeds, the release deletes it
// on the four masters that answer and no other holder's permit. They tried the
// slots one round (one node timeout) each from slot 0, and failed about slot 0.
func TestBugPermitByTokenWithAMasterPaused(t *testing.T) {
	e := newEnv(t)
	const n = 40
	var ours string
	for range n {
		r := e.run("acquire", "big", "-permits", "40", "-ttl", "10s")
		require.Equal(t, 0, r.code, r.stderr)
		ours = strings.TrimSpace(r.stdout)
	}
	slot := fmt.Sprintf("lock:big:permit:%d", n-1)
	require.Len(t, e.keys(slot), 5)
	require.Equal(t, ours, e.keys(slot)[e.c.Servers[0].Name])
	paused := e.c.Servers[4]
	paused.Stop()
	t.Cleanup(paused.Cont)

	r := e.run("extend", "big", "-token", ours, "-ttl", "10s", "-timeout", "5s")
	assert.Equal(t, 0, r.code, r.stdout+r.stderr)
	r = e.run("release", "big", "-token", ours, "-timeout", "5s")
	assert.Equal(t, 0, r.code, r.stdout+r.stderr)
	assert.Contains(t, r.stderr, "deleted on 4 of 5", r.stdout+r.stderr)
	for _, s := range e.c.Servers[:4] {
		keys := s.Keys(context.Background())
		assert.NotContains(t, keys, slot, "%s: our permit is released", s.Name)
		for j := range n - 1 {
			assert.Contains(t, keys, fmt.Sprintf("lock:big:permit:%d", j), "%s: another holder's permit is kept", s.Name)
		}
	}
}
