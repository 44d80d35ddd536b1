--!df flags=allow-undeclared-keys
-- A waiter's marker on one master, for the acquisitions whose rounds do not write it themselves (wait_round.lua
-- does), written before each of their rounds: KEYS[1] the key waited for; KEYS[2] its queue key; ARGV[1] the
-- waiter's marker id; ARGV[2] the marker's longest TTL in ms; ARGV[3] the waiter's lock TTL in ms.
-- The marker is written as wait_round.lua writes it. It lives as long as KEYS[1] (a release publishes nothing once
-- that key is gone), or, where KEYS[1] has no TTL or does not exist (the round may then take it, or meet whoever
-- took it since), as long as the waiter's own lock would; at most ARGV[2], at least until the waiter's next round
-- (a quarter of ARGV[2]). The queue key lives at least as long, and so does the waiting flag
-- (KEYS[1] .. ' waiting:queue', see wait_round.lua), set even where the queue key is of another type.
-- Returns 1, or 0 where the queue key is not a sorted set (no marker is written then).
-- include: keep_flag.lua (keepFlag, shared by the scripts that keep the waiting flag)
local ttl = tonumber(ARGV[2])
local left = redis.call('PTTL', KEYS[1])
if left <= 0 then
  left = tonumber(ARGV[3])
end
if left < ttl then
  -- Not shorter than a quarter of ARGV[2] (the longest gap to the waiter's next round, which writes it again):
  -- the holder may extend KEYS[1] and release it after the TTL it has now.
  ttl = math.max(left, math.floor(ttl / 4))
end
keepFlag(KEYS[1], ttl)
local t = redis.call('TIME')
local deadline = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000) + ttl
if type(redis.pcall('ZADD', KEYS[2], -deadline, 'h:' .. ARGV[1])) ~= 'number' then
  return 0
end
if redis.call('PTTL', KEYS[2]) < ttl then
  redis.call('PEXPIRE', KEYS[2], ttl)
end
return 1
