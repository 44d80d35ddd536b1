-- Read the fence counter where we hold the lock. KEYS[1] lock key; KEYS[2] fence counter key; ARGV[1] our value.
-- Returns the counter (0 when absent), or -1 when the lock is not ours here (the read must not count).
if redis.call('GET', KEYS[1]) ~= ARGV[1] then return -1 end
local c = redis.call('GET', KEYS[2])
if c == false then return 0 end
local n = tonumber(c)
if n == nil then return redis.error_reply('fence counter ' .. KEYS[2] .. ' is not a number') end
return n
