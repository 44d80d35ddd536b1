// Package human formats values for people to read, the same way in every
// command's output and in the console.
package human

import (
	"fmt"
	"time"
)

// Duration formats d compactly and always the same way: 950ms below a second,
// 12.3s below a minute (tenths, cut, not rounded up: a countdown never shows more
// than is left), 4m05s below an hour, 2h03m below two days, then 3d04h. A
// negative d gets a leading "-". It is meant for reading, not parsing: use
// milliseconds in machine output.
func Duration(d time.Duration) string {
	neg := d < 0
	if neg {
		d = -d
	}
	var s string
	switch {
	case d < time.Second:
		s = fmt.Sprintf("%dms", d.Milliseconds())
	case d < time.Minute:
		tenths := d / (100 * time.Millisecond)
		s = fmt.Sprintf("%d.%ds", tenths/10, tenths%10)
	case d < time.Hour:
		s = fmt.Sprintf("%dm%02ds", int(d.Minutes()), int(d.Seconds())%60)
	case d < 48*time.Hour:
		s = fmt.Sprintf("%dh%02dm", int(d.Hours()), int(d.Minutes())%60)
	default:
		s = fmt.Sprintf("%dd%02dh", int(d.Hours())/24, int(d.Hours())%24)
	}
	if neg {
		return "-" + s
	}
	return s
}

// Latency formats a round trip or a clock offset, where the milliseconds'
// fraction matters: 0.3ms below 10ms (tenths, cut), 42ms below a second, then as
// Duration. A negative d gets a leading "-". The console's latency column and
// `nodes` show it alike.
func Latency(d time.Duration) string {
	if d < 0 {
		return "-" + Latency(-d)
	}
	switch {
	case d < 10*time.Millisecond:
		tenths := d / (100 * time.Microsecond) // cut, as Duration cuts
		return fmt.Sprintf("%d.%dms", tenths/10, tenths%10)
	case d < time.Second:
		return fmt.Sprintf("%dms", d.Milliseconds())
	}
	return Duration(d)
}
