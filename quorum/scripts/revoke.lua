-- Revoke what an operator saw, on one master. KEYS[1] lock key; ARGV[1] the value seen (string keys); ARGV[2] the
-- wake-up channel; ARGV[3] the type seen ("string", or "hash" for a Redisson lock); ARGV[4] the drift factor;
-- ARGV[5] the drift budget's fixed part in ms; ARGV[6] (optional) a second channel to publish on.
-- A string key is revoked only if it still holds the value seen; a key of another type only if it is still of
-- the type seen (its contents are not compared). The key becomes the tombstone of the value seen:
-- "rl1x." .. sha1hex(value), a plain string that a SET NX never takes, for the key's PTTL plus its drift budget
-- (the lock-delay: the revoked holder's validity has surely ended by then); a release of that value deletes it
-- (release.lua). A key without a TTL promises no validity: it is deleted.
-- Returns the tombstone's TTL in ms (> 0) and publishes "revoked"; -2 deleted (no TTL, publishes "force-expired");
-- 0 missing; -1 the key changed since it was seen: kept; -3 - its PTTL in ms (<= -3) it is a tombstone already:
-- kept.
local t = redis.call('TYPE', KEYS[1]).ok
if t == 'none' then return 0 end
if t ~= ARGV[3] then return -1 end
if t == 'string' then
  local v = redis.call('GET', KEYS[1])
  if v ~= ARGV[1] then return -1 end
  if string.sub(v, 1, 5) == 'rl1x.' then return -3 - math.max(0, redis.call('PTTL', KEYS[1])) end
end
local left = redis.call('PTTL', KEYS[1])
if left < 0 then
  redis.call('DEL', KEYS[1])
  redis.call('PUBLISH', ARGV[2], 'force-expired')
  if ARGV[6] and ARGV[6] ~= '' then
    redis.call('PUBLISH', ARGV[6], 'force-expired')
  end
  return -2
end
local delay = left + math.floor(left * tonumber(ARGV[4])) + tonumber(ARGV[5])
-- One SET over the key, whatever its type: a keyspace listener sees the holder's value replaced, not deleted.
redis.call('SET', KEYS[1], 'rl1x.' .. redis.sha1hex(ARGV[1]), 'PX', delay)
redis.call('PUBLISH', ARGV[2], 'revoked')
if ARGV[6] and ARGV[6] ~= '' then
  redis.call('PUBLISH', ARGV[6], 'revoked')
end
return delay
