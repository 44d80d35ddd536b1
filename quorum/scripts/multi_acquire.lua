-- Take every key or none on one master. KEYS the lock keys; ARGV[1] our value; ARGV[2] TTL in ms.
-- Nothing is set when any key exists (whatever its type). Returns 1 set them all, 0 some key is held.
for i = 1, #KEYS do
  if redis.call('EXISTS', KEYS[i]) == 1 then return 0 end
end
for i = 1, #KEYS do
  redis.call('SET', KEYS[i], ARGV[1], 'PX', ARGV[2])
end
return 1
