-- Hand the new leader its term on one master. KEYS[1] the leadership (<name>:leader); KEYS[2] the term counter
-- (<name>:leader:fence); KEYS[3] the record (<name>:leader:term). ARGV[1] our value; ARGV[2] the new term;
-- ARGV[3] since (Unix ms); ARGV[4] the published value; ARGV[5] the election's wake-up channel.
-- Only for the holder, and never lowering or repeating a term. Writes the record and publishes a hint.
-- Returns 1 done, -1 the leadership is not ours here, -2 the counter is already at or above the new term.
if redis.call('TYPE', KEYS[1]).ok ~= 'string' or redis.call('GET', KEYS[1]) ~= ARGV[1] then return -1 end
local c = tonumber(redis.call('GET', KEYS[2]) or '0') or 0
local n = tonumber(ARGV[2])
if c >= n then return -2 end
redis.call('SET', KEYS[2], ARGV[2])
redis.call('DEL', KEYS[3])
redis.call('HSET', KEYS[3], 'token', ARGV[1], 'term', ARGV[2], 'since', ARGV[3], 'value', ARGV[4])
redis.call('PUBLISH', ARGV[5], 'term ' .. ARGV[2])
return 1
