//go:build unix && !linux

package local

import "syscall"

// DieWithParent returns attr unchanged: outside Linux there is no parent-death
// signal, and a process started with attr outlives this process when it is
// SIGKILLed.
func DieWithParent(attr *syscall.SysProcAttr) *syscall.SysProcAttr { return attr }

// ownGroup starts a process in its own process group.
func ownGroup() *syscall.SysProcAttr { return &syscall.SysProcAttr{Setpgid: true} }
