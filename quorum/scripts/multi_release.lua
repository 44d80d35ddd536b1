-- Compare-and-delete every key on one master. KEYS the keys; ARGV[1] our value; ARGV[2] "1" to publish a wake-up
-- on "<key>:wake" for each key deleted, ARGV[3] (optional) one channel to publish on instead, "" for none.
-- Keys of another type are left alone. A key that holds our value's tombstone (revoke.lua) is deleted too (the
-- holder acknowledges its revocation) and wakes as a release does, but is not counted.
-- Returns the number of keys deleted that held our value.
local n = 0
local tomb = nil
for i = 1, #KEYS do
  local del = false
  if redis.call('TYPE', KEYS[i]).ok == 'string' then
    local v = redis.call('GET', KEYS[i])
    if v == ARGV[1] then
      del = true
      n = n + 1
    elseif string.sub(v, 1, 5) == 'rl1x.' then
      tomb = tomb or 'rl1x.' .. redis.sha1hex(ARGV[1])
      del = v == tomb
    end
  end
  if del then
    redis.call('DEL', KEYS[i])
    if ARGV[2] == '1' then
      if ARGV[3] and ARGV[3] ~= '' then
        redis.call('PUBLISH', ARGV[3], KEYS[i])
      else
        redis.call('PUBLISH', KEYS[i] .. ':wake', KEYS[i])
      end
    end
  end
end
return n
