-- A waiter's marker on one master, for the acquisitions whose rounds do not write it themselves (wait_round.lua
-- does): KEYS[1] the queue key of the key waited for; ARGV[1] the waiter's marker id; ARGV[2] the marker's TTL in
-- ms. The marker is the member "h:<id>" with score -(now + TTL) in server ms, as wait_round.lua writes it.
-- Returns 1, or 0 where the queue key is not a sorted set (nothing is written then).
local t = redis.call('TIME')
local ttl = tonumber(ARGV[2])
local until_ = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000) + ttl
if type(redis.pcall('ZADD', KEYS[1], -until_, 'h:' .. ARGV[1])) ~= 'number' then
  return 0
end
if redis.call('PTTL', KEYS[1]) < 2 * ttl then
  redis.call('PEXPIRE', KEYS[1], 2 * ttl)
end
return 1
