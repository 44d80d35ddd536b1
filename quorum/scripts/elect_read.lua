-- Read an election on one master. KEYS[1] the leadership; KEYS[2] the record.
-- Returns {holder, pttl, term, since, value, seq}: holder is the leadership's value ("" when absent or not a
-- string); term, since, value and seq (the proclamation's number, "" before the first) are the record's when its
-- token is the holder, else "".
local holder = ''
local pttl = -2
if redis.call('TYPE', KEYS[1]).ok == 'string' then
  holder = redis.call('GET', KEYS[1])
  pttl = redis.call('PTTL', KEYS[1])
end
if holder == '' or redis.call('TYPE', KEYS[2]).ok ~= 'hash' then
  return {holder, pttl, '', '', '', ''}
end
local r = redis.call('HMGET', KEYS[2], 'token', 'term', 'since', 'value', 'seq')
if r[1] ~= holder then
  return {holder, pttl, '', '', '', ''}
end
return {holder, pttl, r[2] or '', r[3] or '', r[4] or '', r[5] or ''}
