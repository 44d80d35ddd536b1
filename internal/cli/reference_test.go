package cli

import (
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

var updateReference = flag.Bool("update-reference", false, "rewrite README.md's command table and docs/commands.md from the declarations")

// commandTable is README's table of commands, generated from the declarations.
func commandTable() string {
	var b strings.Builder
	b.WriteString("| command | flags (besides -config, -masters, -var, -timeout) | what it does | exit codes |\n|---|---|---|---|\n")
	topo := map[string]bool{"-config": true, "-masters": true, "-var": true, "-timeout": true}
	for _, name := range commandNames() {
		c := commands[name]
		use := name
		if c.Args != "" {
			use += " " + c.Args
		}
		var codes []string
		for _, e := range c.Exits {
			if e.Code < 0 {
				codes = append(codes, "N")
				continue
			}
			codes = append(codes, strconv.Itoa(e.Code))
		}
		var own []string
		for _, f := range c.flagNames() {
			if !topo[f] {
				own = append(own, "`"+f+"`")
			}
		}
		fmt.Fprintf(&b, "| `%s` | %s | %s | %s |\n", strings.ReplaceAll(use, "|", `\|`), strings.Join(own, " "),
			strings.ReplaceAll(c.Synopsis, "|", `\|`), strings.Join(codes, ", "))
	}
	return b.String()
}

// commandReference is docs/commands.md: every command's help, as `redlock help
// COMMAND` prints it.
func commandReference() string {
	var b strings.Builder
	b.WriteString("# Command reference\n\nGenerated from the commands' declarations (`go test ./internal/cli -run TestCommandReference -update-reference`); `redlock help COMMAND` prints the same.\n")
	for _, name := range commandNames() {
		fmt.Fprintf(&b, "\n## %s\n\n```\n%s```\n", name, commands[name].Help())
	}
	return b.String()
}

const (
	tableBegin = "<!-- commands:begin (generated: go test ./internal/cli -run TestCommandReference -update-reference) -->\n"
	tableEnd   = "<!-- commands:end -->\n"
)

// README's command table and docs/commands.md say exactly what the help says.
func TestCommandReference(t *testing.T) {
	root := filepath.Join("..", "..")
	readme := filepath.Join(root, "README.md")
	b, err := os.ReadFile(readme)
	require.NoError(t, err)
	text := string(b)
	before, rest, ok := strings.Cut(text, tableBegin)
	require.True(t, ok, "README.md has the commands:begin marker")
	table, after, ok := strings.Cut(rest, tableEnd)
	require.True(t, ok, "README.md has the commands:end marker")
	ref := filepath.Join(root, "docs", "commands.md")
	if *updateReference {
		require.NoError(t, os.WriteFile(readme, []byte(before+tableBegin+commandTable()+tableEnd+after), 0o644))
		require.NoError(t, os.WriteFile(ref, []byte(commandReference()), 0o644))
		return
	}
	assert.Equal(t, commandTable(), table, "README.md's table: run with -update-reference")
	got, err := os.ReadFile(ref)
	require.NoError(t, err)
	assert.Equal(t, commandReference(), string(got), "docs/commands.md: run with -update-reference")
}
