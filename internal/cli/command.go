package cli

// The arguments layer: every command is declared once, in its cmd_NAME.go, and
// everything else is derived from that declaration (after Terraform's
// internal/command/arguments and views).
//
// To declare a new command:
//
//  1. Write a typed arguments struct. Embed topoArgs (the -config, -masters,
//     -var and -timeout flags), lockArgs (topoArgs plus one lock NAME) or
//     viewArgs (-json) as the command needs, and add a field per own flag.
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
//  5. Output goes through a view: show(env, a.json, doc) prints doc as one JSON
//     document under -json, else calls its human method. Errors are printed by one
//     printer (report): a usage error as the reason and `run 'redlock CMD -h' for
//     usage`, every failure under -json as one document on stdout.
//
// A test checks every command's help against its exit-code table, and every exit
// code a command returns in the tests against its table.

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"math"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/redlock/redlock/internal/escape"
)

// Command is one declared subcommand.
type Command struct {
	Name     string
	Synopsis string // one line for the command list
	// Args is the synopsis of the positional arguments, for the usage line: "NAME",
	// "NAME -- CMD [ARGS...]"; empty when the command takes none.
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
	// LockName: the first positional argument is a lock name, read live.
	LockName bool
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

// Flags declares a command's flags: each one once, with its placeholder and
// help, from which the usage and the completion are generated.
type Flags struct {
	fs    *flag.FlagSet
	env   *Env
	decls []flagDecl
}

type flagDecl struct {
	name, arg, help string
	isBool          bool
	// echo: a bad value may be quoted in the error (durations and numbers; never
	// -var or -token, whose values may be secret).
	echo bool
}

func newFlags(name string, env *Env) *Flags {
	fs := flag.NewFlagSet(name, flag.ContinueOnError)
	fs.SetOutput(io.Discard)
	if env == nil {
		env = &Env{}
	}
	return &Flags{fs: fs, env: env}
}

// getenv reads the environment, or nothing when the command is only described.
func (f *Flags) getenv(name string) string {
	if f.env.Getenv == nil {
		return ""
	}
	return f.env.Getenv(name)
}

func (f *Flags) add(name, arg, help string, isBool bool) {
	f.decls = append(f.decls, flagDecl{name: name, arg: arg, help: help, isBool: isBool})
}

// Bool declares a boolean flag: -name, or -name=true|false.
func (f *Flags) Bool(p *bool, name, help string) {
	f.fs.Var(&boolValue{p: p}, name, help)
	f.add(name, "", help, true)
	f.decls[len(f.decls)-1].echo = true
}

// boolValue is a boolean flag with a plain error.
type boolValue struct{ p *bool }

func (b *boolValue) IsBoolFlag() bool { return true }

func (b *boolValue) String() string {
	if b.p == nil {
		return "false"
	}
	return strconv.FormatBool(*b.p)
}

func (b *boolValue) Set(s string) error {
	v, err := strconv.ParseBool(s)
	if err != nil {
		return errors.New("must be true or false")
	}
	*b.p = v
	return nil
}

// Duration declares a duration flag; its placeholder is D. The value it returns
// can bound it: f.Duration(...).atLeast(positive).
func (f *Flags) Duration(p *time.Duration, name string, def time.Duration, help string) *durationValue {
	v := &durationValue{p: p, min: math.MinInt64}
	f.fs.Var(v, name, help)
	*p = def
	f.add(name, "D", help, false)
	f.decls[len(f.decls)-1].echo = true
	return v
}

// String declares a string flag with placeholder arg.
func (f *Flags) String(p *string, name, arg, def, help string) {
	f.fs.StringVar(p, name, def, help)
	f.add(name, arg, help, false)
}

// Int declares an integer flag with placeholder arg.
func (f *Flags) Int(p *int, name, arg string, def int, help string) {
	f.fs.Var(&intValue{p: p}, name, help)
	*p = def
	f.add(name, arg, help, false)
	f.decls[len(f.decls)-1].echo = true
}

// Choice declares a flag whose value is one of choices; the first is the default.
func (f *Flags) Choice(p *string, name, arg string, choices []string, help string) {
	*p = choices[0]
	f.fs.Var(&choiceValue{p: p, choices: choices}, name, help)
	f.add(name, arg, help, false)
	f.decls[len(f.decls)-1].echo = true
}

// choiceValue is a string flag limited to a few values.
type choiceValue struct {
	p       *string
	choices []string
}

func (c *choiceValue) String() string {
	if c.p == nil {
		return ""
	}
	return *c.p
}

func (c *choiceValue) Set(s string) error {
	if !slices.Contains(c.choices, s) {
		return fmt.Errorf("must be %s", strings.Join(c.choices, ", "))
	}
	*c.p = s
	return nil
}

// Var declares a flag of any flag.Value with placeholder arg.
func (f *Flags) Var(v flag.Value, name, arg, help string) {
	f.fs.Var(v, name, help)
	f.add(name, arg, help, false)
}

// hidden declares a flag of an internal command, not listed in any help.
func (f *Flags) hidden(v flag.Value, name string) { f.fs.Var(v, name, "") }

// given reports whether the flag name was set on the command line.
func (f *Flags) given(name string) bool { return flagGiven(f.fs, name) }

// lookup returns the declaration of name, or nil.
func (f *Flags) lookup(name string) *flagDecl {
	for i := range f.decls {
		if f.decls[i].name == name {
			return &f.decls[i]
		}
	}
	return nil
}

// durationValue is a duration flag whose error for a bare number says it needs a
// unit, with an optional lower bound.
type durationValue struct {
	p   *time.Duration
	min time.Duration
}

// positive is the lower bound of a duration that must be above zero.
const positive = time.Nanosecond

// atLeast refuses values below min: 0 for "not negative", positive for "above
// zero".
func (d *durationValue) atLeast(min time.Duration) { d.min = min }

func (d *durationValue) String() string {
	if d.p == nil {
		return ""
	}
	return d.p.String()
}

func (d *durationValue) Set(s string) error {
	v, err := time.ParseDuration(s)
	if err != nil {
		if _, nerr := strconv.ParseFloat(s, 64); nerr == nil {
			return fmt.Errorf("a duration needs a unit, e.g. %ss, %sms or %sm", s, s, s)
		}
		return errors.New("not a duration (e.g. 30s, 500ms, 2m)")
	}
	switch {
	case v >= d.min:
	case d.min == 0:
		return errors.New("must not be negative")
	case d.min == positive:
		return errors.New("must be positive")
	default:
		return fmt.Errorf("must be at least %v", d.min)
	}
	*d.p = v
	return nil
}

// intValue is an integer flag with a plain error.
type intValue struct{ p *int }

func (i *intValue) String() string {
	if i.p == nil {
		return ""
	}
	return strconv.Itoa(*i.p)
}

func (i *intValue) Set(s string) error {
	v, err := strconv.Atoi(s)
	if err != nil {
		return errors.New("not a whole number")
	}
	*i.p = v
	return nil
}

// parsed is a command line after the flags were taken out.
type parsed struct {
	// pos are the positional arguments; rest is what follows "--" (nil when
	// there is no "--").
	pos, rest []string
	// raw is the whole command line of a Raw command.
	raw   []string
	flags *Flags
}

// given reports whether the flag name was on the command line.
func (p *parsed) given(name string) bool { return p.flags.given(name) }

// errHelp: -h or -help was given.
var errHelp = errors.New("help requested")

// parseArgs takes the declared flags out of args, wherever they stand ("acquire
// NAME -ttl 5s"), up to "--"; what follows "--" is rest, unparsed. When stopAt >
// 0 and there is no "--", the stopAt-th positional argument and everything after
// it are rest too (run NAME CMD ARGS..., as flock: CMD's own flags are CMD's).
func (f *Flags) parseArgs(args []string, stopAt int) (*parsed, error) {
	p := &parsed{flags: f}
	for i := 0; i < len(args); i++ {
		a := args[i]
		if a == "--" {
			p.rest = append([]string{}, args[i+1:]...)
			break
		}
		if len(a) < 2 || a[0] != '-' {
			if stopAt > 0 && len(p.pos) == stopAt-1 && !slices.Contains(args, "--") {
				p.rest = append([]string{}, args[i:]...)
				break
			}
			p.pos = append(p.pos, a)
			continue
		}
		name := strings.TrimPrefix(a[1:], "-")
		name, value, hasValue := strings.Cut(name, "=")
		if name == "" || name[0] == '-' || name[0] == '=' {
			return nil, usagef("bad flag syntax: %s", a)
		}
		if name == "h" || name == "help" {
			return nil, errHelp
		}
		d := f.lookup(name)
		if d == nil && f.fs.Lookup(name) == nil {
			names := make([]string, 0, len(f.decls))
			for _, d := range f.decls {
				names = append(names, d.name)
			}
			if hint := didYouMean(name, names); hint != "" {
				return nil, usagef("unknown flag -%s%s", name, strings.Replace(hint, `"`, `"-`, 1))
			}
			return nil, usagef("unknown flag -%s", name)
		}
		if !hasValue {
			if d != nil && d.isBool {
				value = "true"
			} else {
				if i+1 >= len(args) {
					return nil, usagef("-%s needs a value%s", name, argHint(d))
				}
				i++
				value = args[i]
			}
		}
		if err := f.fs.Set(name, value); err != nil {
			if d != nil && d.echo {
				return nil, usagef("-%s %s: %v", name, value, err)
			}
			return nil, usagef("-%s: %v", name, err)
		}
	}
	return p, nil
}

func argHint(d *flagDecl) string {
	if d == nil || d.arg == "" {
		return ""
	}
	return " (-" + d.name + " " + d.arg + ")"
}

// noArgs refuses positional arguments.
func (p *parsed) noArgs(hint string) error {
	if len(p.pos) > 0 {
		return usagef("unexpected argument %q%s", p.pos[0], hint)
	}
	if p.rest != nil {
		return usagef("unexpected arguments after --")
	}
	return nil
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
// command line of its own (run, elect).
func (c *Command) stopsAtCommand() bool { return strings.Contains(c.Args, "-- CMD") }

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

// Help is the command's full help: usage line, prose, the flags generated from
// their declarations, and the exit-code table.
func (c *Command) Help() string {
	f := newFlags(c.Name, nil)
	c.bind(f)
	var b strings.Builder
	fmt.Fprintf(&b, "Usage: redlock %s", c.Name)
	if len(f.decls) > 0 {
		b.WriteString(" [flags]")
	}
	if c.Args != "" {
		b.WriteString(" " + c.Args)
	}
	b.WriteString("\n")
	if c.About != "" {
		b.WriteString("\n" + strings.TrimSpace(c.About) + "\n")
	}
	if len(f.decls) > 0 {
		b.WriteString("\nFlags:\n")
		for _, d := range f.decls {
			writeFlagHelp(&b, d)
		}
	}
	if len(c.Exits) > 0 {
		b.WriteString("\n")
		if c.ExitNote != "" {
			b.WriteString(strings.TrimSpace(c.ExitNote) + "\n\n")
		}
		b.WriteString("Exit codes:\n")
		for _, e := range c.Exits {
			code := strconv.Itoa(e.Code)
			if e.Code < 0 {
				code = "N"
			}
			lines := strings.Split(e.Meaning, "\n")
			fmt.Fprintf(&b, "  %-3s  %s\n", code, lines[0])
			for _, l := range lines[1:] {
				fmt.Fprintf(&b, "       %s\n", strings.TrimSpace(l))
			}
		}
	}
	return b.String()
}

// flagColumn is where a flag's help starts in the usage.
const flagColumn = 20

func writeFlagHelp(b *strings.Builder, d flagDecl) {
	head := "  -" + d.name
	if d.arg != "" {
		head += " " + d.arg
	}
	lines := strings.Split(d.help, "\n")
	pad := strings.Repeat(" ", flagColumn)
	if len(head) >= flagColumn-1 {
		b.WriteString(head + "\n")
	} else {
		b.WriteString(head + strings.Repeat(" ", flagColumn-len(head)) + strings.TrimSpace(lines[0]) + "\n")
		lines = lines[1:]
	}
	for _, l := range lines {
		b.WriteString(pad + strings.TrimSpace(l) + "\n")
	}
}

// flagNames lists the declared flags of c, "-name" each, in declaration order.
func (c *Command) flagNames() []string {
	f := newFlags(c.Name, nil)
	c.bind(f)
	out := make([]string, 0, len(f.decls))
	for _, d := range f.decls {
		out = append(out, "-"+d.name)
	}
	return out
}

// exitCodes lists the codes of c's table.
func (c *Command) exitCodes() []int {
	out := make([]int, 0, len(c.Exits))
	for _, e := range c.Exits {
		out = append(out, e.Code)
	}
	return out
}

// viewArgs is the -json flag of a command with a JSON view.
type viewArgs struct{ json bool }

func (v *viewArgs) flags(f *Flags) { f.Bool(&v.json, "json", "print one JSON document on stdout") }

// jsonDoc is a command's output: its JSON form is the value itself, its human
// form what human writes.
type jsonDoc interface {
	human(env *Env) error
}

// lineDoc is one line of a stream (watch, events): its JSON form is the value
// itself, its human form humanLine.
type lineDoc interface {
	humanLine() string
}

// showLine prints one line of a stream in the view the command line asked for.
func showLine(env *Env, asJSON bool, doc lineDoc) error {
	if asJSON {
		return writeLine(env.Stdout, doc)
	}
	_, err := io.WriteString(env.Stdout, doc.humanLine()+"\n")
	return err
}

// show prints doc in the view the command line asked for.
func show(env *Env, asJSON bool, doc jsonDoc) error {
	if asJSON {
		return writeDoc(env.Stdout, doc)
	}
	return doc.human(env)
}
