package hcl

import (
	"fmt"
	"path/filepath"
	"sort"
	"strings"
	"time"

	hclv2 "github.com/hashicorp/hcl/v2"
	"github.com/zclconf/go-cty/cty"

	"github.com/redlock/redlock/topology"
)

var clusterSchema = &hclv2.BodySchema{
	Attributes: []hclv2.AttributeSchema{
		{Name: "key_prefix"}, {Name: "ttl"}, {Name: "max_ttl"}, {Name: "node_timeout"}, {Name: "restart_quarantine"},
	},
	Blocks: []hclv2.BlockHeaderSchema{
		{Type: "drift"}, {Type: "retry"}, {Type: "settings"}, {Type: "defaults"},
		{Type: "ignore", LabelNames: []string{"code"}},
		{Type: "master", LabelNames: []string{"name"}},
		{Type: "lock", LabelNames: []string{"glob"}},
	},
}

var driftSchema = &hclv2.BodySchema{Attributes: []hclv2.AttributeSchema{{Name: "factor"}, {Name: "extra"}}}

var retrySchema = &hclv2.BodySchema{Attributes: []hclv2.AttributeSchema{{Name: "attempts"}, {Name: "delay"}, {Name: "jitter"}}}

var masterSchema = &hclv2.BodySchema{
	Attributes: []hclv2.AttributeSchema{{Name: "address"}, {Name: "username"}, {Name: "password"}, {Name: "db"}},
	Blocks:     []hclv2.BlockHeaderSchema{{Type: "tls"}},
}

// defaultsSchema is a master's connection settings that every master inherits.
var defaultsSchema = &hclv2.BodySchema{
	Attributes: []hclv2.AttributeSchema{{Name: "username"}, {Name: "password"}, {Name: "db"}},
	Blocks:     []hclv2.BlockHeaderSchema{{Type: "tls"}},
}

var tlsSchema = &hclv2.BodySchema{Attributes: []hclv2.AttributeSchema{
	{Name: "ca_file"}, {Name: "cert_file"}, {Name: "key_file"}, {Name: "server_name"}, {Name: "insecure_skip_verify"},
}}

var lockSchema = &hclv2.BodySchema{Attributes: []hclv2.AttributeSchema{
	{Name: "ttl"}, {Name: "max_extensions"}, {Name: "fair"}, {Name: "fencing"}, {Name: "permits"},
}}

// setters maps attribute names of one block to functions that decode them.
type setters map[string]func(*hclv2.Attribute)

// apply decodes the attributes of a block in source order, recording the range of
// each under key (block, index, prefix+name) and whether it failed to decode.
func (d *decoder) apply(block string, index int, prefix string, attrs hclv2.Attributes, set setters) {
	for _, a := range sortedAttrs(attrs) {
		k := fieldKey{block: block, index: index, attr: prefix + a.Name}
		d.ranges[k] = attrRange{subject: a.Expr.Range(), context: a.Range}
		before := len(d.diags)
		if fn, ok := set[a.Name]; ok {
			fn(a)
		}
		if len(d.diags) > before || d.refsUnknown(a) {
			d.failed[k] = true // its findings are explained already, or cannot be known
		}
	}
}

func sortedAttrs(attrs hclv2.Attributes) []*hclv2.Attribute {
	out := make([]*hclv2.Attribute, 0, len(attrs))
	for _, a := range attrs {
		out = append(out, a)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Range.Start.Byte < out[j].Range.Start.Byte })
	return out
}

func (d *decoder) block(block string, index int, b *hclv2.Block) {
	d.ranges[fieldKey{block: block, index: index}] = attrRange{subject: b.DefRange, context: b.DefRange}
}

// dur returns a setter storing a duration into p.
func (d *decoder) dur(p *time.Duration) func(*hclv2.Attribute) {
	return func(a *hclv2.Attribute) {
		if v, ok := d.duration(a); ok {
			*p = v
		}
	}
}

func (d *decoder) flag(p *bool) func(*hclv2.Attribute) {
	return func(a *hclv2.Attribute) {
		if v, ok := d.boolean(a); ok {
			*p = v
		}
	}
}

func (d *decoder) text(p *string, allowSensitive bool) func(*hclv2.Attribute) {
	return func(a *hclv2.Attribute) {
		if v, ok := d.str(a, allowSensitive); ok {
			*p = v
		}
	}
}

func (d *decoder) whole(p *int) func(*hclv2.Attribute) {
	return func(a *hclv2.Attribute) {
		if v, ok := d.integer(a); ok {
			*p = v
		}
	}
}

func (d *decoder) path(p *string) func(*hclv2.Attribute) {
	return func(a *hclv2.Attribute) {
		if v, ok := d.str(a, false); ok {
			if v != "" && !filepath.IsAbs(v) {
				v = filepath.Join(d.dir, v)
			}
			*p = v
		}
	}
}

