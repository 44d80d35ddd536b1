-- Clean-up of a failed fair semaphore round on one master. KEYS[1..N] the permit slots; KEYS[N+1] the queue key
-- (<name>:permit:queue). ARGV[1] our value; ARGV[2] waiter id; ARGV[3] queue score; ARGV[4] heartbeat TTL in ms.
-- Deletes every slot that holds our value and, where it deleted one (the round took us out of the queue with the
-- grant, sem_acquire.lua), puts us back at our place in the same step: no waiter behind us takes the slot freed.
-- Keys of another type are left alone. Returns the number of slots deleted.
local n = #KEYS - 1
local del = 0
for i = 1, n do
  if redis.call('TYPE', KEYS[i]).ok == 'string' and redis.call('GET', KEYS[i]) == ARGV[1] then
    redis.call('DEL', KEYS[i])
    del = del + 1
  end
end
if del > 0 then
  local q = KEYS[n + 1]
  local t = redis.call('TIME')
  local now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
  local hb = tonumber(ARGV[4])
  redis.call('ZADD', q, ARGV[3], 'q:' .. ARGV[2])
  redis.call('ZADD', q, -(now + hb), 'h:' .. ARGV[2])
  if redis.call('PTTL', q) < 2 * hb then
    redis.call('PEXPIRE', q, 2 * hb)
  end
end
return del
