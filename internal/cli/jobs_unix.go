//go:build unix

package cli

import (
	"os"
	"os/signal"
	"syscall"
)

// sigCont continues a stopped process.
const sigCont = syscall.SIGCONT

// notifyContinued relays SIGCONT (the shell's fg or bg) to ch.
func notifyContinued(ch chan<- os.Signal) { signal.Notify(ch, syscall.SIGCONT) }

// stopOwnGroup stops this process's group, as Ctrl-Z would: the shell gets its job back.
func stopOwnGroup() { _ = syscall.Kill(0, syscall.SIGTSTP) }
