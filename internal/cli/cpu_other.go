//go:build !unix

package cli

import "time"

// processCPU returns 0: the platform's processor time is not measured.
func processCPU() time.Duration { return 0 }
