-- Release a shared hold on one master. KEYS[1] lock key; ARGV[1] our value; ARGV[2] wake-up channel ("" for none).
-- Removes our member, our member's tombstone (revoke_shared.lua: the holder acknowledges its revocation) and the
-- expired ones; when no holder is left the key is deleted and the waiters woken, else its TTL is set to the latest
-- expiry left. Returns 1 removed, 0 missing, -1 the key is not a zset.
local t = redis.call('TYPE', KEYS[1]).ok
if t == 'none' then return 0 end
if t ~= 'zset' then return -1 end
local n = redis.call('ZREM', KEYS[1], ARGV[1])
local gone = n + redis.call('ZREM', KEYS[1], 'rl1x.' .. redis.sha1hex(ARGV[1]))
local tm = redis.call('TIME')
local now = tonumber(tm[1]) * 1000 + math.floor(tonumber(tm[2]) / 1000)
redis.call('ZREMRANGEBYSCORE', KEYS[1], '-inf', now)
local last = redis.call('ZRANGE', KEYS[1], -1, -1, 'WITHSCORES')
if #last == 0 then
  redis.call('DEL', KEYS[1])
  if gone > 0 and ARGV[2] ~= '' then
    redis.call('PUBLISH', ARGV[2], KEYS[1])
  end
else
  redis.call('PEXPIREAT', KEYS[1], last[2])
end
return n
