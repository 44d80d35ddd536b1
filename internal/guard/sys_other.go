//go:build unix && !linux

package guard

import "syscall"

// wcontinued: other systems' Wait4 reports continued children without a flag that
// syscall exposes; stopped children are still reported.
const wcontinued = 0

// becomeSubreaper is Linux-only: elsewhere orphans of the command go to init.
func becomeSubreaper() {}

// childAttr starts the command in a process group of its own, put in the
// terminal's foreground when asked. There is no parent-death signal outside Linux:
// if the supervisor is killed, the command keeps running.
func childAttr(foreground bool) *syscall.SysProcAttr {
	return &syscall.SysProcAttr{Setpgid: true, Foreground: foreground, Ctty: 0}
}