// single returns the only block of a type, reporting any further ones.
func (d *decoder) single(blocks hclv2.Blocks, typ string) *hclv2.Block {
	bs := blocks.OfType(typ)
	if len(bs) == 0 {
		return nil
	}
	for _, extra := range bs[1:] {
		d.errorAt(extra.DefRange, fmt.Sprintf("Duplicate %s block", typ),
			fmt.Sprintf("Only one %s block is allowed; the first is at %s.", typ, bs[0].DefRange))
	}
	return bs[0]
}

func (d *decoder) cluster(b *hclv2.Block) *topology.Cluster {
	d.ranges = map[fieldKey]attrRange{}
	c := topology.NewCluster(b.Labels[0])
	d.block(topology.BlockCluster, 0, b)
	if c.Name == "" {
		d.errorAt(b.LabelRanges[0], "Empty cluster name", `Name the cluster: cluster "payments" { ... }.`)
	}
	content, diags := b.Body.Content(clusterSchema)
	d.addDiags(diags)
	d.apply(topology.BlockCluster, 0, "", content.Attributes, setters{
		"key_prefix":         d.text(&c.KeyPrefix, false),
		"ttl":                d.dur(&c.TTL),
		"max_ttl":            d.dur(&c.MaxTTL),
		"node_timeout":       d.dur(&c.NodeTimeout),
		"restart_quarantine": d.flag(&c.RestartQuarantine),
	})
	if db := d.single(content.Blocks, "drift"); db != nil {
		d.block(topology.BlockDrift, 0, db)
		dc, diags := db.Body.Content(driftSchema)
		d.addDiags(diags)
		d.apply(topology.BlockDrift, 0, "", dc.Attributes, setters{
			"factor": func(a *hclv2.Attribute) {
				if v, ok := d.float(a); ok {
					c.Drift.Factor = v
				}
			},
			"extra": d.dur(&c.Drift.Extra),
		})
	}
	if rb := d.single(content.Blocks, "retry"); rb != nil {
		d.block(topology.BlockRetry, 0, rb)
		rc, diags := rb.Body.Content(retrySchema)
		d.addDiags(diags)
		d.apply(topology.BlockRetry, 0, "", rc.Attributes, setters{
			"attempts": d.whole(&c.Retry.Attempts),
			"delay":    d.dur(&c.Retry.Delay),
			"jitter":   d.dur(&c.Retry.Jitter),
		})
	}
	if sb := d.single(content.Blocks, "settings"); sb != nil {
		d.settings(c, sb)
	}
	var defaults topology.Master
	if db := d.single(content.Blocks, "defaults"); db != nil {
		defaults = d.masterDefaults(db)
	}
	for i, mb := range content.Blocks.OfType("master") {
		c.Masters = append(c.Masters, d.master(i, mb, defaults))
	}
	for i, ib := range content.Blocks.OfType("ignore") {
		c.Ignores = append(c.Ignores, d.ignore(i, ib))
	}
	for i, lb := range content.Blocks.OfType("lock") {
		c.Locks = append(c.Locks, d.lock(i, lb))
	}
	return c
}

func (d *decoder) settings(c *topology.Cluster, b *hclv2.Block) {
	d.block(topology.BlockSettings, 0, b)
	attrs, diags := b.Body.JustAttributes()
	d.addDiags(diags)
	set := setters{}
	for name := range attrs {
		set[name] = func(a *hclv2.Attribute) {
			if !topology.KnownSetting(topology.SettingName(a.Name)) {
				d.unknownSetting(a)
				return
			}
			val, ok := d.eval(a, false)
			if !ok || val.IsNull() {
				return
			}
			var s string
			switch val.Type() {
			case cty.String:
				s = val.AsString()
			case cty.Number:
				s = val.AsBigFloat().Text('f', -1)
			case cty.Bool:
				s = "no"
				if val.True() {
					s = "yes"
				}
			default:
				d.errorAt(a.Expr.Range(), "Incorrect value type",
					fmt.Sprintf("settings.%s must be a string, a number or a bool (written as yes/no).", a.Name))
				return
			}
			c.Settings = append(c.Settings, topology.Setting{Name: topology.SettingName(a.Name), Value: s})
		}
	}
	d.apply(topology.BlockSettings, 0, "", attrs, set)
}

// unknownSetting reports a settings attribute the tool does not know, with the
// closest known name.
func (d *decoder) unknownSetting(a *hclv2.Attribute) {
	known := topology.KnownSettings()
	for i := range known {
		known[i] = topology.SettingAttr(known[i])
	}
	detail := fmt.Sprintf("settings.%s is not a Redis setting this tool knows.", a.Name)
	if s := suggest(topology.SettingAttr(a.Name), known); s != "" {
		detail += fmt.Sprintf(" Did you mean %q?", s)
	} else {
		detail += " The known settings are: " + strings.Join(known, ", ") + "."
	}
	d.errorAt(a.NameRange, "Unknown setting", detail)
}

