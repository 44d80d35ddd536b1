//go:build !unix

package cli

import (
	"os"
	"syscall"
)

// sigCont is never sent: without job control nothing stops the command.
const sigCont = syscall.Signal(0)

// notifyContinued does nothing: there is no job control.
func notifyContinued(chan<- os.Signal) {}

// stopOwnGroup does nothing: there is no job control.
func stopOwnGroup() {}
