package hcl

import (
	"fmt"
	"math/big"
	"strings"
	"time"

	"github.com/agnivade/levenshtein"
	hclv2 "github.com/hashicorp/hcl/v2"
	"github.com/zclconf/go-cty/cty"
	"github.com/zclconf/go-cty/cty/convert"
)

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
