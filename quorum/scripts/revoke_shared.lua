-- Revoke one shared holder, on one master. KEYS[1] the shared key (a sorted set: member = value, score = expiry in
-- server ms); ARGV[1] the holder's value; ARGV[2] the wake-up channel; ARGV[3] the drift factor; ARGV[4] the drift
-- budget's fixed part in ms.
-- The member becomes its tombstone "rl1x." .. sha1hex(value), scored at its expiry plus the drift budget of what
-- was left of it (the lock-delay), and the key lives at least as long: an exclusive acquirer is kept out until the
-- revoked holder's validity has surely ended, or until the holder's release removes the tombstone
-- (shared_release.lua). Returns the tombstone's lifetime in ms (> 0) and publishes "revoked"; 0 the holder is
-- missing or expired here; -1 the key is not a sorted set.
local t = redis.call('TYPE', KEYS[1]).ok
if t == 'none' then return 0 end
if t ~= 'zset' then return -1 end
local score = redis.call('ZSCORE', KEYS[1], ARGV[1])
local tm = redis.call('TIME')
local now = tonumber(tm[1]) * 1000 + math.floor(tonumber(tm[2]) / 1000)
if not score or tonumber(score) <= now then return 0 end
local left = tonumber(score) - now
local delay = left + math.floor(left * tonumber(ARGV[3])) + tonumber(ARGV[4])
redis.call('ZREM', KEYS[1], ARGV[1])
redis.call('ZADD', KEYS[1], now + delay, 'rl1x.' .. redis.sha1hex(ARGV[1]))
if redis.call('PTTL', KEYS[1]) < delay then
  redis.call('PEXPIRE', KEYS[1], delay)
end
redis.call('PUBLISH', ARGV[2], 'revoked')
return delay
