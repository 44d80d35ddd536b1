-- Compare-and-delete. KEYS[1] lock key; ARGV[1] our value; ARGV[2] wake-up channel ("" for none).
-- Returns 1 deleted (ours), 0 missing, -1 someone else's. A non-string key raises WRONGTYPE.
local v = redis.call('GET', KEYS[1])
if v == ARGV[1] then
  redis.call('DEL', KEYS[1])
  if ARGV[2] ~= '' then redis.call('PUBLISH', ARGV[2], KEYS[1]) end
  return 1
elseif v == false then
  return 0
end
return -1
