-- Read a shared holder's member (Lock.Verify). KEYS[1] the holders' sorted set; ARGV[1] the member; ARGV[2] its
-- tombstone. Returns {the member's score, the tombstone's score}, each nil when absent, or the error ZSCORE got
-- there (WRONGTYPE: a key of another type). Reads only.
return {redis.pcall('ZSCORE', KEYS[1], ARGV[1]), redis.pcall('ZSCORE', KEYS[1], ARGV[2])}
