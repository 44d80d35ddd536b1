--!df flags=allow-undeclared-keys
-- Fair (FIFO) acquisition on one master. KEYS[1] lock key; KEYS[2] queue key (<lock key>:queue).
-- ARGV[1] our value; ARGV[2] TTL in ms; ARGV[3] waiter id; ARGV[4] queue score (the waiter's enqueue
-- time in ms, the same on every master); ARGV[5] heartbeat TTL in ms; ARGV[6] "wait" (enqueue and
-- heart-beat) or "try" (acquire only when nobody is queued).
-- The queue is one sorted set holding two kinds of members: "q:<id>" with score = enqueue time (>= 0,
-- FIFO order, ties broken by the member) and "h:<id>" with score = -(heartbeat deadline, server ms),
-- so expired heartbeats are exactly the scores in [-now, 0). A waiter whose heartbeat expired is
-- dropped with its place (liveHead, which also finds the head). A waiter that keeps its place (a round that did not
-- take the lock) also keeps the waiting flag (KEYS[1] .. ' waiting:queue', see wait_round.lua) alive as long: the
-- short form of release.lua wakes the head only where the flag was there. A round that takes the lock leaves the
-- flag as it is: it has no place left, and the release that woke it set the flag again for the others.
-- Returns 1 acquired (and left the queue), 0 the lock key is held (a string: an exclusive holder), -3 it is held
-- by something else (shared holders), -2 another waiter is ahead.
-- include: wake_head.lua (prune and wakeHead, shared with the other scripts that wake the head)
local t = redis.call('TIME')
local now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
local me = 'q:' .. ARGV[3]
local hb = tonumber(ARGV[5])
if ARGV[6] == 'wait' then
  redis.call('ZADD', KEYS[2], ARGV[4], me, -(now + hb), 'h:' .. ARGV[3])
  if redis.call('PTTL', KEYS[2]) < 2 * hb then
    redis.call('PEXPIRE', KEYS[2], 2 * hb)
  end
end
-- keep returns r, first keeping the waiting flag alive as long as the place the round leaves behind.
-- include: keep_flag.lua (keepFlag, shared by the scripts that keep the waiting flag)
local function keep(r)
  if ARGV[6] == 'wait' then
    keepFlag(KEYS[1], 2 * hb)
  end
  return r
end
local head = liveHead(KEYS[2], now)
if head and head ~= me then
  return keep(-2)
end
if not redis.call('SET', KEYS[1], ARGV[1], 'NX', 'PX', ARGV[2]) then
  if redis.call('TYPE', KEYS[1]).ok ~= 'string' then
    return keep(-3)
  end
  return keep(0)
end
if ARGV[6] == 'wait' then
  redis.call('ZREM', KEYS[2], me, 'h:' .. ARGV[3])
end
return 1
