//go:build !linux

package cli

import "time"

// threadCPU returns the processor time the calling thread has used: not known
// on this platform.
func threadCPU() (time.Duration, bool) { return 0, false }

// threadWaited returns the time the calling thread has waited for a core: not
// known on this platform.
func threadWaited() (time.Duration, bool) { return 0, false }
