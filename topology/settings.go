package topology

import (
	"fmt"
	"maps"
	"slices"
	"strconv"
	"strings"
)

// SettingKind is the type of a Redis configuration parameter's value.
type SettingKind int

// Kinds of setting values.
const (
	KindString SettingKind = iota // any text, compared as written
	KindBool                      // yes or no (a bool in the file)
	KindInt                       // a whole number
	KindSize                      // a memory size: 104857600, 100mb, 1gb
	KindEnum                      // one of a fixed list, case-insensitive
	KindFlags                     // notify-keyspace-events: a set of flag characters
)

// settingSpec is what the tool knows of one Redis configuration parameter.
type settingSpec struct {
	kind   SettingKind
	values []string // KindEnum: the allowed values, lower case
	min    int64    // KindInt: the smallest value
	// startup is true for a setting Redis reads only when it starts: CONFIG SET
	// refuses it ("can't set immutable config"), so apply cannot change it.
	startup bool
}

var (
	yes      = settingSpec{kind: KindBool}
	text     = settingSpec{kind: KindString}
	size     = settingSpec{kind: KindSize}
	count    = settingSpec{kind: KindInt}
	signed   = settingSpec{kind: KindInt, min: -1}
	policies = []string{"noeviction", "allkeys-lru", "allkeys-lfu", "allkeys-random", "volatile-lru", "volatile-lfu", "volatile-random", "volatile-ttl"}
)

// keyspaceFlags are the notify-keyspace-events flag characters; A stands for
// g$lshzxetd (every class but m and n).
const (
	keyspaceFlags = "KEg$lshzxetdmnA"
	keyspaceAll   = "g$lshzxetd"
)

// knownSettings are the Redis configuration parameters a settings block may
// declare: those that matter to a lock server, all settable with CONFIG SET on
// Redis 6.2 to 7.x except the startup ones (rdbchecksum, enable-debug-command),
// which a master reads only from its config file.
var knownSettings = map[string]settingSpec{
	"maxmemory":                   size,
	"maxmemory-policy":            {kind: KindEnum, values: policies},
	"maxmemory-samples":           count,
	"maxmemory-eviction-tenacity": count,
	"appendonly":                  yes,
	"appendfsync":                 {kind: KindEnum, values: []string{"always", "everysec", "no"}},
	"no-appendfsync-on-rewrite":   yes,
	"auto-aof-rewrite-percentage": count,
	"auto-aof-rewrite-min-size":   size,
	"aof-use-rdb-preamble":        yes,
	"aof-load-truncated":          yes,
	"aof-timestamp-enabled":       yes,
	"save":                        text,
	"stop-writes-on-bgsave-error": yes,
	"rdbcompression":              yes,
	"rdbchecksum":                 {kind: KindBool, startup: true},
	"notify-keyspace-events":      {kind: KindFlags},
	"requirepass":                 text,
	"masterauth":                  text,
	"protected-mode":              yes,
	"timeout":                     count,
	"tcp-keepalive":               count,
	"maxclients":                  count,
	"hz":                          count,
	"dynamic-hz":                  yes,
	"active-expire-effort":        count,
	"activerehashing":             yes,
	"activedefrag":                yes,
	"lazyfree-lazy-eviction":      yes,
	"lazyfree-lazy-expire":        yes,
	"lazyfree-lazy-server-del":    yes,
	"lazyfree-lazy-user-del":      yes,
	"lazyfree-lazy-user-flush":    yes,
	"replica-read-only":           yes,
	"replica-serve-stale-data":    yes,
	"min-replicas-to-write":       count,
	"min-replicas-max-lag":        count,
	"repl-timeout":                count,
	"repl-backlog-size":           size,
	"repl-diskless-sync":          yes,
	"busy-reply-threshold":        count,
	"lua-time-limit":              count,
	"slowlog-log-slower-than":     signed,
	"slowlog-max-len":             count,
	"latency-monitor-threshold":   count,
	"latency-tracking":            yes,
	"loglevel":                    {kind: KindEnum, values: []string{"debug", "verbose", "notice", "warning"}},
	"client-output-buffer-limit":  text,
	"client-query-buffer-limit":   size,
	"proto-max-bulk-len":          size,
	"enable-debug-command":        {kind: KindEnum, values: []string{"yes", "no", "local"}, startup: true},
	"crash-log-enabled":           yes,
}

// KnownSettings returns the Redis CONFIG names a settings block may declare, sorted.
func KnownSettings() []string { return slices.Sorted(maps.Keys(knownSettings)) }

