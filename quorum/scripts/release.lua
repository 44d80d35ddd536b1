-- Compare-and-delete. KEYS[1] lock key; KEYS[2] (optional) its fair queue key (<lock key>:queue); ARGV[1] our
-- value; ARGV[2] wake-up channel ("" for none).
-- Returns 1 deleted (ours), 0 missing, -1 someone else's. A non-string key raises WRONGTYPE.
-- Where it deleted, it wakes the waiters: only the head of the fair queue KEYS[2] when a live waiter is queued
-- there (wakeHead), else every waiter (the lock key, published on the channel).
-- include: wake_head.lua (prune and wakeHead, shared with the other scripts that wake the head)
local v = redis.call('GET', KEYS[1])
if v == ARGV[1] then
  redis.call('DEL', KEYS[1])
  if ARGV[2] ~= '' then
    local woken = false
    if KEYS[2] and redis.call('EXISTS', KEYS[2]) == 1 then
      prune(KEYS[2])
      woken = wakeHead(ARGV[2], KEYS[1], KEYS[2])
    end
    if not woken then
      redis.call('PUBLISH', ARGV[2], KEYS[1])
    end
  end
  return 1
elseif v == false then
  return 0
end
return -1
