-- Extend a shared hold on one master. KEYS[1] lock key; ARGV[1] our value; ARGV[2] new TTL in ms.
-- Never shortens: the member's expiry and the key's TTL only move later. Returns 1 extended, 0 our member is
-- missing or expired (never recreated), -1 the key holds an exclusive holder (a string) or another type.
local t = redis.call('TYPE', KEYS[1]).ok
if t == 'none' then return 0 end
if t ~= 'zset' then return -1 end
local tm = redis.call('TIME')
local now = tonumber(tm[1]) * 1000 + math.floor(tonumber(tm[2]) / 1000)
local score = redis.call('ZSCORE', KEYS[1], ARGV[1])
if not score or tonumber(score) <= now then return 0 end
local ttl = tonumber(ARGV[2])
if tonumber(score) < now + ttl then
  redis.call('ZADD', KEYS[1], now + ttl, ARGV[1])
end
if redis.call('PTTL', KEYS[1]) < ttl then
  redis.call('PEXPIRE', KEYS[1], ttl)
end
return 1