// KnownSetting reports whether name (Redis CONFIG spelling) may be declared.
func KnownSetting(name string) bool {
	_, ok := knownSettings[name]
	return ok
}

// StartupSetting reports whether Redis reads setting name (CONFIG spelling) only
// when it starts: CONFIG SET refuses it, so apply never tries it and plan reports
// a difference as the finding CodeStartupSetting instead of a change.
func StartupSetting(name string) bool { return knownSettings[name].startup }

// CheckSetting returns why value is not a valid value of setting name, or "".
// Unknown names are not checked here (KnownSetting says so).
func CheckSetting(name, value string) string {
	spec, ok := knownSettings[name]
	if !ok {
		return ""
	}
	v := strings.ToLower(strings.TrimSpace(value))
	switch spec.kind {
	case KindBool:
		if v != "yes" && v != "no" {
			return fmt.Sprintf("%s takes yes or no (or a bool), got %q", SettingAttr(name), value)
		}
	case KindInt:
		n, err := strconv.ParseInt(v, 10, 64)
		if err != nil || n < spec.min {
			return fmt.Sprintf("%s takes a whole number of at least %d, got %q", SettingAttr(name), spec.min, value)
		}
	case KindSize:
		if _, ok := MemBytes(v); !ok {
			return fmt.Sprintf("%s takes a memory size such as 104857600, 100mb or 1gb, got %q", SettingAttr(name), value)
		}
	case KindEnum:
		if !slices.Contains(spec.values, v) {
			return fmt.Sprintf("%s takes one of %s, got %q", SettingAttr(name), strings.Join(spec.values, ", "), value)
		}
	case KindFlags:
		for _, r := range value {
			if !strings.ContainsRune(keyspaceFlags, r) {
				return fmt.Sprintf("%s takes flag characters from %q, got %q", SettingAttr(name), keyspaceFlags, value)
			}
		}
	}
	return ""
}

// UnsafeSetting returns why a valid value of setting name breaks lock safety, or
// "": every allkeys-* and volatile-* maxmemory-policy can evict lock keys (they
// carry a TTL). apply never sets such a value.
func UnsafeSetting(name, value string) string {
	v := strings.ToLower(strings.TrimSpace(value))
	if name == "maxmemory-policy" && (strings.HasPrefix(v, "allkeys-") || strings.HasPrefix(v, "volatile-")) {
		return fmt.Sprintf("maxmemory_policy %q can evict lock keys (they carry a TTL): an evicted key is a lock another client can take while its holder still believes it holds it; use \"noeviction\"", value)
	}
	return ""
}

// SameSetting reports whether the live value of setting name (as CONFIG GET
// reports it) means the declared value: case and surrounding space aside, yes/no
// as written, memory sizes by their byte count ("100mb" is 104857600), and
// notify-keyspace-events as a set of flags (Redis reorders them: "Kg$x" reads back
// as "g$xK"; A stands for g$lshzxetd).
func SameSetting(name, live, declared string) bool {
	if name == "notify-keyspace-events" {
		// Case matters: E (keyevent) is not e (evicted).
		return keyspaceSet(strings.TrimSpace(live)) == keyspaceSet(strings.TrimSpace(declared))
	}
	a, b := strings.ToLower(strings.TrimSpace(live)), strings.ToLower(strings.TrimSpace(declared))
	if a == b {
		return true
	}
	na, okA := MemBytes(a)
	nb, okB := MemBytes(b)
	return okA && okB && na == nb
}

// keyspaceSet returns the notify-keyspace-events flags of s as a canonical string:
// the alias A expanded, each flag once, in keyspaceFlags order.
func keyspaceSet(s string) string {
	s = strings.ReplaceAll(s, "A", keyspaceAll)
	var b strings.Builder
	for _, r := range keyspaceFlags {
		if r != 'A' && strings.ContainsRune(s, r) {
			b.WriteRune(r)
		}
	}
	return b.String()
}

// MemBytes parses a Redis memory size (lower case): a number with an optional unit
// k, kb, m, mb, g, gb (k = 1000, kb = 1024, as redis.conf defines them).
func MemBytes(s string) (int64, bool) {
	units := []struct {
		suffix string
		mult   int64
	}{{"gb", 1 << 30}, {"mb", 1 << 20}, {"kb", 1 << 10}, {"g", 1e9}, {"m", 1e6}, {"k", 1e3}, {"b", 1}, {"", 1}}
	for _, u := range units {
		if num, ok := strings.CutSuffix(s, u.suffix); ok {
			n, err := strconv.ParseInt(num, 10, 64)
			if err != nil || n < 0 {
				return 0, false
			}
			return n * u.mult, true
		}
	}
	return 0, false
}
