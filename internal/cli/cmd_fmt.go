package cli

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"strings"

	udiff "github.com/aymanbagabas/go-udiff"

	"github.com/redlock/redlock/hcl"
)

// fmtArgs are the arguments of fmt.
type fmtArgs struct {
	config                 string
	check, diff, recursive bool
	files                  []string
}

func (a *fmtArgs) flags(f *Flags) {
	f.Bool(&a.check, "check", "do not write; list the files that are not formatted and exit 3")
	f.Bool(&a.diff, "diff", "print a unified diff of the changes")
	f.Bool(&a.recursive, "recursive", "also format the *.hcl files in the subdirectories of a DIR")
	def := DefaultConfigPath
	if p := f.getenv(envConfig); p != "" {
		def = p
	}
	f.String(&a.config, "config", "PATH", def, "the default file (default $REDLOCK_CONFIG, else ./redlock.hcl)")
}

func (a *fmtArgs) parse(p *parsed) error {
	a.files = append(p.pos, p.rest...)
	if len(a.files) == 0 {
		a.files = []string{a.config}
	}
	return nil
}

var _ = define(&Command{
	Name:     "fmt",
	Synopsis: "rewrite topology files in canonical layout",
	Args:     "[FILE|DIR|-]...",
	About: `
Rewrites each topology file in place in the canonical layout (aligned '=',
two-space indentation). Without FILE it formats the -config file
($REDLOCK_CONFIG, else ./redlock.hcl). A DIR formats the *.hcl files in it
(with -recursive, in its subdirectories too, skipping hidden ones);
"-" reads standard input and writes the result to standard output. The names
of the files that changed are printed. Only the syntax is checked: use
"redlock validate" for the rest.`,
	Exits: []Exit{
		{0, "every file is formatted (or was rewritten)"},
		{2, "a file cannot be read, parsed or written, or bad command line"},
		{3, "with -check: at least one file is not formatted"},
	},
}, runFmt)

func runFmt(ctx context.Context, env *Env, a *fmtArgs) error {
	failed, unformatted := 0, false
	for _, arg := range a.files {
		files, err := fmtTargets(arg, a.recursive)
		if err != nil {
			fmt.Fprintf(env.Stderr, "redlock fmt: %v\n", err)
			failed++
			continue
		}
		for _, name := range files {
			changed, ok := fmtOne(ctx, env, name, a.check, a.diff)
			if !ok {
				failed++
			}
			unformatted = unformatted || changed
		}
	}
	switch {
	case failed > 0:
		return &exitError{code: ExitUsage, err: fmt.Errorf("%s failed", pluralize(failed, "file")), shown: true}
	case a.check && unformatted:
		return &exitError{code: ExitUnformat, err: errors.New("not formatted"), shown: true}
	}
	return nil
}

// fmtTargets expands a FILE, DIR or "-" argument into the files to format.
func fmtTargets(arg string, recursive bool) ([]string, error) {
	if arg == "-" {
		return []string{"-"}, nil
	}
	st, err := os.Stat(arg)
	if err != nil {
		return nil, err
	}
	if !st.IsDir() {
		return []string{arg}, nil
	}
	if !recursive {
		files, err := filepath.Glob(filepath.Join(arg, "*.hcl"))
		if err != nil {
			return nil, err
		}
		sort.Strings(files)
		return files, nil
	}
	var files []string
	err = filepath.WalkDir(arg, func(path string, d fs.DirEntry, err error) error {
		switch {
		case err != nil:
			return err
		case d.IsDir() && path != arg && strings.HasPrefix(d.Name(), "."):
			return filepath.SkipDir // .git, .terraform and the like
		case !d.IsDir() && strings.HasSuffix(d.Name(), ".hcl"):
			files = append(files, path)
		}
		return nil
	})
	sort.Strings(files)
	return files, err
}

