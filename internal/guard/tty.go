//go:build unix

package guard

import (
	"os/signal"
	"syscall"

	"golang.org/x/sys/unix"
)

// InForeground reports whether fd is a terminal whose foreground process group is
// the caller's: only then may the command be given the terminal.
func InForeground(fd int) bool {
	pgrp, err := unix.IoctlGetInt(fd, unix.TIOCGPGRP)
	return err == nil && pgrp == syscall.Getpgrp()
}

// IsTerminal reports whether fd is a terminal (one that has a foreground
// process group).
func IsTerminal(fd int) bool {
	_, err := unix.IoctlGetInt(fd, unix.TIOCGPGRP)
	return err == nil
}

// ForegroundIs reports whether pgid is the foreground process group of the
// terminal fd.
func ForegroundIs(fd, pgid int) bool {
	pgrp, err := unix.IoctlGetInt(fd, unix.TIOCGPGRP)
	return err == nil && pgrp == pgid
}

// TakeTerminal puts the caller's process group back in the foreground of the
// terminal fd, after a command that had it ended or stopped. The caller is in the
// background then, so SIGTTOU is ignored for the call.
func TakeTerminal(fd int) {
	signal.Ignore(syscall.SIGTTOU)
	defer signal.Reset(syscall.SIGTTOU)
	_ = unix.IoctlSetPointerInt(fd, unix.TIOCSPGRP, syscall.Getpgrp())
}

// GiveTerminal puts the process group pgid in the foreground of the terminal fd.
func GiveTerminal(fd, pgid int) {
	signal.Ignore(syscall.SIGTTOU)
	defer signal.Reset(syscall.SIGTTOU)
	_ = unix.IoctlSetPointerInt(fd, unix.TIOCSPGRP, pgid)
}
