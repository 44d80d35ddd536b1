package cli

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"strings"
)

// tokenFlags are the ways to give a lock's token without putting it on the
// command line, where every local user can read it in ps: -token-file PATH,
// -token - (read from stdin) and $REDLOCK_TOKEN. -token T still works.
type tokenFlags struct {
	token string
	file  string
	// optional: no token at all is not an error (force-expire); tok is then "".
	optional bool
	// tok is the token read by readToken.
	tok string
}

// readToken reads the token into t.tok.
func (t *tokenFlags) readToken(ctx context.Context, env *Env) error {
	tok, err := t.value(ctx, env)
	if t.optional && errors.Is(err, errNoToken) {
		return nil
	}
	t.tok = tok
	return err
}

func (t *tokenFlags) flags(f *Flags) {
	f.String(&t.token, "token", "T", "", `the lock's token; "-" reads it from stdin (default $REDLOCK_TOKEN)`)
	f.String(&t.file, "token-file", "PATH", "", "read the token from PATH (its first line)")
}

// errNoToken: no token was given in any of the ways.
var errNoToken = errors.New("missing token: give -token T, -token - (stdin), -token-file PATH or REDLOCK_TOKEN")

// value returns the token: from -token-file, from stdin for "-token -", from
// -token, else from REDLOCK_TOKEN. A token read from a file or stdin is its first
// line, trimmed. A missing or unreadable token is a usage error naming the flag
// (errors.Is finds errNoToken when none was given); Ctrl-C while reading is an
// ExitError that says nothing was done.
func (t *tokenFlags) value(ctx context.Context, env *Env) (string, error) {
	tok, err := t.read(ctx, env)
	switch {
	case errors.Is(err, errInterrupted):
		return "", failf(ExitError, "interrupted while reading the token; nothing done")
	case err != nil:
		return "", &usageError{msg: err.Error(), err: err}
	}
	return tok, nil
}

func (t *tokenFlags) read(ctx context.Context, env *Env) (string, error) {
	if t.file != "" && t.token != "" {
		return "", errors.New("-token and -token-file are exclusive")
	}
	read := func(r io.Reader, from string) (string, error) {
		line, err := interruptible(ctx, func() (string, error) {
			return bufio.NewReader(io.LimitReader(r, 64<<10)).ReadString('\n')
		})
		if errors.Is(err, errInterrupted) {
			return "", err
		}
		if err != nil && !errors.Is(err, io.EOF) {
			return "", fmt.Errorf("%s: %w", from, err)
		}
		tok := strings.TrimSpace(line)
		if tok == "" {
			return "", fmt.Errorf("%s: no token there", from)
		}
		return tok, nil
	}
	switch {
	case t.file != "":
		var f *os.File
		_, err := interruptible(ctx, func() (string, error) { // a FIFO blocks in open
			var err error
			f, err = os.Open(t.file)
			return "", err
		})
		if errors.Is(err, errInterrupted) {
			return "", err
		}
		if err != nil {
			return "", fmt.Errorf("-token-file: %w", err)
		}
		defer f.Close()
		return read(f, "-token-file "+t.file)
	case t.token == "-":
		return read(env.Stdin, "-token - (stdin)")
	case t.token != "":
		return t.token, nil
	}
	if v := env.Getenv("REDLOCK_TOKEN"); v != "" {
		return strings.TrimSpace(v), nil
	}
	return "", errNoToken
}