// fmtOne formats one file. changed reports that it was not in canonical layout;
// ok is false after an error, which it prints.
func fmtOne(ctx context.Context, env *Env, name string, check, diff bool) (changed, ok bool) {
	var src []byte
	var err error
	display := name
	if name == "-" {
		display = "<stdin>"
		if env.Stdin == nil {
			fmt.Fprintln(env.Stderr, "redlock fmt: no standard input")
			return false, false
		}
		var text string
		text, err = interruptible(ctx, func() (string, error) {
			b, err := io.ReadAll(env.Stdin)
			return string(b), err
		})
		src = []byte(text)
	} else {
		src, err = os.ReadFile(name)
	}
	if err != nil {
		fmt.Fprintf(env.Stderr, "redlock fmt: %v\n", err)
		return false, false
	}
	out, diags := hcl.FormatFile(display, src)
	if diags.HasErrors() {
		cfg, _ := hcl.Parse(display, src)
		_ = cfg.WriteDiagnostics(env.Stderr, diags, colorFor(env.Stderr, env.Getenv))
		return false, false
	}
	changed = !bytes.Equal(src, out)
	if name == "-" {
		if !check {
			_, _ = env.Stdout.Write(out)
		}
		if diff && changed {
			fmt.Fprint(env.Stdout, unifiedDiff("<stdin>", "<stdin>", string(src), string(out)))
		}
		return changed, true
	}
	if !changed {
		return false, true
	}
	fmt.Fprintln(env.Stdout, name)
	if diff {
		fmt.Fprint(env.Stdout, unifiedDiff("a/"+filepath.ToSlash(name), "b/"+filepath.ToSlash(name), string(src), string(out)))
	}
	if check {
		return true, true
	}
	// Through a symlink: the file it points to is rewritten, the link stays.
	target, err := filepath.EvalSymlinks(name)
	if err != nil {
		fmt.Fprintf(env.Stderr, "redlock fmt: %v\n", err)
		return true, false
	}
	mode := os.FileMode(0o644)
	if st, err := os.Stat(target); err == nil {
		mode = st.Mode().Perm()
	}
	if err := writeFileAtomic(target, out, mode); err != nil {
		fmt.Fprintf(env.Stderr, "redlock fmt: %v\n", err)
		return true, false
	}
	return true, true
}

// writeFileAtomic replaces name with data through a temporary file in the same
// directory, so an interrupted write never leaves a truncated topology file.
func writeFileAtomic(name string, data []byte, mode os.FileMode) error {
	tmp, err := os.CreateTemp(filepath.Dir(name), ".redlock-fmt-*")
	if err != nil {
		return fmt.Errorf("write %s: %w", name, err)
	}
	defer os.Remove(tmp.Name())
	if _, err := tmp.Write(data); err != nil {
		tmp.Close()
		return fmt.Errorf("write %s: %w", name, err)
	}
	if err := tmp.Chmod(mode); err != nil {
		tmp.Close()
		return fmt.Errorf("write %s: %w", name, err)
	}
	if err := tmp.Close(); err != nil {
		return fmt.Errorf("write %s: %w", name, err)
	}
	if err := os.Rename(tmp.Name(), name); err != nil {
		return fmt.Errorf("write %s: %w", name, err)
	}
	return nil
}

// unifiedDiff is the unified diff of old and new as diff -u and terraform fmt
// -diff print it. The hunks come from go-udiff; their headers are numbered here,
// since go-udiff's new-file start leaves out the unchanged lines inside earlier
// hunks: a hunk's new-file start is its old-file start plus the lines the hunks
// before it added, less those they removed.
func unifiedDiff(oldLabel, newLabel, old, new string) string {
	u, err := udiff.ToUnifiedDiff(oldLabel, newLabel, old, udiff.Strings(old, new), udiff.DefaultContextLines)
	if err != nil || len(u.Hunks) == 0 {
		return ""
	}
	var b strings.Builder
	fmt.Fprintf(&b, "--- %s\n+++ %s\n", oldLabel, newLabel)
	shift := 0
	for _, h := range u.Hunks {
		oldCount, newCount := 0, 0
		for _, l := range h.Lines {
			if l.Kind != udiff.Insert {
				oldCount++
			}
			if l.Kind != udiff.Delete {
				newCount++
			}
		}
		fmt.Fprintf(&b, "@@ -%s +%s @@\n", hunkRange(h.FromLine, oldCount), hunkRange(h.FromLine+shift, newCount))
		shift += newCount - oldCount
		for _, l := range h.Lines {
			prefix := " "
			switch l.Kind {
			case udiff.Delete:
				prefix = "-"
			case udiff.Insert:
				prefix = "+"
			}
			b.WriteString(prefix + l.Content)
			if !strings.HasSuffix(l.Content, "\n") {
				b.WriteString("\n\\ No newline at end of file\n")
			}
		}
	}
	return b.String()
}

// hunkRange is one side of a hunk header: "start,count", "start" for one line,
// and "start-1,0" for none, as diff -u.
func hunkRange(start, count int) string {
	switch count {
	case 0:
		return fmt.Sprintf("%d,0", start-1)
	case 1:
		return fmt.Sprint(start)
	}
	return fmt.Sprintf("%d,%d", start, count)
}
