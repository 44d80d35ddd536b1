package cli

import (
	"regexp"
	"strconv"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// Every command's help lists its exit-code table: each code once (a code never
// means two things), 0 first, and the usage-error code among them; and the flag
// section lists every declared flag.
func TestHelpMatchesExitCodeTable(t *testing.T) {
	row := regexp.MustCompile(`^  (\d+|N)\s+\S`)
	for name, c := range commands {
		t.Run(name, func(t *testing.T) {
			help := c.Help()
			_, table, ok := strings.Cut(help, "Exit codes:\n")
			require.True(t, ok, "help has an exit-code table")
			var listed []int
			for _, line := range strings.Split(table, "\n") {
				m := row.FindStringSubmatch(line)
				if m == nil {
					continue
				}
				code := -1
				if m[1] != "N" {
					code, _ = strconv.Atoi(m[1])
				}
				assert.NotContains(t, listed, code, "code %d listed twice", code)
				listed = append(listed, code)
			}
			assert.Equal(t, c.exitCodes(), listed, "the help lists the table")
			if !c.Raw {
				assert.Contains(t, listed, c.UsageExit, "the usage-error code is declared")
			}
			if listed[0] != -1 {
				assert.Equal(t, 0, listed[0], "0 comes first")
			}
			for _, f := range c.flagNames() {
				assert.Regexp(t, `(?m)^  `+regexp.QuoteMeta(f)+`\b`, help, "flag %s in the help", f)
			}
		})
	}
}

// A usage error prints the reason and where the usage is, never the whole help.
func TestUsageErrorIsShort(t *testing.T) {
	tests := []struct {
		args []string
		code int
		want string
	}{
		{[]string{"acquire"}, ExitUsage, "redlock acquire: missing lock NAME\nrun 'redlock acquire -h' for usage\n"},
		{[]string{"run", "job"}, ExitUsage, "redlock run: missing CMD: redlock run job -- CMD [ARGS...]\nrun 'redlock run -h' for usage\n"},
		{[]string{"locks", "-match"}, ExitUsage, "redlock locks: -match needs a value (-match GLOB)\nrun 'redlock locks -h' for usage\n"},
		{[]string{"plan", "-bogus"}, ExitError, "redlock plan: unknown flag -bogus\nrun 'redlock plan -h' for usage\n"},
		{[]string{"apply", "extra"}, ExitError, "redlock apply: unexpected argument \"extra\"\nrun 'redlock apply -h' for usage\n"},
		{[]string{"validate", "-var", "bad name=Secret-9f"}, ExitUsage, "redlock validate: -var: \"bad name\" is not a valid variable name\nrun 'redlock validate -h' for usage\n"},
		{[]string{"nodes", "-timeout", "5"}, ExitUsage, "redlock nodes: -timeout 5: a duration needs a unit, e.g. 5s, 5ms or 5m\nrun 'redlock nodes -h' for usage\n"},
	}
	for _, tt := range tests {
		t.Run(strings.Join(tt.args, " "), func(t *testing.T) {
			code, stdout, stderr := runCLI(t, map[string]string{"REDLOCK_TIMEOUT": ""}, tt.args...)
			assert.Equal(t, tt.code, code)
			assert.Equal(t, tt.want, stderr)
			assert.Empty(t, stdout)
		})
	}
}

// A bad REDLOCK_TIMEOUT is a usage error naming the variable, in two lines.
func TestUsageErrorBadEnvironment(t *testing.T) {
	code, _, stderr := runCLI(t, map[string]string{"REDLOCK_TIMEOUT": "soon"}, "locks")
	assert.Equal(t, ExitUsage, code)
	assert.Equal(t, "redlock locks: REDLOCK_TIMEOUT is not a duration (e.g. 30s)\nrun 'redlock locks -h' for usage\n", stderr)
}

// run NAME CMD without "--" is accepted as flock accepts it: CMD starts at the
// first word after NAME that is not one of run's flags, and CMD's flags are CMD's.
func TestRunWithoutDoubleDash(t *testing.T) {
	tests := []struct {
		args       []string
		name       string
		names      []string
		argv       []string
		usageError string
	}{
		{args: []string{"job", "make", "-j4"}, name: "job", argv: []string{"make", "-j4"}},
		{args: []string{"job", "-ttl", "5s", "make", "-ttl", "x"}, name: "job", argv: []string{"make", "-ttl", "x"}},
		{args: []string{"-wait", "1s", "job", "--", "make", "-j4"}, name: "job", argv: []string{"make", "-j4"}},
		{args: []string{"job", "--", "sh", "-c", "echo -- x"}, name: "job", argv: []string{"sh", "-c", "echo -- x"}},
		{args: []string{"a", "b", "--", "true"}, names: []string{"a", "b"}, argv: []string{"true"}}, // several names need "--"
		{args: []string{"a", "a", "--", "true"}, usageError: "lock NAME a given twice"},
		{args: []string{"job"}, usageError: "missing CMD: redlock run job -- CMD [ARGS...]"},
	}
	for _, tt := range tests {
		t.Run(strings.Join(tt.args, " "), func(t *testing.T) {
			f := newFlags("run", &Env{})
			a := &runArgs{}
			a.flags(f)
			p, err := f.parseArgs(tt.args, 2)
			require.NoError(t, err)
			err = a.parse(p)
			if tt.usageError != "" {
				require.Error(t, err)
				assert.Equal(t, tt.usageError, err.Error())
				return
			}
			require.NoError(t, err)
			if tt.names == nil {
				tt.names = []string{tt.name}
			}
			assert.Equal(t, tt.names, a.names)
			assert.Equal(t, tt.argv, a.argv)
		})
	}
}

// The usage's flag section and the completion's flag candidates come from the
// same declarations.
func TestCompletionFlagsAreTheDeclaredFlags(t *testing.T) {
	for _, name := range []string{"acquire", "run", "plan", "watch", "fmt"} {
		c := commands[name]
		r := runHealthCmd(t, "", "__complete", name, "-")
		got := strings.Fields(r.stdout)
		assert.ElementsMatch(t, c.flagNames(), got, name)
	}
}

// Issue 23 item 16: an invalid topology file exits 2 in every command that reads
// one (up exited 1), and 1 in plan and apply, whose 2 means "changes pending".
func TestInvalidFileExitCode(t *testing.T) {
	bad := writeFile(t, t.TempDir(), "bad.hcl", "cluster \"x\" {\n  ttl = \"30\"\n}\n")
	tests := []struct {
		args []string
		code int
	}{
		{[]string{"acquire", "x"}, ExitInvalid},
		{[]string{"extend", "x", "-token", "t"}, ExitInvalid},
		{[]string{"release", "x", "-token", "t"}, ExitInvalid},
		{[]string{"force-expire", "x", "-yes"}, ExitInvalid},
		{[]string{"run", "x", "--", "true"}, ExitInvalid},
		{[]string{"locks"}, ExitInvalid},
		{[]string{"nodes"}, ExitInvalid},
		{[]string{"watch"}, ExitInvalid},
		{[]string{"events"}, ExitInvalid},
		{[]string{"up"}, ExitInvalid},
		{[]string{"console"}, ExitInvalid},
		{[]string{"exporter"}, ExitInvalid},
		{[]string{"bench"}, ExitInvalid},
		{[]string{"validate"}, ExitInvalid},
		{[]string{"plan"}, ExitError},
		{[]string{"apply"}, ExitError},
	}
	for _, tt := range tests {
		t.Run(tt.args[0], func(t *testing.T) {
			args := append([]string{tt.args[0], "-config", bad}, tt.args[1:]...)
			code, stdout, stderr := runCLI(t, nil, args...)
			assert.Equal(t, tt.code, code, stderr)
			assert.Contains(t, stderr, "bad.hcl")
			assert.Empty(t, stdout)
		})
	}
}

// Issue 23 item 16: version -json claimed "modified": false for a build without
// VCS information (a test binary has none); it says nothing then.
func TestVersionWithoutVCSInformation(t *testing.T) {
	v := buildVersion()
	require.Empty(t, v.Commit, "a test binary records no VCS information")
	r := runHealthCmd(t, "", "version", "-json")
	require.Equal(t, ExitOK, r.code)
	assert.NotContains(t, r.stdout, `"modified"`)
}

// A flag's value completes to its declared choices.
func TestCompletionOffersAFlagsChoices(t *testing.T) {
	r := runHealthCmd(t, "", "__complete", "events", "-mode", "")
	assert.Equal(t, "auto\nkeyspace\npoll\n", r.stdout)
	r = runHealthCmd(t, "", "__complete", "events", "-mode", "k")
	assert.Equal(t, "keyspace\n", r.stdout)
	r = runHealthCmd(t, "", "__complete", "acquire", "-ttl", "")
	assert.Empty(t, r.stdout, "a duration has no candidates")
}
