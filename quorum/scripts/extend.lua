-- Compare-and-extend. KEYS[1] lock key; ARGV[1] our value; ARGV[2] new TTL in ms (validated > 0 by the caller).
-- Returns 1 extended (ours), 0 missing (never recreated), -1 someone else's, -2 our value's tombstone (revoke.lua:
-- an administrator revoked us).
-- It never shortens a key: a copy of an earlier, shorter extension that reaches a master late must not cut back
-- a later, longer one that counted this master's vote. A key without a TTL gets one.
local v = redis.call('GET', KEYS[1])
if v == ARGV[1] then
  local left = redis.call('PTTL', KEYS[1])
  if left < 0 or left < tonumber(ARGV[2]) then
    redis.call('PEXPIRE', KEYS[1], ARGV[2])
  end
  return 1
elseif v == false then
  return 0
elseif string.sub(v, 1, 5) == 'rl1x.' and v == 'rl1x.' .. redis.sha1hex(ARGV[1]) then
  return -2
end
return -1
