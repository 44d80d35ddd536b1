-- Compare-and-extend every key on one master. KEYS the lock keys; ARGV[1] our value; ARGV[2] new TTL in ms.
-- Extends only when every key holds our value (a master missing one name is no vote), never shortening a key.
-- Returns 1 extended, 0 some key missing (nothing extended), -1 some key holds another value or type.
local missing = false
for i = 1, #KEYS do
  local t = redis.call('TYPE', KEYS[i]).ok
  if t == 'none' then
    missing = true
  elseif t ~= 'string' or redis.call('GET', KEYS[i]) ~= ARGV[1] then
    return -1
  end
end
if missing then return 0 end
for i = 1, #KEYS do
  local left = redis.call('PTTL', KEYS[i])
  if left < 0 or left < tonumber(ARGV[2]) then
    redis.call('PEXPIRE', KEYS[i], ARGV[2])
  end
end
return 1
