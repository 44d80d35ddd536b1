-- prune drops the waiters of queue q whose heartbeat expired, as fair_acquire.lua does.
local function prune(q)
  local t = redis.call('TIME')
  local now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
  for _, h in ipairs(redis.call('ZRANGEBYSCORE', q, -now, '(0')) do
    redis.call('ZREM', q, h, 'q:' .. string.sub(h, 3))
  end
end
-- wakeHead wakes the head of queue q unless it is skip: the message is the lock key, a newline, "next " and the
-- head's id, published on "<ch>:<tag>" and "<ch>:any" when the id is "<random>.<tag>" and someone listens on
-- "<ch>:<tag>", else on ch (quorum/wake_target.go). Returns false when nobody is queued.
local function wakeHead(ch, key, q, skip)
  local head = redis.call('ZRANGEBYSCORE', q, 0, '+inf', 'LIMIT', 0, 1)[1]
  if not head then
    return false
  end
  if head ~= skip then
    local id = string.sub(head, 3)
    local msg = key .. '\nnext ' .. id
    local dot = string.find(id, '.', 1, true)
    if dot and redis.call('PUBLISH', ch .. ':' .. string.sub(id, dot + 1), msg) > 0 then
      redis.call('PUBLISH', ch .. ':any', msg)
    else
      redis.call('PUBLISH', ch, msg)
    end
  end
  return true
end
