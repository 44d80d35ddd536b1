// Package hcl decodes topology files (HCL) into topology.Cluster values, with
// diagnostics that carry the file, line and column of the offending attribute or
// block and print with the source snippet.
//
// The file format, its errors and warnings are those of DESIGN section 2: variable
// blocks, one cluster block with masters, settings and lock policies. Expressions
// may reference var.NAME only; there are no functions. Values of sensitive
// variables may be used for password only, and never appear in a diagnostic.
package hcl

import (
	"fmt"
	"math/big"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"time"

	"github.com/agnivade/levenshtein"
	hclv2 "github.com/hashicorp/hcl/v2"
	"github.com/hashicorp/hcl/v2/hclsyntax"
	"github.com/zclconf/go-cty/cty"
	"github.com/zclconf/go-cty/cty/convert"

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
			Detail:   fmt.Sprintf("%v. Give the file with -config PATH or REDLOCK_CONFIG.", err),
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

// variable is one declared variable and its resolved value.
type variable struct {
	name      string
	sensitive bool
	value     cty.Value
	ok        bool // value resolved
	unknown   bool // no value, and Options.AllowUnknown: the value is unknown
	decl      hclv2.Range
}

// refsUnknown reports whether the attribute uses a variable whose value is unknown.
func (d *decoder) refsUnknown(a *hclv2.Attribute) bool {
	for _, tr := range a.Expr.Variables() {
		if len(tr) < 2 || tr.RootName() != "var" {
			continue
		}
		if step, ok := tr[1].(hclv2.TraverseAttr); ok {
			if v := d.vars[step.Name]; v != nil && v.unknown {
				return true
			}
		}
	}
	return false
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

var variableSchema = &hclv2.BodySchema{Attributes: []hclv2.AttributeSchema{
	{Name: "type"}, {Name: "default"}, {Name: "sensitive"}, {Name: "description"},
}}

// declare records a variable block and its default; values are resolved later.
func (d *decoder) declare(b *hclv2.Block) {
	name := b.Labels[0]
	if !hclsyntax.ValidIdentifier(name) {
		d.errorAt(b.LabelRanges[0], "Invalid variable name",
			fmt.Sprintf("%q is not a valid name: use letters, digits, '_' and '-', starting with a letter.", name))
		return
	}
	if prev, dup := d.vars[name]; dup {
		d.errorAt(b.DefRange, "Duplicate variable", fmt.Sprintf("Variable %q is already declared at %s.", name, prev.decl))
		return
	}
	v := &variable{name: name, decl: b.DefRange}
	d.vars[name] = v
	content, diags := b.Body.Content(variableSchema)
	d.addDiags(diags)
	typ := cty.DynamicPseudoType
	if a, ok := content.Attributes["type"]; ok {
		switch kw := hclv2.ExprAsKeyword(a.Expr); kw {
		case "string":
			typ = cty.String
		case "number":
			typ = cty.Number
		case "bool":
			typ = cty.Bool
		case "any":
		default:
			d.errorAt(a.Expr.Range(), "Invalid variable type", "The type must be one of string, number, bool or any (a keyword, not a quoted string).")
			return
		}
	}
	if a, ok := content.Attributes["sensitive"]; ok {
		val, diags := a.Expr.Value(nil)
		d.addDiags(diags)
		if !diags.HasErrors() {
			if bv, err := convert.Convert(val, cty.Bool); err != nil || bv.IsNull() {
				d.errorAt(a.Expr.Range(), "Invalid sensitive flag", "sensitive must be true or false.")
				v.sensitive = true // treat as secret to be safe
			} else {
				v.sensitive = bv.True()
			}
		} else {
			v.sensitive = true
		}
	}
	if a, ok := content.Attributes["description"]; ok {
		val, diags := a.Expr.Value(nil)
		d.addDiags(diags)
		if !diags.HasErrors() {
			if _, err := convert.Convert(val, cty.String); err != nil {
				d.errorAt(a.Expr.Range(), "Invalid description", "description must be a string.")
			}
		}
	}
	if a, ok := content.Attributes["default"]; ok && v.sensitive {
		// The default is secret too, even when another value wins: snippets quote the file.
		if val, diags := a.Expr.Value(nil); !diags.HasErrors() {
			d.secretsOf(val)
		}
	}
	raw, fromCLI := d.opts.Vars[name]
	if !fromCLI {
		raw = d.opts.Getenv(EnvPrefix + name)
	}
	switch {
	case fromCLI || raw != "":
		src := "-var " + name
		if !fromCLI {
			src = EnvPrefix + name
		}
		val, err := parseVarValue(raw, typ)
		if err != nil {
			// The value itself is never quoted: it may be a secret.
			d.errorAt(b.DefRange, "Invalid value for variable", fmt.Sprintf("The value of %s is not a valid %s: %v.", src, typ.FriendlyName(), err))
			return
		}
		v.value, v.ok = val, true
	default:
		a, ok := content.Attributes["default"]
		if !ok && d.opts.AllowUnknown {
			v.value, v.ok, v.unknown = cty.UnknownVal(typ), true, true
			return
		}
		if !ok {
			d.errorAt(b.DefRange, "No value for required variable",
				fmt.Sprintf("Variable %q has no value: pass -var %s=VALUE, set %s%s, or give it a default.", name, name, EnvPrefix, name))
			return
		}
		val, diags := a.Expr.Value(nil)
		d.addDiags(diags)
		if diags.HasErrors() {
			return
		}
		if typ != cty.DynamicPseudoType {
			cv, err := convert.Convert(val, typ)
			if err != nil {
				d.errorAt(a.Expr.Range(), "Invalid default value", fmt.Sprintf("The default of variable %q is not a valid %s.", name, typ.FriendlyName()))
				return
			}
			val = cv
		}
		if val.IsNull() {
			d.errorAt(b.DefRange, "No value for required variable",
				fmt.Sprintf("Variable %q has a null default: pass -var %s=VALUE, set %s%s, or give it a value.", name, name, EnvPrefix, name))
			return
		}
		v.value, v.ok = val, true
	}
	if v.sensitive {
		d.secretsOf(v.value)
	}
}

// secretsOf registers the printable forms of a sensitive value for redaction.
func (d *decoder) secretsOf(val cty.Value) {
	if !val.IsKnown() || val.IsNull() {
		return
	}
	switch {
	case val.Type() == cty.String:
		d.cfg.addSecret(val.AsString())
	case val.Type() == cty.Number:
		d.cfg.addSecret(val.AsBigFloat().Text('f', -1))
	case val.Type().IsPrimitiveType():
		// bool: nothing worth hiding that would not also hide every "true"
	}
}

// parseVarValue turns a -var or environment string into a value of typ. Strings are
// taken literally; numbers and bools are parsed.
func parseVarValue(raw string, typ cty.Type) (cty.Value, error) {
	switch typ {
	case cty.Number:
		v, err := cty.ParseNumberVal(strings.TrimSpace(raw))
		if err != nil {
			return cty.NilVal, fmt.Errorf("want a number")
		}
		return v, nil
	case cty.Bool:
		switch strings.TrimSpace(raw) {
		case "true":
			return cty.True, nil
		case "false":
			return cty.False, nil
		}
		return cty.NilVal, fmt.Errorf("want true or false")
	default:
		return cty.StringVal(raw), nil
	}
}

// resolveVars checks -var names and builds the evaluation context.
func (d *decoder) resolveVars() {
	names := make([]string, 0, len(d.opts.Vars))
	for n := range d.opts.Vars {
		names = append(names, n)
	}
	sort.Strings(names)
	for _, n := range names {
		if _, ok := d.vars[n]; !ok {
			detail := fmt.Sprintf("-var %s=... sets a variable that the file does not declare.", n)
			if s := suggest(n, d.varNames()); s != "" {
				detail += fmt.Sprintf(" Did you mean %q?", s)
			} else {
				detail += fmt.Sprintf(` Declare it with variable %q { type = string }.`, n)
			}
			d.diags = append(d.diags, &hclv2.Diagnostic{Severity: hclv2.DiagError, Summary: "Value for undeclared variable", Detail: detail})
		}
	}
	vals := map[string]cty.Value{}
	for n, v := range d.vars {
		if v.ok {
			vals[n] = v.value
		}
	}
	d.ctx = &hclv2.EvalContext{Variables: map[string]cty.Value{"var": cty.ObjectVal(vals)}}
}

func (d *decoder) varNames() []string {
	out := make([]string, 0, len(d.vars))
	for n := range d.vars {
		out = append(out, n)
	}
	sort.Strings(out)
	return out
}

// eval evaluates an attribute. References other than declared var.NAME are errors,
// and so is a sensitive variable unless allowSensitive. ok is false after an error
// or when the value depends on a variable without a value (already reported).
func (d *decoder) eval(a *hclv2.Attribute, allowSensitive bool) (val cty.Value, ok bool) {
	ok = true
	for _, tr := range a.Expr.Variables() {
		rng := tr.SourceRange()
		if tr.RootName() != "var" {
			d.errorAt(rng, "Invalid reference",
				fmt.Sprintf("%q is not something a topology file can refer to: only var.NAME references to declared variables are allowed.", tr.RootName()))
			ok = false
			continue
		}
		var name string
		if len(tr) > 1 {
			if step, isAttr := tr[1].(hclv2.TraverseAttr); isAttr {
				name = step.Name
			}
		}
		if name == "" {
			d.errorAt(rng, "Invalid reference", "Refer to a variable as var.NAME.")
			ok = false
			continue
		}
		v, declared := d.vars[name]
		switch {
		case !declared:
			detail := fmt.Sprintf("There is no variable named %q.", name)
			if s := suggest(name, d.varNames()); s != "" {
				detail += fmt.Sprintf(" Did you mean var.%s?", s)
			} else {
				detail += fmt.Sprintf(` Declare it with variable %q { ... }.`, name)
			}
			d.errorAt(rng, "Reference to undeclared variable", detail)
			ok = false
		case v.sensitive && !allowSensitive:
			d.errorAt(rng, "Sensitive value not allowed here",
				fmt.Sprintf("var.%s is sensitive, and %s is shown in output (diagnostics, plan, the console). A sensitive value may be used for password only.", name, a.Name))
			ok = false
		case !v.ok:
			ok = false // no value: reported at the variable
		}
	}
	if !ok {
		return cty.NilVal, false
	}
	val, diags := a.Expr.Value(d.ctx)
	d.addDiags(diags)
	if diags.HasErrors() || !val.IsWhollyKnown() {
		return cty.NilVal, false
	}
	return val, true
}

// suggest returns the candidate closest to s within a small edit distance, or "".
func suggest(s string, candidates []string) string {
	best, bestD := "", 3
	for _, c := range candidates {
		if dist := levenshtein.ComputeDistance(s, c); dist < bestD {
			best, bestD = c, dist
		}
	}
	return best
}

// typed attribute decoding. Each returns ok=false after reporting a problem or when
// the attribute is null (meaning "use the default").

func (d *decoder) str(a *hclv2.Attribute, allowSensitive bool) (string, bool) {
	val, ok := d.eval(a, allowSensitive)
	if !ok || val.IsNull() {
		return "", false
	}
	sv, err := convert.Convert(val, cty.String)
	if err != nil || sv.IsNull() {
		d.errorAt(a.Expr.Range(), "Incorrect value type", fmt.Sprintf("%s must be a string.", a.Name))
		return "", false
	}
	return sv.AsString(), true
}

func (d *decoder) number(a *hclv2.Attribute) (*big.Float, bool) {
	val, ok := d.eval(a, false)
	if !ok || val.IsNull() {
		return nil, false
	}
	nv, err := convert.Convert(val, cty.Number)
	if err != nil || nv.IsNull() {
		d.errorAt(a.Expr.Range(), "Incorrect value type", fmt.Sprintf("%s must be a number.", a.Name))
		return nil, false
	}
	return nv.AsBigFloat(), true
}

func (d *decoder) integer(a *hclv2.Attribute) (int, bool) {
	f, ok := d.number(a)
	if !ok {
		return 0, false
	}
	i, acc := f.Int64()
	if acc != big.Exact || i > 1<<31 || i < -(1<<31) {
		d.errorAt(a.Expr.Range(), "Incorrect value type", fmt.Sprintf("%s must be a whole number.", a.Name))
		return 0, false
	}
	return int(i), true
}

func (d *decoder) float(a *hclv2.Attribute) (float64, bool) {
	f, ok := d.number(a)
	if !ok {
		return 0, false
	}
	v, _ := f.Float64()
	return v, true
}

func (d *decoder) boolean(a *hclv2.Attribute) (bool, bool) {
	val, ok := d.eval(a, false)
	if !ok || val.IsNull() {
		return false, false
	}
	bv, err := convert.Convert(val, cty.Bool)
	if err != nil || bv.IsNull() {
		d.errorAt(a.Expr.Range(), "Incorrect value type", fmt.Sprintf("%s must be true or false.", a.Name))
		return false, false
	}
	return bv.True(), true
}

func (d *decoder) duration(a *hclv2.Attribute) (time.Duration, bool) {
	s, ok := d.str(a, false)
	if !ok {
		return 0, false
	}
	v, err := ParseDuration(s)
	if err != nil {
		summary := "Invalid duration"
		if strings.Contains(err.Error(), "needs a unit") {
			summary = "Duration needs a unit"
		}
		d.errorAt(a.Expr.Range(), summary, fmt.Sprintf("%s: %v.", a.Name, err))
		return 0, false
	}
	return v, true
}
