--!df flags=allow-undeclared-keys
-- A waiting plain acquisition's round on one master: SET NX PX, and where the key is held, the waiter's marker in
-- the same step. KEYS[1] lock key; KEYS[2] its queue key (<lock key>:queue); ARGV[1] our value; ARGV[2] TTL in ms;
-- ARGV[3] the waiter's marker id; ARGV[4] the marker's longest TTL in ms.
-- The marker is the member "h:<id>" of the queue key with score -(its deadline) in server ms: the form of a fair
-- waiter's heartbeat without its place ("q:<id>"), so it never counts in the queue's order and every script that
-- prunes the queue drops it once it expired. It lives as long as the key that keeps us out (a release publishes
-- nothing once that key is gone), at most ARGV[4], and at least until our next round (a quarter of ARGV[4]); the
-- queue key lives at least as long.
-- The waiting flag (<lock key> .. ' waiting:queue', named here: the first line lets Dragonfly run a script that
-- touches a key it was not given) is set to live at least as long as the marker, even where the queue key is of
-- another type and takes no marker: release.lua's short form wakes the waiters only where the flag was there. A
-- release that runs after this round sees the flag and the marker, one that ran before it left the key free for
-- this round.
-- Returns +OK where it set the key (and dropped our marker), else the value held there, or 0 when the key is not
-- a string.
-- include: keep_flag.lua (keepFlag, shared by the scripts that keep the waiting flag)
if redis.call('SET', KEYS[1], ARGV[1], 'NX', 'PX', ARGV[2]) then
  redis.pcall('ZREM', KEYS[2], 'h:' .. ARGV[3])
  return {ok = 'OK'}
end
local ttl = tonumber(ARGV[4])
local left = redis.call('PTTL', KEYS[1])
if left > 0 and left < ttl then
  -- Not shorter than a quarter of ARGV[4] (the longest gap to our next round, which writes it again): the holder
  -- may extend the key and release it after the TTL it has now.
  ttl = math.max(left, math.floor(ttl / 4))
end
local t = redis.call('TIME')
local deadline = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000) + ttl
if type(redis.pcall('ZADD', KEYS[2], -deadline, 'h:' .. ARGV[3])) == 'number' and redis.call('PTTL', KEYS[2]) < ttl then
  redis.call('PEXPIRE', KEYS[2], ttl)
end
keepFlag(KEYS[1], ttl)
local v = redis.pcall('GET', KEYS[1])
if type(v) == 'string' then
  return v
end
return 0
