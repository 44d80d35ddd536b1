--!df flags=allow-undeclared-keys
-- Compare-and-delete. KEYS[1] lock key; ARGV[1] our value. Two forms:
--   - a plain lock's release (Lock.Release, the hot path) gives nothing more: its queue key and wake-up channel are
--     KEYS[1] .. ':queue' and KEYS[1] .. ':wake', named here rather than sent (every argument costs the master a
--     Lua string per call, and the command's bytes). Redis and Valkey let a script outside a cluster touch a key it
--     did not declare; Dragonfly does with the first line's flag (a comment to the others);
--   - the others give KEYS[2] (optional) the queue key, which also holds the markers of the waiters that are not
--     queued (waitmark.go); ARGV[2] the wake-up channel ("" for none); ARGV[3] (optional) "all": wake whoever
--     listens even where no waiter marked the queue key.
-- Returns 1 deleted (ours), 0 missing, -1 someone else's. A non-string key raises WRONGTYPE; a queue key of another
-- type than a sorted set is not a queue (written by someone else): left as it is.
-- Where it deleted, it wakes the waiters: only the head of the fair queue when a live waiter is queued there
-- (wakeHead), else every waiter (the lock key, published on the channel). Without "all", where the queue key does
-- not exist nobody waits (every waiter keeps its place or its marker there), so nothing is published: the common
-- release costs GET, DEL and EXISTS. Where the queue key holds markers but no place ("q:"), the queue is not
-- pruned (its markers expire with it) and every waiter is woken; so are they where the queue key is of another
-- type (no waiter could mark it, so whether one waits is not known).
local v = redis.call('GET', KEYS[1])
if v ~= ARGV[1] then
  if v == false then
    return 0
  end
  return -1
end
redis.call('DEL', KEYS[1])
local q, ch = KEYS[2], ARGV[2]
if #ARGV == 1 then
  q = KEYS[1] .. ':queue'
elseif ch == '' then
  return 1
end
local queued = false
if q then
  if redis.call('EXISTS', q) == 0 then
    if ARGV[3] ~= 'all' then
      return 1
    end
  else
    queued = redis.call('TYPE', q).ok == 'zset' -- a key of another type is no queue
  end
end
ch = ch or KEYS[1] .. ':wake'
local woken = false
if queued and redis.call('ZCOUNT', q, 0, '+inf') > 0 then
-- include: wake_head.lua (prune and wakeHead, shared with the other scripts that wake the head)
  prune(q)
  woken = wakeHead(ch, KEYS[1], q)
end
if not woken then
  redis.call('PUBLISH', ch, KEYS[1])
end
return 1
