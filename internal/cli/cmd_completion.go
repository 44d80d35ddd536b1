package cli

import (
	"context"
	"fmt"
	"os"
	"slices"
	"strings"
	"time"
	"unicode"

	"github.com/redlock/redlock/admin"
	"github.com/redlock/redlock/quorum"
)

// otherShells are shells that have no completion script here: naming one is not
// a typo of bash, zsh or fish.
var otherShells = []string{"sh", "csh", "tcsh", "ksh", "mksh", "dash", "ash", "yash", "pwsh", "powershell", "nu", "elvish", "xonsh", "ion", "osh"}

// completionArgs are the arguments of completion.
type completionArgs struct{ shell string }

func (a *completionArgs) flags(*Flags) {}

func (a *completionArgs) parse(p *parsed) error {
	if len(p.pos) != 1 || p.rest != nil {
		return usagef("one shell expected: bash, zsh or fish")
	}
	if _, ok := completionScripts[p.pos[0]]; !ok {
		if slices.Contains(otherShells, p.pos[0]) { // a shell, not a typo of one
			return usagef("no completion script for %s: there are scripts for bash, zsh and fish only", p.pos[0])
		}
		return usagef("unknown shell %q%s: there are completion scripts for bash, zsh and fish", p.pos[0], didYouMean(p.pos[0], []string{"bash", "zsh", "fish"}))
	}
	a.shell = p.pos[0]
	return nil
}

var _ = define(&Command{
	Name:     "completion",
	Synopsis: "print a shell completion script (bash, zsh, fish)",
	Args:     "bash|zsh|fish",
	About: `
Prints a script that completes redlock's commands, flags, and lock names (read live
from the masters when a topology file is found: -config on the line,
$REDLOCK_CONFIG, $REDLOCK_MASTERS or ./redlock.hcl; at most 1s).

  bash:  source <(redlock completion bash)          # or save it in /etc/bash_completion.d/redlock
  zsh:   redlock completion zsh > "${fpath[1]}/_redlock"   # then restart zsh
  fish:  redlock completion fish > ~/.config/fish/completions/redlock.fish`,
	Exits: []Exit{
		{0, "printed"},
		{2, "usage error (unknown shell)"},
	},
	Complete: Completion{Words: []string{"bash", "fish", "zsh"}},
}, runCompletion)

// completeArgs are the words after "redlock" that the scripts pass, the last one
// being completed.
type completeArgs struct{ words []string }

func (a *completeArgs) flags(*Flags) {}

func (a *completeArgs) parse(p *parsed) error {
	a.words = p.raw
	return nil
}

// __complete is what the scripts call; it prints the candidates, one per line.
var _ = define(&Command{
	Name:   "__complete",
	Args:   "WORDS...",
	Exits:  []Exit{{0, "printed the candidates (none is not an error)"}},
	Hidden: true,
	Raw:    true,
}, runComplete)

var completionScripts = map[string]string{
	"bash": `# bash completion for redlock: source <(redlock completion bash)
_redlock() {
  # Read line by line, never through compgen -W or an unquoted $(...): both expand
  # the candidates (command substitution, globs), and lock names come from the masters.
  local line
  COMPREPLY=()
  while IFS= read -r line; do
    COMPREPLY+=("$line")
  done < <(command redlock __complete "${COMP_WORDS[@]:1:COMP_CWORD}" 2>/dev/null)
}
complete -o default -F _redlock redlock
`,
	"zsh": `#compdef redlock
# zsh completion for redlock: redlock completion zsh > "${fpath[1]}/_redlock"
_redlock() {
  local -a candidates
  candidates=("${(@f)$(command redlock __complete "${(@)words[2,CURRENT]}" 2>/dev/null)}")
  compadd -a candidates
}
if [ "$funcstack[1]" = "_redlock" ]; then
  _redlock "$@"
else
  compdef _redlock redlock
fi
`,
	"fish": `# fish completion for redlock: redlock completion fish > ~/.config/fish/completions/redlock.fish
complete -c redlock -f -a '(command redlock __complete (commandline -opc)[2..-1] (commandline -ct) 2>/dev/null)'
`,
}

func runCompletion(_ context.Context, env *Env, a *completionArgs) error {
	_, err := fmt.Fprint(env.Stdout, completionScripts[a.shell])
	return err
}

