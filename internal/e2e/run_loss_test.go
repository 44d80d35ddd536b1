package e2e

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// runLossCauses take a run's lock away on a quorum (3 of 5 masters). Each
// returns the moment from which the loss counts: the start of the last read
// that still saw the value on a quorum, or for a restart the moment the third
// master answered again, empty.
var runLossCauses = []struct {
	name   string
	remove func(e *env, adm admins, name, key string)
}{
	{"del", func(e *env, adm admins, _, key string) {
		for _, c := range adm[:3] {
			require.NoError(e.t, c.Del(context.Background(), key).Err())
		}
	}},
	{"set", func(e *env, adm admins, _, key string) {
		for _, c := range adm[:3] {
			require.NoError(e.t, c.Set(context.Background(), key, "rl1.other.someone", 0).Err())
		}
	}},
	{"flushall", func(e *env, adm admins, _, _ string) {
		for _, c := range adm[:3] {
			require.NoError(e.t, c.FlushAll(context.Background()).Err())
		}
	}},
	{"restart-empty", nil},
	{"force-expire", func(e *env, _ admins, name, _ string) {
		r := e.run("force-expire", name, "-yes")
		require.Equal(e.t, 6, r.code, "revoked: "+r.stderr)
	}},
	{"force-expire-now", func(e *env, _ admins, name, _ string) {
		r := e.run("force-expire", name, "-yes", "-now")
		require.Equal(e.t, 0, r.code, r.stderr)
	}},
}

// admins are one administrative client per master, made once: the loss is
// polled every millisecond, and each Server.Client is a new connection.
type admins []*redis.Client

func (e *env) admins() admins {
	var out admins
	for _, s := range e.c.Servers {
		out = append(out, s.Client())
	}
	return out
}

// heldOn counts the masters whose key holds value.
func (a admins) heldOn(key, value string) int {
	n := 0
	for _, c := range a {
		if v, err := c.Get(context.Background(), key).Result(); err == nil && v == value {
			n++
		}
	}
	return n
}

// memberOn counts the masters whose sorted set key has member (a shared holder).
func (a admins) memberOn(key, member string) int {
	n := 0
	for _, c := range a {
		if err := c.ZScore(context.Background(), key, member).Err(); err == nil {
			n++
		}
	}
	return n
}

// runLossKind is one kind of hold that run (or elect) keeps: the command line
// before "--", and how to find the key whose loss is the hold's loss.
type runLossKind struct {
	name string
	args []string
	// hold returns the key taken away and a count of the masters still
	// holding the hold's value in it; "" while no quorum holds it.
	hold func(a admins) (key string, on func() int)
}

// stringHold finds lock's hold in a string key (a mutex, a permit's slot, one
// name of a multi-name lock, a leadership).
func stringHold(lock string) func(a admins) (string, func() int) {
	return func(a admins) (string, func() int) {
		key, value := a.heldKey(lock)
		return key, func() int { return a.heldOn(key, value) }
	}
}

var runLossKinds = []runLossKind{
	{"mutex", []string{"run", "loss/m"}, stringHold("loss/m")},
	{"permit", []string{"run", "pool/loss"}, stringHold("pool/loss")},
	{"shared", []string{"run", "-shared", "rw/loss"}, func(a admins) (string, func() int) {
		key := "lock:rw/loss"
		ms, err := a[0].ZRange(context.Background(), key, 0, -1).Result()
		if err != nil || len(ms) != 1 || a.memberOn(key, ms[0]) < 3 {
			return "", nil
		}
		return key, func() int { return a.memberOn(key, ms[0]) }
	}},
	// A multi-name lock loses one of its names (all of them under FLUSHALL).
	{"multi", []string{"run", "multi/a", "multi/b"}, stringHold("multi/b")},
	{"leadership", []string{"elect", "lead/loss"}, func(a admins) (string, func() int) {
		key := "lock:lead/loss:leader" // not its :fence nor its :term
		value, err := a[0].Get(context.Background(), key).Result()
		if err != nil || a.heldOn(key, value) < 3 {
			return "", nil
		}
		return key, func() int { return a.heldOn(key, value) }
	}},
}

// lossTrials is how many times each cause is tried: REDLOCK_LOSS_TRIALS, 1 by
// default (the distribution in SAFETY.md is measured with 50).
func lossTrials(t *testing.T) int {
	s := os.Getenv("REDLOCK_LOSS_TRIALS")
	if s == "" {
		return 1
	}
	n, err := strconv.Atoi(s)
	require.NoError(t, err, "REDLOCK_LOSS_TRIALS")
	return n
}

// TestBugRunStopsTheCommandOnAnyLoss: run heard of a loss only through this
// tool's own force-expire notification or its next extension: a DEL, a SET of
// another value, FLUSHALL or a restart without persistence on 3 of 5 masters
// left the command running until the keep-alive's next round. Now run (elect
// for a leadership) must SIGTERM the command (which writes the moment it got
// it) within a second of the loss, exit 4, and leave no child behind, for
// every kind of hold: a mutex, a permit, a shared hold, a multi-name lock and
// a leadership. The delays are logged per cause (p50, p99, max over
// REDLOCK_LOSS_TRIALS).
func TestBugRunStopsTheCommandOnAnyLoss(t *testing.T) {
	e := newEnv(t)
	adm := e.admins()
	trials := lossTrials(t)
	for _, kind := range runLossKinds {
		for _, cause := range runLossCauses {
			t.Run(kind.name+"/"+cause.name, func(t *testing.T) {
				e.t = t
				var took []time.Duration
				for i := range trials {
					took = append(took, e.runLoss(adm, kind, cause.name, cause.remove, i))
				}
				slices.Sort(took)
				t.Logf("%s %s: n=%d p50=%v p99=%v max=%v", kind.name, cause.name, len(took),
					took[len(took)/2], took[(len(took)*99+99)/100-1], took[len(took)-1])
			})
		}
	}
}

