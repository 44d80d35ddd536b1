package keyspace

import (
	"encoding/base64"
	"strings"
)

// Library guesses which client wrote a lock value, from its shape: "redlock" for
// values of the lock library ("rl1." and what ours says it reads), "redsync" (24-char base64 ending "=="), "node-redlock"
// (32 hex chars), "redlock.net/pottery" (36-char UUID), else "unknown". A Redisson
// lock is a hash, recognised by its type, not its value.
func Library(value string, ours func(string) bool) string {
	switch {
	case strings.HasPrefix(value, "rl1."):
		if ours(value) {
			return "redlock"
		}
		return "unknown"
	case len(value) == 24 && strings.HasSuffix(value, "==") && isBase64(value):
		return "redsync"
	case len(value) == 32 && isHex(value):
		return "node-redlock"
	case len(value) == 36 && isUUID(value):
		return "redlock.net/pottery"
	}
	return "unknown"
}

func isBase64(s string) bool {
	_, err := base64.StdEncoding.DecodeString(s)
	return err == nil
}

func isHex(s string) bool {
	for _, r := range s {
		if !(r >= '0' && r <= '9' || r >= 'a' && r <= 'f' || r >= 'A' && r <= 'F') {
			return false
		}
	}
	return true
}

func isUUID(s string) bool {
	for i, r := range s {
		switch i {
		case 8, 13, 18, 23:
			if r != '-' {
				return false
			}
		default:
			if !(r >= '0' && r <= '9' || r >= 'a' && r <= 'f' || r >= 'A' && r <= 'F') {
				return false
			}
		}
	}
	return true
}
