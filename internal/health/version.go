package health

import (
	"strconv"
	"strings"
)

// version is a Redis version major.minor.patch.
type version [3]int

// parseVersion parses "7.0.15" (extra fields and suffixes are ignored). ok is false
// when the string does not start with a number.
func parseVersion(s string) (version, bool) {
	var v version
	parts := strings.SplitN(s, ".", 4)
	for i := 0; i < 3 && i < len(parts); i++ {
		digits := parts[i]
		if j := strings.IndexFunc(digits, func(r rune) bool { return r < '0' || r > '9' }); j >= 0 {
			digits = digits[:j]
		}
		n, err := strconv.Atoi(digits)
		if err != nil {
			if i == 0 {
				return v, false
			}
			break
		}
		v[i] = n
	}
	return v, true
}

func (v version) less(w version) bool {
	for i := range v {
		if v[i] != w[i] {
			return v[i] < w[i]
		}
	}
	return false
}

// branch compares the major.minor of v and w: -1, 0 or 1.
func (v version) branch(w version) int {
	for i := 0; i < 2; i++ {
		switch {
		case v[i] < w[i]:
			return -1
		case v[i] > w[i]:
			return 1
		}
	}
	return 0
}

// luaAdvisory is a group of Lua-engine CVEs fixed in the same releases. Fixed lists
// the first fixed release of every branch that got the fix, as published in the
// Redis release notes.
type luaAdvisory struct {
	CVEs  []string
	Fixed []string
}

// luaAdvisories are the Lua-engine CVEs a lock server is exposed to: every lock
// operation runs a script, so the locking credential can run Lua.
var luaAdvisories = []luaAdvisory{
	// Lua code injection across users; NULL dereference on a crafted script.
	{CVEs: []string{"CVE-2022-24735", "CVE-2022-24736"}, Fixed: []string{"6.2.7", "7.0.0"}},
	// Heap overflow in cjson/cmsgpack.
	{CVEs: []string{"CVE-2022-24834"}, Fixed: []string{"6.0.20", "6.2.13", "7.0.12"}},
	// Stack overflow in the bit library.
	{CVEs: []string{"CVE-2024-31449"}, Fixed: []string{"6.2.16", "7.2.6", "7.4.1"}},
	// Use-after-free in the Lua garbage collector.
	{CVEs: []string{"CVE-2024-46981"}, Fixed: []string{"6.2.17", "7.2.7", "7.4.2"}},
	// Parser use-after-free ("RediShell"), integer overflow in unpack, script run
	// as another user, out-of-bounds read.
	{CVEs: []string{"CVE-2025-49844", "CVE-2025-46817", "CVE-2025-46818", "CVE-2025-46819"},
		Fixed: []string{"6.2.20", "7.2.11", "7.4.6", "8.0.4", "8.2.2"}},
}

// affects reports whether v lacks the fix: v is safe when its branch got the fix and
// v is at or above it, or when v's branch is newer than every fixed branch. A branch
// between fixed ones got no fix (end of life) and counts as affected.
func (a luaAdvisory) affects(v version) bool {
	newest := version{}
	for _, s := range a.Fixed {
		f, _ := parseVersion(s)
		if v.branch(f) == 0 {
			return v.less(f)
		}
		if newest.branch(f) < 0 {
			newest = f
		}
	}
	return v.branch(newest) <= 0
}

// luaCVEs returns the CVE ids of luaAdvisories that affect the version string s, in
// table order, and nil when none does or s is not a version.
func luaCVEs(s string) []string {
	v, ok := parseVersion(s)
	if !ok {
		return nil
	}
	var out []string
	for _, a := range luaAdvisories {
		if a.affects(v) {
			out = append(out, a.CVEs...)
		}
	}
	return out
}
