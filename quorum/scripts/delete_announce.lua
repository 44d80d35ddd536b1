-- Force-expire without a token, on one master. KEYS[1] the key; ARGV[1] the wake-up channel; ARGV[2] the
-- announcement. Deletes the key whatever it holds and announces it on the channel (whether it was there or
-- not: a waiter that missed the deletion's moment wakes all the same). Returns the number of keys deleted.
local n = redis.call('DEL', KEYS[1])
redis.call('PUBLISH', ARGV[1], ARGV[2])
return n
