package quorum

import (
	"context"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/redlock/redlock/internal/redistest"
)

// The lock user of docs/acl.md, read from it (keys and channels under lock: only, no CONFIG, no
// KEYS) takes, releases and is woken as the default user is.
func TestAttackShortReleaseUnderTheACLLockUser(t *testing.T) {
	ctx := context.Background()
	c := redistest.Start(t, 3, redistest.Options{})
	for _, s := range c.Servers {
		require.NoError(t, s.Client().Do(ctx, docACL(t, "locker")...).Err())
	}
	asLocker := func(_ int, n *Node) { n.Username, n.Password = "locker", "pw" }
	holder := managerVia(t, c, asLocker)
	waiter := managerVia(t, c, asLocker, waiterOpts()...)
	for _, opts := range [][]LockOption{nil, {WithFair()}} {
		for round := range 3 {
			l, err := holder.Acquire(ctx, "acl", time.Minute)
			require.NoError(t, err)
			d := wakeAfter(t, 300*time.Millisecond, func(ctx context.Context) (*Lock, error) {
				return waiter.Acquire(ctx, "acl", time.Minute, opts...)
			}, func() {
				for _, s := range c.Servers { // NOSCRIPT on the second round: EVAL as the lock user
					if round == 1 {
						require.NoError(t, s.Client().ScriptFlush(ctx).Err())
					}
				}
				require.NoError(t, l.Release(ctx))
			})
			assert.Less(t, d, wakeBound, "round %d %v: the waiter slept its retry delay", round, opts)
		}
	}
	for _, s := range c.Servers {
		// Nothing was refused: the ACL log is empty.
		log, err := s.Client().Do(ctx, "ACL", "LOG").Slice()
		require.NoError(t, err)
		assert.Empty(t, log, "%s refused something", s.Name)
	}
	checkLeftKeys(t, c, "lock:acl")
}

// The release script as it was before the short form (an older client: it was
// given NAME:queue and the channel), racing waiters of this version: they are
// woken as by the short form. And a plain waiter of this version with a holder
// that releases through ReleaseToken (the long form, "all").
func TestAttackShortReleaseMixedWithTheLongForm(t *testing.T) {
	ctx := context.Background()
	c, holder := testCluster(t, 5)
	waiter := managerFor(t, c, waiterOpts()...)
	old := redis.NewScript(withWakeHead(oldReleaseSrc))
	for round := range 6 {
		opts := []LockOption(nil)
		if round%2 == 1 {
			opts = []LockOption{WithFair()}
		}
		l, err := holder.Acquire(ctx, "mixed", time.Minute)
		require.NoError(t, err)
		d := wakeAfter(t, time.Duration(round)*60*time.Millisecond, func(ctx context.Context) (*Lock, error) {
			return waiter.Acquire(ctx, "mixed", time.Minute, opts...)
		}, func() {
			switch round % 3 {
			case 0: // an older client's release: the long form of the previous script
				for _, s := range c.Servers {
					r, err := old.Run(ctx, s.Client(), []string{"lock:mixed", "lock:mixed:queue"}, l.Token(), "lock:mixed:wake").Int()
					require.NoError(t, err)
					assert.Equal(t, 1, r)
				}
			case 1: // ReleaseToken: the long form with "all"
				_, err := holder.releaseToken(ctx, "mixed", l.Token())
				require.NoError(t, err)
			default:
				require.NoError(t, l.Release(ctx))
			}
		})
		_ = l.Release(ctx)
		assert.Less(t, d, wakeBound, "round %d: the waiter slept its retry delay", round)
	}
	checkLeftKeys(t, c, "lock:mixed")
}

// oldReleaseSrc is release.lua as the previous version shipped it (before the
// short form), for the mixed-clients attack.
const oldReleaseSrc = `local v = redis.call('GET', KEYS[1])
if v ~= ARGV[1] then
  if v == false then
    return 0
  end
  return -1
end
redis.call('DEL', KEYS[1])
if ARGV[2] == '' then
  return 1
end
local queued = false
if KEYS[2] then
  queued = redis.call('TYPE', KEYS[2]).ok == 'zset' -- a key of another type there is no queue
  if not queued and ARGV[3] ~= 'all' then
    return 1
  end
end
local woken = false
if queued and redis.call('ZCOUNT', KEYS[2], 0, '+inf') > 0 then
-- include: wake_head.lua (prune and wakeHead, shared with the other scripts that wake the head)
  prune(KEYS[2])
  woken = wakeHead(ARGV[2], KEYS[1], KEYS[2])
end
if not woken then
  redis.call('PUBLISH', ARGV[2], KEYS[1])
end
return 1
`
