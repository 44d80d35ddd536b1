// Package cli implements the redlock commands. main.go only calls Main.
//
// Each command lives in its own file (cmd_NAME.go) and registers itself in init
// with register. Exit codes are the constants below; a command returns one.
package cli

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"regexp"
	"sort"
	"strconv"
	"strings"

	"github.com/agnivade/levenshtein"
)

// Exit codes shared by the commands. Their meaning per command is in each
// command's help text (DESIGN.md section 3).
const (
	ExitOK       = 0
	ExitError    = 1
	ExitUsage    = 2 // also "invalid" for validate
	ExitNotHeld  = 3 // acquire/run: held by another or wait expired; fmt -check: not formatted
	ExitLost     = 4 // extend/run: the lock was lost
	ExitChanges  = 2 // plan -detailed-exitcode: changes pending
	ExitInvalid  = 2 // validate: the file is invalid
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

// Command is one subcommand.
type Command struct {
	Name     string
	Synopsis string // one line for the command list
	Usage    string // "redlock NAME [flags] ARGS" plus the exit codes, for help NAME
	// Hidden commands (internal helpers such as bench-worker) are not listed.
	Hidden bool
	// Run executes the command. ctx is cancelled on SIGINT/SIGTERM.
	Run func(ctx context.Context, env *Env, args []string) int
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
		return runVersion(ctx, env, args[1:])
	}
	name := strings.TrimLeft(args[0], "-")
	switch name {
	case "h", "help":
		if len(args) > 1 {
			if c, ok := commands[args[1]]; ok {
				fmt.Fprintln(env.Stdout, c.Usage)
				return ExitOK
			}
			fmt.Fprintf(env.Stderr, "redlock: unknown command %q%s\n", args[1], didYouMean(args[1], commandNames()))
			printCommands(env.Stderr)
			return ExitUsage
		}
		printCommands(env.Stdout)
		return ExitOK
	}
	c, ok := commands[args[0]]
	if !ok {
		fmt.Fprintf(env.Stderr, "redlock: unknown command %q%s\n", args[0], didYouMean(args[0], commandNames()))
		printCommands(env.Stderr)
		return ExitUsage
	}
	return c.Run(ctx, env, args[1:])
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

// newFlagSet returns a flag set for cmd that reports errors instead of exiting and
// writes nothing by itself; parseFlags prints the one-line reason and the usage.
func newFlagSet(cmd *Command) *flag.FlagSet {
	fs := flag.NewFlagSet(cmd.Name, flag.ContinueOnError)
	fs.SetOutput(io.Discard)
	return fs
}

// usageErrorf prints a one-line reason and the command usage to stderr and
// returns ExitUsage.
func usageErrorf(env *Env, cmd *Command, format string, a ...any) int {
	fmt.Fprintf(env.Stderr, "redlock %s: %s\n\n%s\n", cmd.Name, fmt.Sprintf(format, a...), cmd.Usage)
	return ExitUsage
}

// parseFlags parses args with fs. On error (or -h) it prints the reason and usage and
// returns false with the exit code to use.
func parseFlags(env *Env, cmd *Command, fs *flag.FlagSet, args []string) (code int, ok bool) {
	if err := fs.Parse(args); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			fmt.Fprintln(env.Stdout, cmd.Usage)
			return ExitOK, false
		}
		return usageErrorf(env, cmd, "%s", flagError(fs, err)), false
	}
	return 0, true
}

// badValue matches the flag package's error for a value it cannot parse.
var badValue = regexp.MustCompile(`^invalid value "([^"]*)" for flag -(\S+): parse error$`)

// flagError explains a flag parse error: an unknown flag gets the closest known
// one of fs, a number given to a duration flag the hint that it needs a unit.
func flagError(fs *flag.FlagSet, err error) string {
	if name, ok := strings.CutPrefix(err.Error(), "flag provided but not defined: -"); ok && fs != nil {
		var flags []string
		fs.VisitAll(func(f *flag.Flag) { flags = append(flags, f.Name) })
		if hint := didYouMean(name, flags); hint != "" {
			return fmt.Sprintf("unknown flag -%s%s", name, strings.Replace(hint, `"`, `"-`, 1))
		}
		return "unknown flag -" + name
	}
	m := badValue.FindStringSubmatch(err.Error())
	if m == nil {
		return err.Error()
	}
	if _, perr := strconv.ParseFloat(m[1], 64); perr == nil {
		return fmt.Sprintf("-%s %s: a duration needs a unit, e.g. %ss, %sms or %sm", m[2], m[1], m[1], m[1], m[1])
	}
	return fmt.Sprintf("-%s: %q is not a valid value", m[2], m[1])
}

// interspersed parses flags that may appear after positional arguments
// ("acquire NAME -ttl 5s"). Everything after the first "--" is returned as rest,
// unparsed (nil when there is no "--"), so "run NAME -- cmd -x" keeps "-x" for cmd.
func interspersed(fs *flag.FlagSet, args []string) (pos, rest []string, err error) {
	for i, a := range args {
		if a == "--" {
			rest = append([]string{}, args[i+1:]...)
			args = args[:i]
			break
		}
	}
	for {
		if err := fs.Parse(args); err != nil {
			return nil, nil, err
		}
		args = fs.Args()
		if len(args) == 0 {
			return pos, rest, nil
		}
		pos = append(pos, args[0])
		args = args[1:]
	}
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
