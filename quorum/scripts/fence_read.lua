-- Read the fence counter. KEYS[1] lock key; KEYS[2] fence counter key; ARGV[1] our value.
-- Returns {ours, counter}: ours is 1 when the lock is ours here (only such reads count towards the quorum), else 0;
-- counter is the counter (0 when absent), read either way: a higher counter on any master only raises the next fence.
local ours = 0
if redis.call('GET', KEYS[1]) == ARGV[1] then ours = 1 end
local c = redis.call('GET', KEYS[2])
if c == false then return {ours, 0} end
local n = tonumber(c)
if n == nil then return redis.error_reply('fence counter ' .. KEYS[2] .. ' is not a number') end
return {ours, n}
