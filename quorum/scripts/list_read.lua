-- Reads lock keys for a listing, in one call, without writing anything and without
-- ever reading a value whole. With KEYS, it describes those keys; without, it runs
-- one SCAN step (cursor ARGV[3], MATCH ARGV[4], COUNT ARGV[5]) and describes the
-- keys it returns. Keys ending ":queue" are skipped.
-- ARGV[1]: how many bytes of each key to drop (the key prefix); ARGV[2]: the most
-- bytes of a value to read (GETRANGE; STRLEN gives the full length).
-- Returns {next cursor ("0" with KEYS), records}: for each key that exists, one
-- record "<type>,<pttl ms>,<length>,<name bytes>,<value bytes>:<name><value>", type
-- empty for a string, length the full length of a string value.
local skip = tonumber(ARGV[1])
local cap = tonumber(ARGV[2])
local keys, cursor = KEYS, '0'
if #KEYS == 0 then
  local r = redis.call('SCAN', ARGV[3], 'MATCH', ARGV[4], 'COUNT', ARGV[5])
  cursor, keys = r[1], r[2]
end
local out = {}
for _, k in ipairs(keys) do
  if string.sub(k, -6) ~= ':queue' then
    local pttl = redis.call('PTTL', k)
    if pttl ~= -2 then
      local typ, v, n = '', redis.pcall('GETRANGE', k, 0, cap - 1), 0
      if type(v) == 'table' then
        typ, v = redis.call('TYPE', k)['ok'], ''
      else
        n = #v
        if n == cap then
          n = redis.call('STRLEN', k)
        end
      end
      local name = string.sub(k, skip + 1)
      out[#out + 1] = typ .. ',' .. pttl .. ',' .. n .. ',' .. #name .. ',' .. #v .. ':' .. name .. v
    end
  end
end
return {cursor, table.concat(out)}
