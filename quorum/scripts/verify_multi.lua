-- Read every name of a multi-name lock (Lock.Verify). KEYS the names' keys.
-- Returns one element per key: its value, nil when it is absent, or the error GET got there (WRONGTYPE: a key of
-- another type). Reads only.
local r = {}
for i, k in ipairs(KEYS) do r[i] = redis.pcall('GET', k) end
return r
