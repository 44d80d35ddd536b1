package hcl

import (
	"fmt"
	"strconv"
	"strings"
	"time"
)

// ParseDuration parses a duration of the topology file: a Go duration string with
// a unit ("30s", "1m30s", "150ms"). Its errors say what to write instead; a bare
// number is refused with a hint to add a unit, since "30" could mean seconds or
// milliseconds.
func ParseDuration(s string) (time.Duration, error) {
	t := strings.TrimSpace(s)
	if t == "" {
		return 0, fmt.Errorf(`an empty string is not a duration; write a number with a unit, e.g. "30s"`)
	}
	if _, err := strconv.ParseFloat(t, 64); err == nil {
		return 0, fmt.Errorf(`%q needs a unit, e.g. "%ss" or "%sms" (units: ns, us, ms, s, m, h)`, s, t, t)
	}
	d, err := time.ParseDuration(t)
	if err != nil {
		return 0, fmt.Errorf(`%q is not a duration; write a number with a unit, e.g. "30s", "150ms" or "1m30s"`, s)
	}
	return d, nil
}
