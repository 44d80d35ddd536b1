package local

import "syscall"

// DieWithParent makes a process started with attr receive SIGKILL when the
// thread that started it ends (PR_SET_PDEATHSIG), so it cannot outlive this
// process even when this process is SIGKILLed. It returns attr.
func DieWithParent(attr *syscall.SysProcAttr) *syscall.SysProcAttr {
	attr.Pdeathsig = syscall.SIGKILL
	return attr
}

// ownGroup starts a process in its own process group, killed when this process dies.
func ownGroup() *syscall.SysProcAttr {
	return DieWithParent(&syscall.SysProcAttr{Setpgid: true})
}
