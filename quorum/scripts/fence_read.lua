-- Read the fence counter. KEYS[1] lock key; KEYS[2] fence counter key; ARGV[1] our value.
-- Returns the counter (0 when absent) when the lock is ours here (only such reads count towards the quorum), else
-- -1 - counter: the counter is read either way, since a higher counter on any master only raises the next fence.
-- A counter that is not a non-negative integer is an error.
local ours = redis.call('GET', KEYS[1]) == ARGV[1]
local n = tonumber(redis.call('GET', KEYS[2]) or '0')
if n == nil or n < 0 or n ~= math.floor(n) then
  return redis.error_reply('fence counter ' .. KEYS[2] .. ' is not a number (a whole number >= 0)')
end
if ours then return n end
return -1 - n
