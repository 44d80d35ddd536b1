//go:build unix

package faults

import (
	"context"
	"fmt"
	"strconv"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/redlock/redlock/internal/redistest"
)

// KillRestart kills s with SIGKILL and starts it again on the same port after
// delay (0 = at once). Without keepData its data directory is emptied first, so a
// master without persistence forgets every key; with keepData an AOF is reloaded.
func KillRestart(s *redistest.Server, delay time.Duration, keepData bool) {
	s.Kill()
	if delay > 0 {
		time.Sleep(delay)
	}
	s.Restart(keepData)
}

// Pause stops s with SIGSTOP for d, then resumes it. It blocks for d.
func Pause(s *redistest.Server, d time.Duration) {
	s.Stop()
	time.Sleep(d)
	s.Cont()
}

// admin returns a short-lived administrative client for s (never lock traffic).
func admin(s *redistest.Server) *redis.Client {
	return redis.NewClient(&redis.Options{Addr: s.Addr(), Protocol: 2, DisableIdentity: true, MaxRetries: -1,
		ContextTimeoutEnabled: true, PoolSize: 1})
}

// DebugSleep makes s sleep for d inside one command (DEBUG SLEEP): the whole
// server stops answering. It returns when the sleep has started; the command's
// own reply is awaited in the background. The server needs
// --enable-debug-command (redistest enables it).
func DebugSleep(ctx context.Context, s *redistest.Server, d time.Duration) error {
	probe := admin(s)
	defer probe.Close()
	if err := probe.Ping(ctx).Err(); err != nil {
		return fmt.Errorf("DEBUG SLEEP on %s: %w", s.Name, err)
	}
	c := admin(s)
	errc := make(chan error, 1)
	go func() {
		defer c.Close()
		errc <- c.Do(context.WithoutCancel(ctx), "DEBUG", "SLEEP", strconv.FormatFloat(d.Seconds(), 'f', 3, 64)).Err()
	}()
	// The sleep has started when PING on another connection stops answering fast.
	deadline := time.Now().Add(time.Second)
	for time.Now().Before(deadline) {
		select {
		case err := <-errc:
			if err != nil {
				return fmt.Errorf("DEBUG SLEEP on %s: %w", s.Name, err)
			}
			return nil // slept already (a very short d)
		default:
		}
		pctx, cancel := context.WithTimeout(ctx, 20*time.Millisecond)
		err := probe.Ping(pctx).Err()
		cancel()
		if err != nil {
			return nil
		}
	}
	return fmt.Errorf("DEBUG SLEEP on %s did not start within 1s", s.Name)
}

// ClientPause suspends clients of s for d with CLIENT PAUSE (mode "WRITE" or
// "ALL"): commands queue and run when the pause ends.
func ClientPause(ctx context.Context, s *redistest.Server, d time.Duration, mode string) error {
	c := admin(s)
	defer c.Close()
	if err := c.Do(ctx, "CLIENT", "PAUSE", d.Milliseconds(), mode).Err(); err != nil {
		return fmt.Errorf("CLIENT PAUSE on %s: %w", s.Name, err)
	}
	return nil
}

// shiftScript moves the TTL of every key matching ARGV[1] by ARGV[2] ms; a key whose
// TTL drops to 0 or below is deleted (it would have expired). Keys without a TTL
// are left alone. Returns the number of keys changed.
var shiftScript = redis.NewScript(`
local n = 0
for _, k in ipairs(redis.call('KEYS', ARGV[1])) do
  local t = redis.call('PTTL', k)
  if t > 0 then
    local nt = t + tonumber(ARGV[2])
    if nt <= 0 then redis.call('DEL', k) else redis.call('PEXPIRE', k, nt) end
    n = n + 1
  end
end
return n`)

// ShiftClock models a wall-clock jump on master s for keys matching pattern: a
// negative delta makes every lock expire sooner (the clock jumped forward), a
// positive one later. It returns the number of keys changed. (libfaketime does not
// work with Debian's redis-server, hence the script.)
func ShiftClock(ctx context.Context, s *redistest.Server, pattern string, delta time.Duration) (int64, error) {
	c := admin(s)
	defer c.Close()
	n, err := shiftScript.Run(ctx, c, nil, pattern, delta.Milliseconds()).Int64()
	if err != nil {
		return 0, fmt.Errorf("shift clock on %s: %w", s.Name, err)
	}
	return n, nil
}

// SetConfig runs CONFIG SET name value on s.
func SetConfig(ctx context.Context, s *redistest.Server, name, value string) error {
	c := admin(s)
	defer c.Close()
	if err := c.ConfigSet(ctx, name, value).Err(); err != nil {
		return fmt.Errorf("CONFIG SET %s on %s: %w", name, s.Name, err)
	}
	return nil
}
