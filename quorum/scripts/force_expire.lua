-- Force-expire what an operator saw, on one master. KEYS[1] lock key; ARGV[1] the value seen (string keys);
-- ARGV[2] the wake-up channel; ARGV[3] the type seen ("string", or "hash" for a Redisson lock).
-- A string key is deleted only if it still holds the value seen; a key of another type only if it is still of
-- the type seen (its contents are not compared). Returns 1 deleted (and publishes a wake-up), 0 missing, -1 the
-- key changed since it was seen: kept.
local t = redis.call('TYPE', KEYS[1]).ok
if t == 'none' then return 0 end
if t ~= ARGV[3] then return -1 end
if t == 'string' and redis.call('GET', KEYS[1]) ~= ARGV[1] then return -1 end
redis.call('DEL', KEYS[1])
redis.call('PUBLISH', ARGV[2], 'force-expired')
return 1
