-- An exclusive waiter marks itself where shared holders keep it out. KEYS[1] lock key; KEYS[2] the marker
-- (<key>:xwait). ARGV[1] the waiter's marker value; ARGV[2] the marker's TTL in ms.
-- Sets the marker only when the key holds shared holders (a zset). Returns 1 marked, 0 not needed here.
if redis.call('TYPE', KEYS[1]).ok ~= 'zset' then return 0 end
redis.call('SET', KEYS[2], ARGV[1], 'PX', ARGV[2])
return 1
