// Package hcl decodes topology files (HCL) into topology.Cluster values, with
// diagnostics that carry the file, line and column of the offending attribute or
// block and print with the source snippet.
//
// The file format, its errors and warnings are those of docs/topology.md: variable
// blocks, one cluster block with masters, settings and lock policies. Expressions
// may reference var.NAME only; there are no functions. Values of sensitive
// variables may be used for password only, and never appear in a diagnostic.
package hcl

import (
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"

	hclv2 "github.com/hashicorp/hcl/v2"
	"github.com/hashicorp/hcl/v2/hclsyntax"

	"github.com/redlock/redlock/topology"
)

// EnvPrefix is the prefix of environment variables that give variable values:
// REDLOCK_VAR_name.
const EnvPrefix = "REDLOCK_VAR_"

// Options are the inputs of a load besides the file itself.
type Options struct {
	// Vars are the -var name=value pairs; they win over the environment and defaults.
	Vars map[string]string
	// Getenv reads REDLOCK_VAR_<name>; nil means os.Getenv. An empty value counts as unset.
	Getenv func(string) string
	// AllowUnknown makes a variable without a value unknown instead of an error (as
	// `terraform validate` does): its declaration is still checked, and the checks of
	// attributes that use it are skipped. The Cluster then lacks those values: only
	// an offline check may use it.
	AllowUnknown bool
}

// Config is the result of a load: the cluster, when the file is valid, and what is
// needed to print diagnostics about the file safely.
type Config struct {
	// Cluster is the decoded and validated cluster; nil when the diagnostics hold an error.
	Cluster *topology.Cluster
	// Filename is the file as given to Load.
	Filename string

	files   map[string]*hclv2.File
	secrets []string
}

// Redact returns s with every password and every value of a sensitive variable
// replaced by "(sensitive)". Apply it to any text that may quote the file.
func (c *Config) Redact(s string) string {
	for _, sec := range c.secrets {
		s = strings.ReplaceAll(s, sec, "(sensitive)")
	}
	return s
}

func (c *Config) addSecret(s string) {
	if s == "" {
		return
	}
	for _, have := range c.secrets {
		if have == s {
			return
		}
	}
	c.secrets = append(c.secrets, s)
	// Longest first, so a secret that contains another is replaced whole.
	sort.SliceStable(c.secrets, func(i, j int) bool { return len(c.secrets[i]) > len(c.secrets[j]) })
}

// LoadFile reads and loads a topology file. The *Config is never nil; its Cluster is
// nil when the diagnostics hold an error (an unreadable file is one).
func LoadFile(filename string, opts Options) (*Config, hclv2.Diagnostics) {
	src, err := os.ReadFile(filename)
	if err != nil {
		cfg := &Config{Filename: filename, files: map[string]*hclv2.File{}}
		return cfg, hclv2.Diagnostics{{
			Severity: hclv2.DiagError,
			Summary:  "Cannot read the topology file",
			Detail: fmt.Sprintf("%v. Give the file with -config PATH or REDLOCK_CONFIG, or no file: the masters "+
				"with -masters host:port,... or REDLOCK_MASTERS (redis://user:pass@host:port URLs too).", err),
		}}
	}
	return Load(filename, src, opts)
}

// Parse checks the syntax of src only. The *Config is never nil and has a nil
// Cluster; use it to print the diagnostics with their snippets.
func Parse(filename string, src []byte) (*Config, hclv2.Diagnostics) {
	f, diags := hclsyntax.ParseConfig(src, filename, hclv2.InitialPos)
	cfg := &Config{Filename: filename, files: map[string]*hclv2.File{}}
	if f != nil {
		cfg.files[filename] = f
	}
	return cfg, collapse(sortDiags(diags))
}

// collapse keeps the first syntax error of each kind: an unterminated string makes
// the parser report every following line, which buries the line that needs the fix.
func collapse(diags hclv2.Diagnostics) hclv2.Diagnostics {
	var out hclv2.Diagnostics
	seen := map[string]bool{}
	for _, d := range diags {
		if seen[d.Summary] {
			continue
		}
		seen[d.Summary] = true
		out = append(out, d)
	}
	return out
}

