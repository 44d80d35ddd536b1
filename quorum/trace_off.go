//go:build !redlocktrace

package quorum

import (
	"time"

	"github.com/redlock/redlock/internal/wire"
)

// tracing is false: the trace's clock readings are compiled out.
const tracing = false

// The handoff trace (trace_on.go) is built only with the redlocktrace build tag;
// without it these are empty and cost nothing.

func traceRound(*Report, []wire.Result, time.Time, time.Time) {}
func traceAwait(time.Time, time.Duration, bool)               {}
func traceWake(int, string, string, int, time.Time)           {}
