// Package cli implements the redlock commands. main.go only calls Main.
//
// Each command lives in its own file (cmd_NAME.go) and is declared there once,
// with define (command.go says how): its arguments, flags, help, exit codes and
// completion.
package cli

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"sort"
	"strings"

	"github.com/agnivade/levenshtein"

	"github.com/redlock/redlock/internal/escape"
)

// Exit codes shared by the commands. What each means for a command is in its
// exit-code table (Command.Exits, printed by its help and in docs/commands.md).
const (
	ExitOK       = 0
	ExitError    = 1
	ExitUsage    = 2 // a bad command line
	ExitInvalid  = 2 // the topology file is invalid: as a bad command line, nothing was tried
	ExitNotHeld  = 3 // acquire/run: held by another or wait expired
	ExitLost     = 4 // extend/release/run: the lock was lost
	ExitChanges  = 2 // plan -detailed-exitcode: changes pending (plan's usage errors exit 1)
	ExitUnformat = 3 // fmt -check: a file is not formatted
)

// Env is what a command may touch of the outside world. Tests fill it with buffers.
type Env struct {
	Stdin  io.Reader
	Stdout io.Writer
	Stderr io.Writer
	// Getenv reads the environment (REDLOCK_CONFIG, REDLOCK_VAR_*).
	Getenv func(string) string
}

var commands = map[string]*Command{}

func register(c *Command) {
	if _, dup := commands[c.Name]; dup {
		panic("cli: command registered twice: " + c.Name)
	}
	commands[c.Name] = c
}

// Main dispatches args (without the program name) to a command and returns the exit code.
func Main(ctx context.Context, env *Env, args []string) int {
	if env.Getenv == nil {
		env.Getenv = os.Getenv
	}
	if len(args) == 0 {
		// As Terraform: the command list, as a usage error would print it.
		printCommands(env.Stderr)
		return ExitUsage
	}
	switch args[0] {
	case "--version", "-version", "-v":
		return versionCmd.run(ctx, env, args[1:])
	}
	name := strings.TrimLeft(args[0], "-")
	switch name {
	case "h", "help":
		if len(args) > 1 {
			if c, ok := commands[args[1]]; ok {
				fmt.Fprint(env.Stdout, c.Help())
				return ExitOK
			}
			return unknownCommand(env, args[1])
		}
		printCommands(env.Stdout)
		return ExitOK
	}
	c, ok := commands[args[0]]
	if !ok {
		return unknownCommand(env, args[0])
	}
	return c.run(ctx, env, args[1:])
}

func unknownCommand(env *Env, name string) int {
	fmt.Fprintf(env.Stderr, "redlock: unknown command %q%s\nrun 'redlock help' for the list of commands\n", escape.Text(name), didYouMean(name, commandNames()))
	return ExitUsage
}

// commandNames returns the listed commands, sorted.
func commandNames() []string {
	names := make([]string, 0, len(commands))
	for n, c := range commands {
		if !c.Hidden {
			names = append(names, n)
		}
	}
	sort.Strings(names)
	return names
}

// didYouMean returns ` (did you mean "X"?)` for the candidate closest to s by edit
// distance (agnivade/levenshtein) when it is close enough, else "".
func didYouMean(s string, candidates []string) string {
	best, bestD := "", max(2, len(s)/3)+1
	for _, c := range candidates {
		if d := levenshtein.ComputeDistance(s, c); d < bestD {
			best, bestD = c, d
		}
	}
	if best == "" {
		return ""
	}
	return fmt.Sprintf(" (did you mean %q?)", best)
}

func printCommands(w io.Writer) {
	names := commandNames()
	fmt.Fprintln(w, "Usage: redlock COMMAND [flags] [args]")
	fmt.Fprintln(w)
	fmt.Fprintln(w, "Commands:")
	for _, n := range names {
		fmt.Fprintf(w, "  %-14s %s\n", n, commands[n].Synopsis)
	}
	fmt.Fprintln(w)
	fmt.Fprintln(w, "Run 'redlock help COMMAND' for a command's flags and exit codes.")
}

// errInterrupted: Ctrl-C (SIGINT or SIGTERM) came while the command waited for
// input.
var errInterrupted = errors.New("interrupted")

// interruptible runs read (a read of stdin, a token file, a FIFO) and returns its
// result, or errInterrupted as soon as ctx ends: main turns Ctrl-C into a
// cancelled context, and a read of a terminal where nobody types never looks at
// it. The read goes on in the background and its result is dropped.
func interruptible(ctx context.Context, read func() (string, error)) (string, error) {
	type result struct {
		line string
		err  error
	}
	done := make(chan result, 1)
	go func() {
		line, err := read()
		done <- result{line, err}
	}()
	select {
	case r := <-done:
		return r.line, r.err
	case <-ctx.Done():
		return "", errInterrupted
	}
}