// Load decodes src as the topology file filename (used in diagnostics and to
// resolve TLS paths). The *Config is never nil; its Cluster is set only when the
// diagnostics hold no error. Warnings do not stop the load.
func Load(filename string, src []byte, opts Options) (*Config, hclv2.Diagnostics) {
	if opts.Getenv == nil {
		opts.Getenv = os.Getenv
	}
	cfg, diags := Parse(filename, src)
	f := cfg.files[filename]
	if diags.HasErrors() || f == nil {
		return cfg, diags
	}
	d := &decoder{
		cfg:    cfg,
		opts:   opts,
		dir:    filepath.Dir(filename),
		vars:   map[string]*variable{},
		failed: map[fieldKey]bool{},
	}
	cluster := d.file(f)
	if cluster != nil {
		for _, p := range cluster.Validate() {
			if cluster.AcknowledgedProblem(p) != nil {
				continue // an ignore block of its finding code covers every master
			}
			d.problem(p)
		}
	}
	diags = sortDiags(append(diags, d.diags...))
	if !diags.HasErrors() {
		cfg.Cluster = cluster
	}
	return cfg, diags
}

// sortDiags orders diagnostics by position, keeping those without a position first.
func sortDiags(diags hclv2.Diagnostics) hclv2.Diagnostics {
	sort.SliceStable(diags, func(i, j int) bool {
		a, b := diags[i].Subject, diags[j].Subject
		switch {
		case a == nil || b == nil:
			return a == nil && b != nil
		case a.Filename != b.Filename:
			return a.Filename < b.Filename
		default:
			return a.Start.Byte < b.Start.Byte
		}
	})
	return diags
}

// fieldKey identifies an attribute or block of the cluster for range lookup.
type fieldKey struct {
	block string
	index int
	attr  string
}

type decoder struct {
	cfg    *Config
	opts   Options
	dir    string
	diags  hclv2.Diagnostics
	vars   map[string]*variable
	ctx    *hclv2.EvalContext
	ranges map[fieldKey]attrRange
	failed map[fieldKey]bool
}

type attrRange struct{ subject, context hclv2.Range }

func (d *decoder) errorAt(rng hclv2.Range, summary, detail string) {
	r := rng
	d.diags = append(d.diags, &hclv2.Diagnostic{Severity: hclv2.DiagError, Summary: summary, Detail: detail, Subject: &r})
}

func (d *decoder) warnAt(rng hclv2.Range, summary, detail string) {
	r := rng
	d.diags = append(d.diags, &hclv2.Diagnostic{Severity: hclv2.DiagWarning, Summary: summary, Detail: detail, Subject: &r})
}

// addDiags appends diagnostics from HCL, dropping the expression and evaluation
// context they may carry: the text writer would print variable values from them.
func (d *decoder) addDiags(diags hclv2.Diagnostics) {
	for _, diag := range diags {
		diag.Expression, diag.EvalContext = nil, nil
		d.diags = append(d.diags, diag)
	}
}

var fileSchema = &hclv2.BodySchema{Blocks: []hclv2.BlockHeaderSchema{
	{Type: "variable", LabelNames: []string{"name"}},
	{Type: "cluster", LabelNames: []string{"name"}},
}}

func (d *decoder) file(f *hclv2.File) *topology.Cluster {
	content, diags := f.Body.Content(fileSchema)
	d.addDiags(diags)
	for _, b := range content.Blocks.OfType("variable") {
		d.declare(b)
	}
	d.resolveVars()
	clusters := content.Blocks.OfType("cluster")
	if len(clusters) == 0 {
		d.errorAt(f.Body.MissingItemRange(), "Missing cluster block",
			`A topology file declares one cluster: cluster "name" { master "a" { address = "host:port" } ... }.`)
		return nil
	}
	for _, extra := range clusters[1:] {
		d.errorAt(extra.DefRange, "More than one cluster block",
			fmt.Sprintf("A topology file declares exactly one cluster; the first is at %s. Put each cluster in its own file.", clusters[0].DefRange))
	}
	return d.cluster(clusters[0])
}
