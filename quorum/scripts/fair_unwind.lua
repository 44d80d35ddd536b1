--!df flags=allow-undeclared-keys
-- Clean-up of a failed fair round on one master. KEYS[1] lock key; KEYS[2] queue key.
-- ARGV[1] our value; ARGV[2] waiter id; ARGV[3] queue score; ARGV[4] heartbeat TTL in ms; ARGV[5] (optional)
-- wake-up channel.
-- Where the round set our key (and so took us out of the queue), delete the key and put us
-- back in the queue at our place, in one step: no other waiter can slip in between; the waiting flag
-- (KEYS[1] .. ' waiting:queue', see fair_acquire.lua) lives as long as that place.
-- The key is free then: with ARGV[5], the head of the queue is woken as release.lua wakes it, unless it is us (our
-- own failed round never wakes us: no loop). Rounds that collided (waiters not queued everywhere yet) then do not
-- leave the head waiting for its retry delay.
-- Returns 1 deleted (ours), 0 missing, -1 someone else's.
-- include: wake_head.lua (prune and wakeHead, shared with the other scripts that wake the head)
-- include: keep_flag.lua (keepFlag, shared by the scripts that keep the waiting flag)
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
  keepFlag(KEYS[1], 2 * tonumber(ARGV[4]))
  if ARGV[5] and ARGV[5] ~= '' then
    prune(KEYS[2])
    wakeHead(ARGV[5], KEYS[1], KEYS[2], 'q:' .. ARGV[2])
  end
  return 1
elseif v == false then
  return 0
end
return -1
