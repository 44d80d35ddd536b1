-- A shared hold on one master. KEYS[1] lock key; KEYS[2] the writer-waiting marker (<key>:xwait). ARGV[1] our
-- value; ARGV[2] TTL in ms.
-- The shared holders are a zset at the lock key: member = value, score = expiry (server ms); the key's TTL is the
-- latest expiry. A string at the key is an exclusive holder. Returns 1 granted, 0 held exclusively (or a key of
-- another type), -2 an exclusive waiter is queued (the marker lives).
local t = redis.call('TYPE', KEYS[1]).ok
if t ~= 'none' and t ~= 'zset' then return 0 end
if redis.call('EXISTS', KEYS[2]) == 1 then return -2 end
local tm = redis.call('TIME')
local now = tonumber(tm[1]) * 1000 + math.floor(tonumber(tm[2]) / 1000)
local ttl = tonumber(ARGV[2])
if t == 'zset' then
  redis.call('ZREMRANGEBYSCORE', KEYS[1], '-inf', now)
end
redis.call('ZADD', KEYS[1], now + ttl, ARGV[1])
local left = redis.call('PTTL', KEYS[1])
if left < ttl then
  redis.call('PEXPIRE', KEYS[1], ttl)
end
return 1
