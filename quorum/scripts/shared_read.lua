-- Read the shared holders of a name on one master. KEYS[1] lock key; KEYS[2] the writer-waiting marker.
-- Returns {marker PTTL (-2 none), holder, remaining ms, holder, remaining ms, ...}: the live holders (their
-- expiry still ahead on this master's clock); none when the key is not a zset.
local out = {redis.call('PTTL', KEYS[2])}
if redis.call('TYPE', KEYS[1]).ok ~= 'zset' then return out end
local tm = redis.call('TIME')
local now = tonumber(tm[1]) * 1000 + math.floor(tonumber(tm[2]) / 1000)
local r = redis.call('ZRANGEBYSCORE', KEYS[1], '(' .. now, '+inf', 'WITHSCORES')
for i = 1, #r, 2 do
  table.insert(out, r[i])
  table.insert(out, tonumber(r[i + 1]) - now)
end
return out
