package guard

import (
	"syscall"

	"golang.org/x/sys/unix"
)

// wcontinued makes Wait4 report a stopped child that was continued.
const wcontinued = unix.WCONTINUED

// becomeSubreaper makes the command's orphaned descendants children of the
// supervisor (PR_SET_CHILD_SUBREAPER), so they are not lost to init.
func becomeSubreaper() { _ = unix.Prctl(unix.PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0) }

// childAttr starts the command in a process group of its own, put in the
// terminal's foreground when asked, and SIGKILLed when the supervisor dies.
func childAttr(foreground bool) *syscall.SysProcAttr {
	return &syscall.SysProcAttr{Setpgid: true, Foreground: foreground, Ctty: 0, Pdeathsig: syscall.SIGKILL}
}