// runLoss runs one trial: a run (or elect) of kind whose child traps SIGTERM,
// the hold taken away by remove (nil: the first three masters restarted
// empty), and the time from the loss to the child's SIGTERM.
func (e *env) runLoss(adm admins, kind runLossKind, cause string, remove func(e *env, adm admins, name, key string), i int) time.Duration {
	t := e.t
	file := filepath.Join(t.TempDir(), fmt.Sprintf("term%d", i))
	script := fmt.Sprintf(`trap 'echo "term $(date +%%s%%N)" >> %q; exit 0' TERM; while :; do sleep 0.01; done`, file)
	args := append([]string{kind.args[0], "-ttl", "10s", "-grace", "1s"}, kind.args[1:]...)
	run := e.command("", append(args, "--", "sh", "-c", script)...)
	var errb bytes.Buffer
	run.Stderr = &errb
	require.NoError(t, run.Start())
	var key string
	var on func() int
	require.Eventually(t, func() bool {
		key, on = kind.hold(adm)
		return key != ""
	}, 10*time.Second, 10*time.Millisecond, "%s never took %v", kind.args[0], kind.args[1:])
	time.Sleep(200 * time.Millisecond) // the watch has read the keys
	lastHeld := make(chan time.Time, 1)
	if remove == nil {
		for _, s := range e.c.Servers[:3] {
			s.Restart(false)
		}
		lastHeld <- time.Now()
	} else {
		go func() {
			held := time.Now()
			for {
				at := time.Now()
				if on() < 3 {
					lastHeld <- held
					return
				}
				held = at
				time.Sleep(time.Millisecond)
			}
		}()
		remove(e, adm, strings.TrimPrefix(key, "lock:"), key)
	}
	before := <-lastHeld
	waited := make(chan error, 1)
	go func() { waited <- run.Wait() }()
	select {
	case err := <-waited:
		var ee *exec.ExitError
		require.ErrorAs(t, err, &ee, errb.String())
		assert.Equal(t, 4, ee.ExitCode(), errb.String())
	case <-time.After(8 * time.Second):
		_ = run.Process.Kill()
		t.Fatalf("run did not stop within 8s of the loss (%s): %s", cause, errb.String())
	}
	b, err := os.ReadFile(file)
	require.NoError(t, err, "the command never got SIGTERM")
	f := strings.Fields(string(b))
	require.Len(t, f, 2, string(b))
	ns, err := strconv.ParseInt(f[1], 10, 64)
	require.NoError(t, err)
	took := time.Unix(0, ns).Sub(before)
	assert.Less(t, took, time.Second, "SIGTERM reached the command %v after the loss (%s)", took, cause)
	for _, c := range adm {
		require.NoError(t, c.FlushAll(context.Background()).Err())
	}
	return took
}

// heldKey returns the key of lock's hold (a mutex's key, or a permit's slot)
// and its value, when a quorum holds one; "" else.
func (a admins) heldKey(lock string) (key, value string) {
	ks, err := a[0].Keys(context.Background(), "lock:"+lock+"*").Result()
	if err != nil {
		return "", ""
	}
	for _, k := range ks {
		if strings.HasSuffix(k, ":queue") {
			continue
		}
		v, err := a[0].Get(context.Background(), k).Result()
		if err == nil && a.heldOn(k, v) >= 3 {
			return k, v
		}
	}
	return "", ""
}

// TestBugRunKilledFreesTheName: run SIGKILLed while its command runs. The guard
// killed the command at once, but the lock stayed on the masters until its
// validity ended (10 s here): the name was taken by nobody and free for nobody.
// Once the command is gone the guard now releases the lock by its token, so the
// name is free within a few round trips of the command's end.
func TestBugRunKilledFreesTheName(t *testing.T) {
	e := newEnv(t)
	for _, lock := range []string{"orphan/m", "pool/orphan"} {
		t.Run(lock, func(t *testing.T) {
			adm := e.admins()
			file := filepath.Join(t.TempDir(), "ticks")
			run := e.command("", "run", lock, "-ttl", "10s", "--", "sh", "-c", ticker("a", file))
			require.NoError(t, run.Start())
			var key string
			require.Eventually(t, func() bool {
				key, _ = adm.heldKey(lock)
				return key != ""
			}, 10*time.Second, 10*time.Millisecond, "run never took %s", lock)
			require.Eventually(t, func() bool {
				if _, err := os.Stat(file); err != nil {
					return false
				}
				pid, _ := ticks(t, file, "a")
				return pid > 0
			}, 5*time.Second, 10*time.Millisecond, "the command never ticked")
			require.NoError(t, run.Process.Kill())
			_ = run.Wait()
			killed := time.Now()
			pid, _ := ticks(t, file, "a")
			require.Eventually(t, func() bool { return !alive(pid) }, 2*time.Second, 10*time.Millisecond, "the command outlived run")
			require.Eventually(t, func() bool {
				for _, c := range adm {
					if n, err := c.Exists(context.Background(), key).Result(); err != nil || n != 0 {
						return false
					}
				}
				return true
			}, 3*time.Second, 10*time.Millisecond, "the lock stayed on the masters after run and its command were gone")
			t.Logf("%s free %v after run was killed", lock, time.Since(killed))
			r := e.run("acquire", lock, "-ttl", "1s")
			require.Equal(t, 0, r.code, r.stderr)
		})
	}
}
