-- Publish a new value for the current leader on one master. KEYS[1] the leadership; KEYS[2] the record.
-- ARGV[1] our value; ARGV[2] the new published value; ARGV[3] the election's wake-up channel; ARGV[4] the
-- proclamation's number (1, 2, ... per leadership): a late copy of an earlier one never overwrites a later one.
-- Returns 1 done (or this proclamation was there already), 2 refused: a later proclamation is there, -1 the
-- leadership or its record is not ours here.
if redis.call('TYPE', KEYS[1]).ok ~= 'string' or redis.call('GET', KEYS[1]) ~= ARGV[1] then return -1 end
if redis.call('TYPE', KEYS[2]).ok ~= 'hash' or redis.call('HGET', KEYS[2], 'token') ~= ARGV[1] then return -1 end
local seq, mine = tonumber(redis.call('HGET', KEYS[2], 'seq') or '0') or 0, tonumber(ARGV[4])
if seq > mine then return 2 end
if seq == mine then return 1 end
redis.call('HSET', KEYS[2], 'value', ARGV[2], 'seq', ARGV[4])
redis.call('PUBLISH', ARGV[3], 'proclaim')
return 1
