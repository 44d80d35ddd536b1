-- Clean-up of a failed fair round on one master. KEYS[1] lock key; KEYS[2] queue key.
-- ARGV[1] our value; ARGV[2] waiter id; ARGV[3] queue score; ARGV[4] heartbeat TTL in ms.
-- Where the round set our key (and so took us out of the queue), delete the key and put us
-- back in the queue at our place, in one step: no other waiter can slip in between.
-- Returns 1 deleted (ours), 0 missing, -1 someone else's.
local v = redis.call('GET', KEYS[1])
if v == ARGV[1] then
  redis.call('DEL', KEYS[1])
  local t = redis.call('TIME')
  local now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
  redis.call('ZADD', KEYS[2], ARGV[3], 'q:' .. ARGV[2])
  redis.call('ZADD', KEYS[2], -(now + tonumber(ARGV[4])), 'h:' .. ARGV[2])
  if redis.call('PTTL', KEYS[2]) < 2 * tonumber(ARGV[4]) then
    redis.call('PEXPIRE', KEYS[2], 2 * tonumber(ARGV[4]))
  end
  return 1
elseif v == false then
  return 0
end
return -1
