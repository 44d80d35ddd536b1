package local

import "syscall"

// DieWithParent returns attr unchanged: Windows has no parent-death signal, and a
// process started with attr outlives this process when it is killed.
func DieWithParent(attr *syscall.SysProcAttr) *syscall.SysProcAttr { return attr }

// ownGroup starts a process in a new process group, so that a Ctrl-C at the
// console reaches this process only.
func ownGroup() *syscall.SysProcAttr {
	return &syscall.SysProcAttr{CreationFlags: syscall.CREATE_NEW_PROCESS_GROUP}
}
