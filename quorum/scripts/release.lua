--!df flags=allow-undeclared-keys
-- Compare-and-delete. KEYS[1] lock key; ARGV[1] our value. Two forms:
--   - a plain lock's release (Lock.Release, the hot path) gives nothing more: its waiting flag, queue key and
--     wake-up channel are KEYS[1] .. ' waiting:queue', KEYS[1] .. ':queue' and KEYS[1] .. ':wake', named here
--     rather than sent (every argument costs the master a Lua string per call, and the command's bytes). The
--     flag's name ends like a queue key's, which no version of this tool lets a lock name do, after a space, which
--     no lock name of this tool holds: it is nobody's lock. Redis and Valkey let a script outside a cluster touch a
--     key it did not declare; Dragonfly does with the first line's flag (a comment to the others);
--   - the others give KEYS[2] (optional) the queue key, which also holds the markers of the waiters that are not
--     queued (waitmark.go); ARGV[2] the wake-up channel ("" for none); ARGV[3] (optional) "all": wake whoever
--     listens even where no waiter marked the queue key.
-- Returns 1 deleted (ours), 2 deleted our value's tombstone (a revocation: the name is free at once), 0 missing,
-- -1 someone else's. A non-string key raises WRONGTYPE; a queue key of another
-- type than a sorted set is not a queue (written by someone else): left as it is.
-- Where it deleted, it wakes the waiters: only the head of the fair queue when a live waiter is queued there
-- (wakeHead), else every waiter (the lock key, published on the channel).
-- The short form learns whether anyone waits from the waiting flag, deleted in the same DEL as the lock key (DEL
-- answers 2 where it was there): every waiter sets it, as long as its marker or place lives, in the step that
-- writes them (wait_round.lua, wait_mark.lua, fair_acquire.lua, fair_unwind.lua), so the common release, with
-- nobody waiting, costs GET and one DEL. Where the flag was there, the queue key is read as the long form reads
-- it, and the flag is set again, as long as the queue key lives, for the waiters this release did not wake (the
-- fair queue's others). The long form reads the queue key itself: without "all", where it does not exist nobody
-- waits (every waiter keeps its place or its marker there), so nothing is published.
-- Where the queue key holds markers but no place ("q:"), the queue is not pruned (its markers expire with it) and
-- every waiter is woken; so are they where the queue key is of another type (no waiter could mark it, so whether
-- one waits is not known).
local v = redis.call('GET', KEYS[1])
local r = 1
if v ~= ARGV[1] then
  if v == false then
    return 0
  end
  if string.sub(v, 1, 5) ~= 'rl1x.' or v ~= 'rl1x.' .. redis.sha1hex(ARGV[1]) then
    return -1
  end
  r = 2 -- our value's tombstone (revoke.lua): the holder acknowledges; removed as our key would be
end
local flag = nil
if #ARGV == 1 then
  flag = KEYS[1] .. ' waiting:queue'
  if redis.call('DEL', KEYS[1], flag) == 1 then
    return r
  end
else
  redis.call('DEL', KEYS[1])
  if ARGV[2] == '' then
    return r
  end
end
local q, ch = KEYS[2], ARGV[2]
if flag then
  q = KEYS[1] .. ':queue'
end
local queued = false
if q then
  if redis.call('EXISTS', q) == 0 then
    if ARGV[3] ~= 'all' then
      return r
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
if flag and queued then
  local left = redis.call('PTTL', q)
  if left > 0 then
    redis.call('SET', flag, '1', 'PX', left)
  elseif left == -1 then
    redis.call('SET', flag, '1')
  end
end
return r
