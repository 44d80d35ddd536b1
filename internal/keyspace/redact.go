package keyspace

import "strings"

// Redact shortens a lock value for display: a value of the lock library (token
// returns its token and true) keeps its version and the first 6 characters of
// its token ("rl1.3vS4OZ…"); any other value keeps its first 6 characters, and
// one of 6 or fewer is all stars. Full tokens never reach output. token must
// accept only values whose token has at least 6 characters.
func Redact(value string, token func(string) (string, bool)) string {
	if t, ok := token(value); ok {
		return "rl1." + t[:6] + "…"
	}
	if len(value) <= 6 {
		return strings.Repeat("*", len(value))
	}
	return value[:6] + "…"
}
