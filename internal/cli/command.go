package cli

import (
	"context"
	"errors"
	"fmt"
	"strings"

	"github.com/redlock/redlock/internal/escape"
)

// The arguments layer: every command is declared once, in its cmd_NAME.go, and
// everything else is derived from that declaration (after Terraform's
// internal/command/arguments and views).
//
// To declare a new command:
//
//  1. Write a typed arguments struct. Embed common (the -config, -masters, -var
//     and -timeout flags, and -json through its jsonFlag), lockArgs (common plus
//     one lock NAME), tokenFlags (-token, -token-file) or viewArgs (-json alone)
//     as the command needs, and add a field per own flag (flags.go).
//  2. Give it a flags method that binds its fields to flags, each with a
//     placeholder and a help text: f.Duration(&a.ttl, "ttl", 0, "lock TTL ...").
//     The usage's "Flags:" section, the shell completion's flag candidates and the
//     unknown-flag suggestions are generated from these calls; nothing else lists
//     flags.
//  3. Give it a parse method that takes the positional arguments and checks what
//     the flags cannot check alone; it returns usagef(...) for a bad command line.
//  4. Declare the command with `var _ = define(&Command{...}, run)`: its name,
//     synopsis, argument synopsis (Args), the prose of its help (About), its
//     exit-code table (Exits), what its positional argument completes to
//     (Complete), and its run function, which returns nil (exit 0) or an error:
//     usagef for a bad command line, fail(code, err) for an exit code of the
//     table, failDoc when a -json document of the command's own is to be printed
//     instead of the generic error document. A command on the masters wraps run
//     in withSession, which reads the token (when the arguments take one), opens
//     the session and closes it: run(ctx, env, s, a).
//  5. Output goes through a view (view.go): show(env, a.json, doc) prints doc as
//     one JSON document under -json, else calls its human method; showLine does
//     the same for a line of a stream. Errors are printed by one
//     printer (report): a usage error as the reason and `run 'redlock CMD -h' for
//     usage`, every failure under -json as one document on stdout.
//
// The help (help.go) is generated: usage line, About, the flags, the exit-code
// table. A test checks every command's help against its exit-code table, and
// every exit code a command returns in the tests against its table; another keeps
// README.md's command table and docs/commands.md equal to the generated help.

// Command is one declared subcommand.
type Command struct {
	Name     string
	Synopsis string // one line for the command list
	// Args is the synopsis of the positional arguments, for the usage line: "NAME",
	// "NAME [--] CMD [ARGS...]"; empty when the command takes none.
	Args string
	// About is the prose of the help, between the usage line and the flags.
	About string
	// Exits is the exit-code table: every code the command returns, once.
	Exits []Exit
	// ExitNote is printed above the exit-code table when set.
	ExitNote string
	// UsageExit is the code of a usage error: ExitUsage, or ExitError for plan
	// and apply, whose 2 means "changes pending" (as Terraform's).
	UsageExit int
	// Complete is what the shell completes the positional arguments to.
	Complete Completion
	// Hidden commands (internal helpers such as bench-worker) are not listed.
	Hidden bool
	// Raw commands get their arguments unparsed, in parsed.raw (__complete).
	Raw bool

	// bind declares the flags of a fresh arguments value on f and returns its
	// parse and run steps.
	bind func(f *Flags) bound
}

// exitBadInput is the row of every command that reads the topology file: a bad
// command line and an invalid file are one outcome (nothing was tried).
var exitBadInput = Exit{ExitUsage, "usage error or invalid topology file"}

// Exit is one row of a command's exit-code table. Code is -1 for a row that is
// not one number ("N  CMD's exit status").
type Exit struct {
	Code    int
	Meaning string
}

// Completion says what a command's positional arguments complete to.
type Completion struct {
	// Several: the command takes several lock names (before "--"), each completed.
	Several bool
	// Elections: the lock name is an election's, and only those are offered.
	Elections bool
	// LockName: the first positional argument is a lock name, read live.
	LockName bool
	// AnyKey: with LockName, every name locks lists is offered, foreign keys that
	// acquire's name rule refuses included (an admin command's argument). A name
	// a shell would not take literally is never offered (shellSafe).
	AnyKey bool
	// Words: the first positional argument is one of these words.
	Words []string
}

// bound is a command's arguments after its flags were declared.
type bound struct {
	parse func(p *parsed) error
	run   func(ctx context.Context, env *Env) error
}

// arguments is what a command's typed arguments struct implements.
type arguments interface {
	flags(f *Flags)
	parse(p *parsed) error
}

// define declares a command whose arguments are an A, run by run.
func define[A any, P interface {
	*A
	arguments
}](c *Command, run func(ctx context.Context, env *Env, a P) error) *Command {
	if c.UsageExit == 0 {
		c.UsageExit = ExitUsage
	}
	c.bind = func(f *Flags) bound {
		a := P(new(A))
		a.flags(f)
		return bound{parse: a.parse, run: func(ctx context.Context, env *Env) error { return run(ctx, env, a) }}
	}
	register(c)
	return c
}

