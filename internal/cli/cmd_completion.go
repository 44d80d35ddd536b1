package cli

import (
	"context"
	"fmt"
	"os"
	"regexp"
	"slices"
	"sort"
	"strings"
	"time"
	"unicode"

	"github.com/redlock/redlock/quorum"
)

var completionCmd = &Command{
	Name:     "completion",
	Synopsis: "print a shell completion script (bash, zsh, fish)",
	Usage: `Usage: redlock completion bash|zsh|fish

Prints a script that completes redlock's commands, flags, and lock names (read live
from the masters when a topology file is found: -config on the line,
$REDLOCK_CONFIG, $REDLOCK_MASTERS or ./redlock.hcl; at most 1s).

  bash:  source <(redlock completion bash)          # or save it in /etc/bash_completion.d/redlock
  zsh:   redlock completion zsh > "${fpath[1]}/_redlock"   # then restart zsh
  fish:  redlock completion fish > ~/.config/fish/completions/redlock.fish

Exit codes:
  0  printed
  2  usage error (unknown shell)`,
}

// completeCmd is what the scripts call: the words after "redlock", the last one
// being completed; it prints the candidates, one per line.
var completeCmd = &Command{Name: "__complete", Hidden: true, Usage: "Usage: redlock __complete WORDS..."}

func init() {
	completionCmd.Run = runCompletion
	register(completionCmd)
	completeCmd.Run = runComplete
	register(completeCmd)
}

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

func runCompletion(_ context.Context, env *Env, args []string) int {
	if len(args) == 1 && (args[0] == "-h" || args[0] == "-help" || args[0] == "--help") {
		fmt.Fprintln(env.Stdout, completionCmd.Usage)
		return ExitOK
	}
	if len(args) != 1 {
		return usageErrorf(env, completionCmd, "one shell expected: bash, zsh or fish")
	}
	script, ok := completionScripts[args[0]]
	if !ok {
		return usageErrorf(env, completionCmd, "unknown shell %q%s: bash, zsh or fish", args[0], didYouMean(args[0], []string{"bash", "zsh", "fish"}))
	}
	fmt.Fprint(env.Stdout, script)
	return ExitOK
}

// flagLine finds the flags a command documents in its usage ("  -ttl D  ...").
var flagLine = regexp.MustCompile(`(?m)^\s+(-[a-z][a-z-]*)\b`)

// commandFlags lists the flags of cmd, from its usage text.
func commandFlags(cmd *Command) []string {
	seen := map[string]bool{}
	var out []string
	for _, m := range flagLine.FindAllStringSubmatch(cmd.Usage, -1) {
		if !seen[m[1]] {
			seen[m[1]] = true
			out = append(out, m[1])
		}
	}
	sort.Strings(out)
	return out
}

// lockNameCommands take a lock NAME as their argument.
var lockNameCommands = map[string]bool{"acquire": true, "extend": true, "release": true, "run": true, "force-expire": true, "elect": true, "leader": true}

// multiNameCommands take several lock NAMEs (before "--").
var multiNameCommands = map[string]bool{"acquire": true, "extend": true, "release": true, "run": true}

func runComplete(ctx context.Context, env *Env, args []string) int {
	if len(args) == 0 {
		args = []string{""}
	}
	cur := args[len(args)-1]
	if len(args) == 1 {
		for _, n := range append(commandNames(), "help") {
			if strings.HasPrefix(n, cur) {
				fmt.Fprintln(env.Stdout, n)
			}
		}
		return ExitOK
	}
	var fixed []string // the candidates of a fixed second word
	switch args[0] {
	case "help":
		fixed = commandNames()
	case "completion":
		fixed = []string{"bash", "fish", "zsh"}
	}
	if fixed != nil {
		if len(args) == 2 {
			for _, n := range fixed {
				if strings.HasPrefix(n, cur) {
					fmt.Fprintln(env.Stdout, n)
				}
			}
		}
		return ExitOK
	}
	cmd, ok := commands[args[0]]
	if !ok {
		return ExitOK
	}
	if strings.HasPrefix(cur, "-") {
		for _, f := range commandFlags(cmd) {
			if strings.HasPrefix(f, cur) {
				fmt.Fprintln(env.Stdout, f)
			}
		}
		return ExitOK
	}
	words := args[1 : len(args)-1]
	if lockNameCommands[cmd.Name] && (!hasPositional(words) || multiNameCommands[cmd.Name] && !slices.Contains(words, "--")) {
		for _, n := range liveNames(ctx, env, words, cur, cmd.Name == "elect" || cmd.Name == "leader") {
			fmt.Fprintln(env.Stdout, n)
		}
	}
	return ExitOK
}

// hasPositional reports whether words already hold a NAME (a word that is not a
// flag or a flag's value; -json-like booleans are the only flags without value).
func hasPositional(words []string) bool {
	for i := 0; i < len(words); i++ {
		w := words[i]
		switch {
		case w == "--":
			return i+1 < len(words)
		case strings.HasPrefix(w, "-"):
			if !strings.Contains(w, "=") && !boolFlag(w) {
				i++ // its value
			}
		default:
			return true
		}
	}
	return false
}

func boolFlag(f string) bool {
	switch strings.TrimLeft(f, "-") {
	case "json", "yes", "read-only", "embedded", "quiet", "fair", "check", "diff", "auto-approve", "detailed-exitcode", "recursive", "shared", "watch":
		return true
	}
	return false
}

// liveNames lists the lock names starting with prefix, read from the masters of
// the topology the words name (or the default one), within a second; nothing when
// there is no topology or no answer. A semaphore's permits and a shared key give
// their name; with elections, only the names of elections are listed.
func liveNames(ctx context.Context, env *Env, words []string, prefix string, elections bool) []string {
	var cf common
	fs := newFlagSet(completeCmd)
	cf.register(fs, env)
	_, _, _ = interspersed(fs, words)
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
	s, code := openSession(&Env{Stdout: env.Stdout, Stderr: discard{}, Getenv: env.Getenv}, completeCmd, &cf)
	if code != ExitOK || s == nil {
		return nil
	}
	defer s.close()
	cctx, cancel := context.WithTimeout(ctx, time.Second)
	defer cancel()
	lst, _ := s.m.Inspect(cctx, quorum.EscapeGlob(prefix)+"*")
	if lst == nil {
		return nil
	}
	var out []string
	for _, li := range lst.Locks {
		kc := quorum.ClassifyKey(li.Name, li.KeyType())
		switch {
		case elections != (kc.Kind == quorum.KeyLeader):
		case kc.Kind == quorum.KeyLock, kc.Kind == quorum.KeyShared, kc.Kind == quorum.KeyPermit, kc.Kind == quorum.KeyLeader:
			if shellSafe(kc.Name) && strings.HasPrefix(kc.Name, prefix) && !slices.Contains(out, kc.Name) {
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
	if quorum.ValidateName(name) != nil {
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
