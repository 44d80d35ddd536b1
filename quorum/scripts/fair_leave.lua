-- A fair waiter leaves the queue on one master. KEYS[1] lock key; KEYS[2] queue key; ARGV[1] waiter id; ARGV[2]
-- wake-up channel ("" for none).
-- When the waiter was the head (waiters whose heartbeat expired dropped first) and the lock key is free, nobody will
-- release it: the new head, if any, is woken as release.lua wakes it. Returns the number of entries removed.
-- include: wake_head.lua (prune and wakeHead, shared with the other scripts that wake the head)
local me = 'q:' .. ARGV[1]
local head = prune(KEYS[2])
local n = redis.call('ZREM', KEYS[2], me, 'h:' .. ARGV[1])
pruned[KEYS[2]] = nil -- the head may have left: wakeHead reads it again
if head == me and ARGV[2] ~= '' and redis.call('EXISTS', KEYS[1]) == 0 then
  wakeHead(ARGV[2], KEYS[1], KEYS[2])
end
return n
