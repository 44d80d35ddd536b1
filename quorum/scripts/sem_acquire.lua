-- Take one permit of a semaphore on one master. KEYS[1..N] the permit slots in slot order; KEYS[N+1] the queue key
-- (<name>:permit:queue). ARGV[1] our value; ARGV[2] TTL in ms; ARGV[3] "" (not fair), "wait" (enqueue, heart-beat)
-- or "try" (acquire only when fewer waiters are queued than slots are free); ARGV[4] waiter id; ARGV[5] queue
-- score; ARGV[6] heartbeat TTL in ms.
-- Takes the first free slot in slot order (SET NX PX), so masters that agree on which slots are free pick the
-- same one. In fair mode a waiter may take a slot only when it is among the first F live waiters, F = free slots.
-- Returns the 0-based index of the slot taken, -1 when every slot is held, -2 when other waiters are ahead.
local n = #KEYS - 1
local q = KEYS[n + 1]
local mode = ARGV[3]
local free = 0
for i = 1, n do
  if redis.call('EXISTS', KEYS[i]) == 0 then free = free + 1 end
end
if mode ~= '' then
  local t = redis.call('TIME')
  local now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
  for _, h in ipairs(redis.call('ZRANGEBYSCORE', q, -now, '(0')) do
    redis.call('ZREM', q, h, 'q:' .. string.sub(h, 3))
  end
  local me = 'q:' .. ARGV[4]
  local hb = tonumber(ARGV[6])
  if mode == 'wait' then
    redis.call('ZADD', q, ARGV[5], me)
    redis.call('ZADD', q, -(now + hb), 'h:' .. ARGV[4])
    if redis.call('PTTL', q) < 2 * hb then
      redis.call('PEXPIRE', q, 2 * hb)
    end
    if free == 0 then return -1 end
    local ahead = redis.call('ZRANGEBYSCORE', q, 0, '+inf', 'LIMIT', 0, free)
    local mine = false
    for _, w in ipairs(ahead) do
      if w == me then mine = true end
    end
    if not mine then return -2 end
  elseif redis.call('ZCOUNT', q, 0, '+inf') >= free and free > 0 then
    return -2
  end
end
for i = 1, n do
  if redis.call('SET', KEYS[i], ARGV[1], 'NX', 'PX', ARGV[2]) then
    if mode == 'wait' then
      redis.call('ZREM', q, 'q:' .. ARGV[4], 'h:' .. ARGV[4])
    end
    return i - 1
  end
end
return -1
