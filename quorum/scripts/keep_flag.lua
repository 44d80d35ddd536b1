-- keepFlag keeps the waiting flag of the lock key k alive at least ms milliseconds: the string
-- k .. ' waiting:queue' (named here, not given: the first line of each script that takes this lets Dragonfly touch
-- a key it was not given), which release.lua's short form deletes with the lock key and so learns whether anyone
-- waits. Every waiter keeps it, as long as its marker or its place, in the step that writes them.
local function keepFlag(k, ms)
  local flag = k .. ' waiting:queue'
  if redis.call('PTTL', flag) < ms then
    redis.call('SET', flag, '1', 'PX', ms)
  end
end
