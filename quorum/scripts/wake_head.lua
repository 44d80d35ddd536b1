-- liveHead drops the waiters of queue q whose heartbeat expired at server time now (ms) and returns the head, the
-- first live "q:" member, or nil when nobody live is queued. One ZRANGEBYSCORE from -now reads the expired
-- heartbeats ("h:" scores in [-now, 0): live ones are below -now) and, after them, the queue in order: the head is
-- its first entry whose heartbeat is not among them. A batch of expired heartbeats only is dropped and read again.
-- The first entry alone is read first: when it is not an expired heartbeat (the usual case), it is the head.
local function liveHead(q, now)
  local first = redis.call('ZRANGEBYSCORE', q, -now, '+inf', 'LIMIT', 0, 1)[1]
  if not first or string.byte(first) ~= 104 then
    return first
  end
  while true do
    local r = redis.call('ZRANGEBYSCORE', q, -now, '+inf', 'LIMIT', 0, 16)
    local drop, dead, head = {}, {}, nil
    for _, m in ipairs(r) do
      if string.byte(m) == 104 then -- "h:<id>": an expired heartbeat
        local qm = 'q:' .. string.sub(m, 3)
        dead[qm] = true
        drop[#drop + 1] = m
        drop[#drop + 1] = qm
      elseif not dead[m] then
        head = m
        break
      end
    end
    if #drop > 0 then
      redis.call('ZREM', q, unpack(drop))
    end
    if head or #r < 16 then
      return head
    end
  end
end
-- pruned holds, per queue key, the head that prune found (false: nobody queued). A script that changes the queue
-- after prune and before wakeHead sets pruned[q] = nil.
local pruned = {}
-- prune drops the waiters of queue q whose heartbeat expired, as fair_acquire.lua does, and returns the head (nil
-- when nobody is queued).
local function prune(q)
  local t = redis.call('TIME')
  local head = liveHead(q, tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000))
  pruned[q] = head or false
  return head
end
-- wakeHead wakes the head of queue q unless it is skip: the message is the lock key, a newline, "next " and the
-- head's id, published on "<ch>:<tag>" and "<ch>:any" when the id is "<random>.<tag>" and someone listens on
-- "<ch>:<tag>", else on ch (quorum/wake_target.go). Returns false when nobody is queued.
local function wakeHead(ch, key, q, skip)
  local head = pruned[q]
  if head == nil then
    head = redis.call('ZRANGEBYSCORE', q, 0, '+inf', 'LIMIT', 0, 1)[1] or false
  end
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
