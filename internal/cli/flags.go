package cli

import (
	"errors"
	"flag"
	"fmt"
	"io"
	"math"
	"slices"
	"strconv"
	"strings"
	"time"
)

// The flags of the arguments layer (command.go): each flag declared once, with its
// placeholder and help; a command line parsed against the declarations.

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
	// choices are the values of a Choice flag, which completion offers.
	choices []string
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
	f.decls[len(f.decls)-1].choices = choices
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
