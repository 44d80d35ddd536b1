-- Find a permit by its value on one master (read only). KEYS the permit slots in slot order; ARGV[1] the value.
-- Returns the 0-based indexes of the slots that hold the value or its tombstone (a revoked permit: its release by
-- token removes the tombstone, as the holder's own release does, and its extension learns it was revoked); keys of
-- another type are skipped.
local out = {}
local tomb = nil
for i = 1, #KEYS do
  if redis.call('TYPE', KEYS[i]).ok == 'string' then
    local v = redis.call('GET', KEYS[i])
    if v ~= ARGV[1] and string.sub(v, 1, 5) == 'rl1x.' then
      tomb = tomb or 'rl1x.' .. redis.sha1hex(ARGV[1])
      v = v == tomb and ARGV[1] or v
    end
    if v == ARGV[1] then
      out[#out + 1] = i - 1
    end
  end
end
return out
