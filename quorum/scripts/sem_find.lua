-- Find a permit by its value on one master (read only). KEYS the permit slots in slot order; ARGV[1] the value.
-- Returns the 0-based indexes of the slots that hold the value; keys of another type are skipped.
local out = {}
for i = 1, #KEYS do
  if redis.call('TYPE', KEYS[i]).ok == 'string' and redis.call('GET', KEYS[i]) == ARGV[1] then
    out[#out + 1] = i - 1
  end
end
return out