// usageError is a bad command line: the printer says why and where the usage is.
type usageError struct {
	msg string
	err error // what errors.Is may see, or nil
}

func (e *usageError) Error() string { return e.msg }
func (e *usageError) Unwrap() error { return e.err }

// usagef returns a usage error.
func usagef(format string, a ...any) error {
	return &usageError{msg: fmt.Sprintf(format, a...)}
}

// exitError is a failure with its exit code; doc, when set, is the -json
// document to print for it.
type exitError struct {
	code int
	err  error
	doc  any
	// shown: the reason was already printed (diagnostics of an invalid file).
	shown bool
}

func (e *exitError) Error() string { return e.err.Error() }
func (e *exitError) Unwrap() error { return e.err }

// fail returns err with exit code code.
func fail(code int, err error) error { return &exitError{code: code, err: err} }

// failf returns an error with exit code code.
func failf(code int, format string, a ...any) error {
	return &exitError{code: code, err: fmt.Errorf(format, a...)}
}

// failDoc returns err with exit code code and the -json document to print for it.
func failDoc(code int, err error, doc any) error { return &exitError{code: code, err: err, doc: doc} }

// errorDoc is the -json document of a failure that has no document of its own:
// the reason, and the topology file's diagnostics when it is invalid.
type errorDoc struct {
	Error       string `json:"error"`
	Diagnostics any    `json:"diagnostics,omitempty"`
}

// run parses args for c, runs it and reports its outcome: the exit code.
func (c *Command) run(ctx context.Context, env *Env, args []string) int {
	f := newFlags(c.Name, env)
	b := c.bind(f)
	asJSON := f.lookup("json") != nil && jsonView(args)
	stopAt := 0
	if c.stopsAtCommand() {
		stopAt = 2
	}
	p, err := f.parseArgs(args, stopAt)
	if c.Raw {
		p, err = &parsed{raw: args, flags: f}, nil
	}
	if errors.Is(err, errHelp) {
		fmt.Fprint(env.Stdout, c.Help())
		return ExitOK
	}
	if err == nil {
		err = b.parse(p)
	}
	if err == nil {
		err = b.run(ctx, env)
	}
	code := c.report(env, err, asJSON)
	if exitCheck != nil {
		exitCheck(c, code)
	}
	return code
}

// exitCheck, set by the tests, sees every exit code a command returns.
var exitCheck func(c *Command, code int)

// stopsAtCommand reports whether the command's positional arguments end with a
// command line of its own (run, elect: Args ends with "CMD [ARGS...]"). Such a
// command takes the flock form "NAME CMD ARGS...": without a "--", the second
// word that is not one of its flags starts CMD, and every word after it is CMD's.
func (c *Command) stopsAtCommand() bool { return strings.HasSuffix(c.Args, "CMD [ARGS...]") }

// jsonView reports whether the command line asks for the JSON view, before the
// rest is parsed (as Terraform's ParseView), so that even a bad command line gets
// its document.
func jsonView(args []string) bool {
	on := false
	for _, a := range args {
		if a == "--" {
			break
		}
		switch a {
		case "-json", "--json", "-json=true", "--json=true":
			on = true
		case "-json=false", "--json=false":
			on = false
		}
	}
	return on
}

// report is the one printer of a command's outcome: nothing for success; the
// reason and a pointer to the usage for a usage error; the reason on stderr for a
// failure; and under -json one document on stdout for every failure.
func (c *Command) report(env *Env, err error, asJSON bool) int {
	if err == nil {
		return ExitOK
	}
	var ue *usageError
	if errors.As(err, &ue) {
		fmt.Fprintf(env.Stderr, "redlock %s: %s\nrun 'redlock %s -h' for usage\n", c.Name, escape.Text(ue.msg), c.Name)
		if asJSON {
			_ = writeDoc(env.Stdout, errorDoc{Error: ue.msg})
		}
		return c.UsageExit
	}
	code, doc, shown := ExitError, any(nil), false
	var ee *exitError
	if errors.As(err, &ee) {
		code, doc, shown = ee.code, ee.doc, ee.shown
	}
	if !shown {
		fmt.Fprintf(env.Stderr, "redlock %s: %s\n", c.Name, escapeLines(err.Error()))
	}
	if _, skip := doc.(skipDoc); asJSON && !skip {
		if doc == nil {
			doc = errorDoc{Error: err.Error()}
		}
		_ = writeDoc(env.Stdout, doc)
	}
	return code
}

// skipDoc, as the document of an exitError, says that the command has printed its
// document already.
type skipDoc struct{}