func runComplete(ctx context.Context, env *Env, a *completeArgs) error {
	args := a.words
	if len(args) == 0 {
		args = []string{""}
	}
	cur := args[len(args)-1]
	offer := func(cands []string) {
		for _, n := range cands {
			if strings.HasPrefix(n, cur) {
				fmt.Fprintln(env.Stdout, n)
			}
		}
	}
	if len(args) == 1 {
		offer(append(commandNames(), "help"))
		return nil
	}
	if args[0] == "help" {
		if len(args) == 2 {
			offer(commandNames())
		}
		return nil
	}
	cmd, ok := commands[args[0]]
	if !ok || cmd.Hidden {
		return nil
	}
	if strings.HasPrefix(cur, "-") {
		offer(cmd.flagNames())
		return nil
	}
	words := args[1 : len(args)-1]
	f := newFlags(cmd.Name, nil)
	cmd.bind(f)
	if n := len(words); n > 0 && strings.HasPrefix(words[n-1], "-") {
		if d := f.lookup(strings.TrimLeft(words[n-1], "-")); d != nil && !d.isBool {
			offer(d.choices) // the flag's value: its choices, or nothing
			return nil
		}
	}
	topo, hasPos := f.scanWords(words)
	switch {
	case hasPos && !(cmd.Complete.Several && !slices.Contains(words, "--")):
	case len(cmd.Complete.Words) > 0:
		offer(cmd.Complete.Words)
	case cmd.Complete.LockName:
		for _, n := range liveNames(ctx, env, topo, cur, cmd.Complete) {
			fmt.Fprintln(env.Stdout, n)
		}
	}
	return nil
}

// scanWords reads a partial command line as f's flags would: it returns the
// words that set the topology flags (-config, -masters, -var, -timeout) and
// whether a positional argument stands among the words already.
func (f *Flags) scanWords(words []string) (topo []string, positional bool) {
	topoFlag := map[string]bool{"config": true, "masters": true, "var": true, "timeout": true}
	for i := 0; i < len(words); i++ {
		w := words[i]
		switch {
		case w == "--":
			return topo, positional || i+1 < len(words)
		case len(w) < 2 || w[0] != '-':
			positional = true
			continue
		}
		name, _, hasValue := strings.Cut(strings.TrimLeft(w, "-"), "=")
		d := f.lookup(name)
		takesValue := !hasValue && (d == nil || !d.isBool)
		if topoFlag[name] {
			topo = append(topo, w)
			if takesValue && i+1 < len(words) {
				topo = append(topo, words[i+1])
			}
		}
		if takesValue {
			i++ // its value
		}
	}
	return topo, positional
}

// liveNames lists the lock names starting with prefix, read from the masters of
// the topology the words name (or the default one), within a second; nothing when
// there is no topology or no answer.
//
// A semaphore's permits and a shared key give their name; with Elections, only
// the names of elections are listed; with AnyKey, keys of another library or type
// too (the names force-expire takes).
func liveNames(ctx context.Context, env *Env, words []string, prefix string, want Completion) []string {
	var cf common
	f := newFlags("__complete", env)
	cf.flags(f)
	_, _ = f.parseArgs(words, 0)
	_ = cf.check() // -config in the words wins over REDLOCK_MASTERS
	if cf.masters == "" {
		if _, err := os.Stat(cf.config); err != nil {
			return nil
		}
	}
	cfg, diags := cf.loadQuiet(env)
	if diags.HasErrors() || cfg.Cluster == nil {
		return nil
	}
	quietRedis()
	s, err := openSession(&Env{Stdout: env.Stdout, Stderr: discard{}, Getenv: env.Getenv}, &cf)
	if err != nil {
		return nil
	}
	defer s.close()
	cctx, cancel := context.WithTimeout(ctx, time.Second)
	defer cancel()
	lst, _ := s.adm().Inspect(cctx, admin.EscapeGlob(prefix)+"*")
	if lst == nil {
		return nil
	}
	var out []string
	for _, li := range lst.Locks {
		kc := admin.ClassifyKey(li.Name, li.KeyType())
		rule := quorum.ValidateName
		if want.AnyKey {
			rule = admin.ValidateKeyName
		}
		switch {
		case want.Elections != (kc.Kind == admin.KeyLeader):
		case kc.Kind == admin.KeyLock, kc.Kind == admin.KeyShared, kc.Kind == admin.KeyPermit, kc.Kind == admin.KeyLeader,
			want.AnyKey && kc.Kind == admin.KeyOther:
			if rule(kc.Name) == nil && shellSafe(kc.Name) && strings.HasPrefix(kc.Name, prefix) && !slices.Contains(out, kc.Name) {
				out = append(out, kc.Name)
			}
		}
	}
	return out
}

// shellSafe reports whether a lock name may be offered to a shell: a shell inserts
// a completion into the command line as typed, so a name written by anyone with
// access to the masters, such as "$(rm${IFS}-rf${IFS}~)", runs when the user
// presses Enter. Only letters, digits and . _ - / : @ + = , % are offered.
func shellSafe(name string) bool {
	if name == "" {
		return false
	}
	for _, r := range name {
		if !unicode.IsLetter(r) && !unicode.IsDigit(r) && !strings.ContainsRune("._-/:@+=,%", r) {
			return false
		}
	}
	return true
}

// discard is an io.Writer that drops everything.
type discard struct{}

func (discard) Write(p []byte) (int, error) { return len(p), nil }
