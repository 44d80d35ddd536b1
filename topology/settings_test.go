package topology

import (
	"testing"

	"github.com/stretchr/testify/assert"
)

func TestSameSetting(t *testing.T) {
	for _, tc := range []struct {
		name, live, declared string
		same                 bool
	}{
		{"notify-keyspace-events", "g$xK", "Kg$x", true},
		{"notify-keyspace-events", "AKE", "KEA", true},
		{"notify-keyspace-events", "AK", "Kg$lshzxetd", true},
		{"notify-keyspace-events", "g$xK", "Kg$", false},
		{"notify-keyspace-events", "xE", "xe", false}, // E is keyevent, e is evicted
		{"notify-keyspace-events", "", "", true},
		{"maxmemory", "104857600", "100mb", true},
		{"maxmemory", "100000000", "100m", true},
		{"maxmemory", "104857600", "100m", false},
		{"appendonly", "yes", "YES", true},
		{"appendonly", "no", "yes", false},
		{"maxmemory-policy", "noeviction", " NoEviction ", true},
	} {
		assert.Equal(t, tc.same, SameSetting(tc.name, tc.live, tc.declared), "%s: %q vs %q", tc.name, tc.live, tc.declared)
	}
}

func TestCheckSetting(t *testing.T) {
	for _, tc := range []struct {
		name, value string
		ok          bool
	}{
		{"appendonly", "yes", true}, {"appendonly", "true", false},
		{"hz", "100", true}, {"hz", "-1", false}, {"slowlog-log-slower-than", "-1", true},
		{"maxmemory", "1gb", true}, {"maxmemory", "1 gb", false},
		{"maxmemory-policy", "noeviction", true}, {"maxmemory-policy", "lru", false},
		{"notify-keyspace-events", "Kg$x", true}, {"notify-keyspace-events", "KEA", true}, {"notify-keyspace-events", "K!", false},
		{"save", "3600 1", true},
	} {
		assert.Equal(t, tc.ok, CheckSetting(tc.name, tc.value) == "", "%s = %q: %s", tc.name, tc.value, CheckSetting(tc.name, tc.value))
	}
	for _, p := range policies {
		assert.Equal(t, p != "noeviction", UnsafeSetting("maxmemory-policy", p) != "", p)
	}
}

func TestKeyPrefixControlCharacters(t *testing.T) {
	for _, tc := range []struct {
		prefix string
		bad    bool
	}{
		{"lock:", false}, {"verrou-é:", false}, {"back\\slash:", false},
		{"lock\x1b]0;x\x07:", true}, {"lock\n:", true}, {"lock\x7f:", true}, {"lock\u0085:", true},
		{"lock\u202e:", true}, {"lock\xff:", true},
	} {
		_, bad := controlRune(tc.prefix)
		assert.Equal(t, tc.bad, bad, "%q", tc.prefix)
	}
}

func TestCanonicalAddress(t *testing.T) {
	same := [][]string{
		{"127.0.0.1:6379", "localhost:6379", "[::1]:6379", "[::ffff:127.0.0.1]:6379", "LOCALHOST.:6379", "127.0.0.1:06379"},
		{"10.0.0.1:6379", "[::ffff:10.0.0.1]:6379"},
		{"Redis-A.internal:6379", "redis-a.internal.:6379"},
	}
	for _, group := range same {
		for _, a := range group[1:] {
			assert.Equal(t, canonicalAddress(group[0]), canonicalAddress(a), "%s and %s", group[0], a)
		}
	}
	assert.NotEqual(t, canonicalAddress("127.0.0.1:6379"), canonicalAddress("127.0.0.2:6379"))
	assert.NotEqual(t, canonicalAddress("127.0.0.1:6379"), canonicalAddress("127.0.0.1:6380"))
}
