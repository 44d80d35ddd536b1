--!df flags=allow-undeclared-keys
-- Reads lock keys for a listing, in one call, without writing anything and without
-- ever reading a value whole. With KEYS, it describes those keys; without, it runs
-- one SCAN step (cursor ARGV[2], MATCH ARGV[3], COUNT ARGV[4]) and describes the
-- keys it returns (the queue keys too: the reader skips them by name, after the
-- prefix). ARGV[1] is the most bytes of
-- a value to read (GETRANGE; STRLEN gives the full length).
-- Returns {next cursor ("0" with KEYS), records}: for each key that exists, one
-- record "<type>,<pttl ms>,<length>,<key bytes>,<value bytes>:<key><value>", type
-- empty for a string, length the full length of a string value. The first line
-- lets Dragonfly run it on keys SCAN found (undeclared keys); Redis reads it as a
-- comment.
local cap = tonumber(ARGV[1])
local keys, cursor = KEYS, '0'
if #KEYS == 0 then
  local r = redis.call('SCAN', ARGV[2], 'MATCH', ARGV[3], 'COUNT', ARGV[4])
  cursor, keys = r[1], r[2]
end
local out, n = {}, 0
for _, k in ipairs(keys) do
  local pttl = redis.call('PTTL', k)
  if pttl ~= -2 then
    local typ, v, len = '', redis.pcall('GETRANGE', k, 0, cap - 1), 0
    if type(v) == 'table' then
      typ, v = redis.call('TYPE', k)['ok'], ''
    else
      len = #v
      if len == cap then
        len = redis.call('STRLEN', k)
      end
    end
    out[n + 1] = string.format('%s,%d,%d,%d,%d:', typ, pttl, len, #k, #v)
    out[n + 2] = k
    out[n + 3] = v
    n = n + 3
  end
end
return {cursor, table.concat(out)}
