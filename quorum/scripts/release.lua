-- Compare-and-delete. KEYS[1] lock key; KEYS[2] (optional) its queue key (<lock key>:queue), which also holds the
-- markers of the waiters that are not queued (waitmark.go); ARGV[1] our value; ARGV[2] wake-up channel ("" for
-- none); ARGV[3] (optional) "all": wake whoever listens even where no waiter marked KEYS[2].
-- Returns 1 deleted (ours), 0 missing, -1 someone else's. A non-string key raises WRONGTYPE; KEYS[2] of another
-- type than a sorted set is not a queue (written by someone else): ignored.
-- Where it deleted, it wakes the waiters: only the head of the fair queue KEYS[2] when a live waiter is queued
-- there (wakeHead), else every waiter (the lock key, published on the channel). With KEYS[2] and without "all",
-- where KEYS[2] does not exist nobody waits (every waiter keeps its place or its marker there), so nothing is
-- published: the common release costs GET, DEL and TYPE. Where KEYS[2] holds markers but no place ("q:"), the
-- queue is not pruned (its markers expire with it) and every waiter is woken.
local v = redis.call('GET', KEYS[1])
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
