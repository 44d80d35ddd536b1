-- Raise the fence counter, only for the holder. KEYS[1] lock key; KEYS[2] fence counter key; ARGV[1] our value;
-- ARGV[2] the new fence. Returns 1 raised, -1 the lock is not ours here, -2 the counter is already at or above
-- the new fence (a read missed a newer value: the raise must not count). The counter has no TTL: one key per lock name.
if redis.call('GET', KEYS[1]) ~= ARGV[1] then return -1 end
local c = tonumber(redis.call('GET', KEYS[2]) or '0') or 0
local n = tonumber(ARGV[2])
if c >= n then return -2 end
redis.call('SET', KEYS[2], ARGV[2])
return 1
