-- Read the members of a shared key with the master's clock (an administrator's listing). KEYS[1] the shared key.
-- Returns {TIME's seconds, TIME's microseconds, the key's PTTL, member, score, member, score...}, or the error reply
-- ZRANGE got (WRONGTYPE: a key of another type) as it is. Reads only.
local z = redis.pcall('ZRANGE', KEYS[1], 0, -1, 'WITHSCORES')
if z.err then return z end
local t = redis.call('TIME')
local r = {t[1], t[2], redis.call('PTTL', KEYS[1])}
for i = 1, #z do r[#r + 1] = z[i] end
return r
