package hcl

import (
	"fmt"
	"sort"
	"strings"

	hclv2 "github.com/hashicorp/hcl/v2"
	"github.com/hashicorp/hcl/v2/hclsyntax"
	"github.com/zclconf/go-cty/cty"
	"github.com/zclconf/go-cty/cty/convert"
)

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
