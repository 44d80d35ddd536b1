package cli

import (
	"strings"
	"testing"
)

// FuzzParseArgs: any command line, split on NUL into words, parses against run's
// declarations without a panic; what it returns keeps every word: the flags it
// took and their values, the positional words in order, and the rest unparsed.
func FuzzParseArgs(f *testing.F) {
	for _, seed := range []string{
		"job\x00make\x00-j4",
		"-ttl\x005s\x00job\x00--\x00sh\x00-c\x00x",
		"job\x00-json=maybe",
		"---x\x00-\x00--",
		"-ttl\x00",
		"-var\x00a b=c\x00job\x00cmd",
		"-conflict-exit-code=300\x00x\x00y",
	} {
		f.Add(seed)
	}
	f.Fuzz(func(t *testing.T, line string) {
		args := strings.Split(line, "\x00")
		fl := newFlags("run", &Env{})
		a := &runArgs{}
		a.flags(fl)
		p, err := fl.parseArgs(args, 2)
		if err != nil {
			if _, ok := err.(*usageError); !ok && err != errHelp {
				t.Fatalf("%q: an error that is not a usage error: %v", args, err)
			}
			return
		}
		for _, w := range p.pos {
			if len(w) > 1 && w[0] == '-' {
				t.Fatalf("%q: flag-like word %q taken as positional", args, w)
			}
		}
		if len(p.pos)+len(p.rest) > len(args) {
			t.Fatalf("%q: more words out than in", args)
		}
		_ = a.parse(p) // never panics
	})
}
