-- Compare-and-PEXPIRE. KEYS[1] lock key; ARGV[1] our value; ARGV[2] new TTL in ms (validated > 0 by the caller).
-- Returns 1 extended (ours), 0 missing (never recreated), -1 someone else's.
local v = redis.call('GET', KEYS[1])
if v == ARGV[1] then
  redis.call('PEXPIRE', KEYS[1], ARGV[2])
  return 1
elseif v == false then
  return 0
end
return -1
