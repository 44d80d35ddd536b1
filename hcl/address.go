package hcl

import (
	"fmt"
	"strings"

	hclv2 "github.com/hashicorp/hcl/v2"

	"github.com/redlock/redlock/topology"
)

// address decodes a master's address: host:port, or a redis:// / rediss:// URL
// that also gives the username, password, db and TLS (the password is a secret,
// as a password attribute's is). A sensitive variable may be used only in a URL,
// which carries the password.
func (d *decoder) address(a *hclv2.Attribute, m *topology.Master) {
	v, ok := d.str(a, true)
	if !ok {
		return
	}
	if !topology.IsURL(v) {
		if strings.Contains(v, "@") {
			// user:password@host:port with the scheme forgotten: the part before
			// the "@" is credentials, and a host never has one. The whole address
			// is a secret, as an unparsable URL's is.
			d.cfg.addSecret(v)
			rng := a.Expr.Range()
			if f := d.cfg.files[rng.Filename]; f != nil {
				d.cfg.addSecret(string(rng.SliceBytes(f.Bytes)))
			}
			d.errorAt(a.Expr.Range(), "Invalid address",
				fmt.Sprintf("master %q: an address with \"@\" carries credentials: write it as a URL, redis://user:password@host:port.", m.Name))
			return
		}
		if d.refsSensitive(a) {
			d.errorAt(a.Expr.Range(), "Sensitive value not allowed here",
				"address is shown in output; a sensitive value may be used in address only inside a redis:// URL, as its password.")
			return
		}
		m.Address = v
		return
	}
	u, err := topology.ParseMasterURL(v)
	if err != nil {
		// It may hold a password nobody could parse out: the whole URL is a
		// secret, so the snippet under the error shows "(sensitive)".
		d.cfg.addSecret(v)
		rng := a.Expr.Range()
		if f := d.cfg.files[rng.Filename]; f != nil { // and as written, escapes and all
			d.cfg.addSecret(string(rng.SliceBytes(f.Bytes)))
		}
		d.errorAt(a.Expr.Range(), "Invalid master URL", fmt.Sprintf("master %q: %v.", m.Name, err))
		return
	}
	m.Address, m.DB = u.Address, u.DB
	if u.Username != "" {
		m.Username = u.Username
	}
	if u.Password != "" {
		m.Password = u.Password
		d.cfg.addSecret(u.Password)
		if len(a.Expr.Variables()) == 0 {
			d.warnAt(a.Expr.Range(), SummaryPasswordInFile,
				fmt.Sprintf("Master %q has its password in the file, where it ends up in version control. Use a sensitive variable: address = \"redis://user:${var.redis_password}@host:6379\".", m.Name))
		}
	}
	if u.TLS != nil && m.TLS == nil {
		m.TLS = u.TLS
	}
}

// refsSensitive reports whether the attribute uses a sensitive variable.
func (d *decoder) refsSensitive(a *hclv2.Attribute) bool {
	for _, tr := range a.Expr.Variables() {
		if len(tr) < 2 || tr.RootName() != "var" {
			continue
		}
		if step, ok := tr[1].(hclv2.TraverseAttr); ok {
			if v := d.vars[step.Name]; v != nil && v.sensitive {
				return true
			}
		}
	}
	return false
}

// ignore decodes an ignore block: a finding code acknowledged with a reason,
// optionally on some masters only.
func (d *decoder) ignore(i int, b *hclv2.Block) topology.Ignore {
	ig := topology.Ignore{Code: b.Labels[0]}
	d.block(topology.BlockIgnore, i, b)
	content, diags := b.Body.Content(ignoreSchema)
	d.addDiags(diags)
	d.apply(topology.BlockIgnore, i, "", content.Attributes, setters{
		"reason": d.text(&ig.Reason, false),
		"masters": func(a *hclv2.Attribute) {
			val, ok := d.eval(a, false)
			if !ok || val.IsNull() {
				return
			}
			if !val.CanIterateElements() {
				d.errorAt(a.Expr.Range(), "Incorrect value type", "masters must be a list of master names.")
				return
			}
			for it := val.ElementIterator(); it.Next(); {
				_, ev := it.Element()
				if !ev.IsKnown() || ev.IsNull() || ev.Type().FriendlyName() != "string" {
					d.errorAt(a.Expr.Range(), "Incorrect value type", "masters must be a list of master names.")
					return
				}
				ig.Masters = append(ig.Masters, ev.AsString())
			}
		},
	})
	return ig
}

var ignoreSchema = &hclv2.BodySchema{Attributes: []hclv2.AttributeSchema{{Name: "reason", Required: true}, {Name: "masters"}}}

// SummaryPasswordInFile is the summary of the warning about a password written
// in the file (in a password attribute or an address URL).
const SummaryPasswordInFile = "Password written in the file"
