// Command redlock is a Redlock distributed-lock manager: a scriptable CLI and a
// terminal console over N independent Redis masters declared in an HCL file.
// Run `redlock` with no arguments for the list of commands.
package main

import (
	"context"
	"os"
	"os/signal"
	"syscall"

	"github.com/redlock/redlock/internal/cli"
	"github.com/redlock/redlock/internal/guard"
)

func main() {
	if len(os.Args) > 1 && os.Args[1] == guard.Command {
		// `redlock run`'s supervisor: the same binary, re-executed.
		os.Exit(guard.Main(os.Args[2:]))
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	code := cli.Main(ctx, &cli.Env{Stdin: os.Stdin, Stdout: os.Stdout, Stderr: os.Stderr, Getenv: os.Getenv}, os.Args[1:])
	stop()
	os.Exit(code)
}
