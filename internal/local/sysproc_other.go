//go:build !linux

package local

import "syscall"

// DieWithParent returns attr unchanged: outside Linux there is no parent-death
// signal, and a process started with attr outlives this process when it is
// SIGKILLed.
func DieWithParent(attr *syscall.SysProcAttr) *syscall.SysProcAttr { return attr }
