-- Compare-and-delete every key on one master. KEYS the keys; ARGV[1] our value; ARGV[2] "1" to publish a wake-up
-- on "<key>:wake" for each key deleted, ARGV[3] (optional) one channel to publish on instead, "" for none.
-- Keys of another type are left alone. Returns the number of keys deleted.
local n = 0
for i = 1, #KEYS do
  if redis.call('TYPE', KEYS[i]).ok == 'string' and redis.call('GET', KEYS[i]) == ARGV[1] then
    redis.call('DEL', KEYS[i])
    n = n + 1
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