// masterDefaults decodes the defaults block: username, password, db and tls that
// every master inherits unless it sets its own (a master's tls block replaces the
// default one whole).
func (d *decoder) masterDefaults(b *hclv2.Block) topology.Master {
	var m topology.Master
	d.block(topology.BlockDefaults, 0, b)
	content, diags := b.Body.Content(defaultsSchema)
	d.addDiags(diags)
	d.apply(topology.BlockDefaults, 0, "", content.Attributes, d.credentials(&m, "defaults"))
	if tb := d.single(content.Blocks, "tls"); tb != nil {
		m.TLS = d.tls(topology.BlockDefaults, 0, tb)
	}
	return m
}

// credentials are the setters of username, password and db, shared by master and
// defaults blocks.
func (d *decoder) credentials(m *topology.Master, what string) setters {
	return setters{
		"username": d.text(&m.Username, false),
		"password": func(a *hclv2.Attribute) {
			v, ok := d.str(a, true)
			if !ok {
				return
			}
			m.Password = v
			d.cfg.addSecret(v)
			if v != "" && len(a.Expr.Variables()) == 0 {
				d.warnAt(a.Expr.Range(), SummaryPasswordInFile,
					fmt.Sprintf("The %s password is in the file, where it ends up in version control. Use a sensitive variable: password = var.redis_password.", what))
			}
		},
		"db": d.whole(&m.DB),
	}
}

// tls decodes a tls block of a master or of the defaults.
func (d *decoder) tls(block string, i int, tb *hclv2.Block) *topology.TLS {
	d.ranges[fieldKey{block: block, index: i, attr: "tls"}] = attrRange{subject: tb.DefRange, context: tb.DefRange}
	t := &topology.TLS{}
	tc, diags := tb.Body.Content(tlsSchema)
	d.addDiags(diags)
	d.apply(block, i, "tls.", tc.Attributes, setters{
		"ca_file":              d.path(&t.CAFile),
		"cert_file":            d.path(&t.CertFile),
		"key_file":             d.path(&t.KeyFile),
		"server_name":          d.text(&t.ServerName, false),
		"insecure_skip_verify": d.flag(&t.InsecureSkipVerify),
	})
	return t
}

func (d *decoder) master(i int, b *hclv2.Block, defaults topology.Master) topology.Master {
	m := topology.Master{Name: b.Labels[0], Username: defaults.Username, Password: defaults.Password, DB: defaults.DB}
	if defaults.TLS != nil {
		t := *defaults.TLS
		m.TLS = &t
	}
	d.block(topology.BlockMaster, i, b)
	content, diags := b.Body.Content(masterSchema)
	d.addDiags(diags)
	set := d.credentials(&m, fmt.Sprintf("master %q", m.Name))
	set["address"] = func(a *hclv2.Attribute) { d.address(a, &m) }
	d.apply(topology.BlockMaster, i, "", content.Attributes, set)
	if tb := d.single(content.Blocks, "tls"); tb != nil {
		m.TLS = d.tls(topology.BlockMaster, i, tb)
	}
	return m
}

func (d *decoder) lock(i int, b *hclv2.Block) topology.Policy {
	p := topology.Policy{Match: b.Labels[0]}
	d.block(topology.BlockLock, i, b)
	content, diags := b.Body.Content(lockSchema)
	d.addDiags(diags)
	d.apply(topology.BlockLock, i, "", content.Attributes, setters{
		"ttl":            d.dur(&p.TTL),
		"max_extensions": d.whole(&p.MaxExtensions),
		"fair":           d.flag(&p.Fair),
		"fencing":        d.flag(&p.Fencing),
		"permits":        d.whole(&p.Permits),
	})
	return p
}

// problem turns a validation finding into a diagnostic at the first field written
// in the file, or else at the block of the first field (the cluster block when that
// block is absent). Findings about an attribute that failed to decode are dropped:
// the decode error already explains it.
func (d *decoder) problem(p topology.Problem) {
	for _, f := range p.Fields {
		if d.failed[fieldKey{block: f.Block, index: f.Index, attr: f.Attr}] {
			return
		}
	}
	diag := &hclv2.Diagnostic{Summary: p.Summary, Detail: p.Detail, Severity: hclv2.DiagError}
	if p.Severity != topology.SeverityError {
		diag.Severity = hclv2.DiagWarning
	}
	var found *attrRange
	for _, f := range p.Fields {
		if r, ok := d.ranges[fieldKey{block: f.Block, index: f.Index, attr: f.Attr}]; ok {
			found = &r
			break
		}
	}
	if found == nil && len(p.Fields) > 0 {
		f := p.Fields[0]
		if r, ok := d.ranges[fieldKey{block: f.Block, index: f.Index}]; ok {
			found = &r
		}
	}
	if found == nil {
		r := d.ranges[fieldKey{block: topology.BlockCluster}]
		found = &r
	}
	subj, ctx := found.subject, found.context
	diag.Subject = &subj
	if ctx != subj {
		diag.Context = &ctx
	}
	d.diags = append(d.diags, diag)
}
