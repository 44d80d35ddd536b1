package cli

import (
	"fmt"
	"strconv"
	"strings"
)

// A command's help, generated from its declaration (command.go).

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
