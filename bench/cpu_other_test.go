//go:build !unix

package bench

import "time"

// processCPU is not measured here (reported as 0).
func processCPU() time.Duration { return 0 }
