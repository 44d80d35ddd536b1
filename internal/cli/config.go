package cli

import (
	"fmt"
	"io"
	"os"
	"sort"
	"strings"
	"time"

	hclv2 "github.com/hashicorp/hcl/v2"
	"github.com/hashicorp/hcl/v2/hclsyntax"
	"github.com/hashicorp/hcl/v2/hclwrite"
	"github.com/zclconf/go-cty/cty"

	"github.com/redlock/redlock/hcl"
	"github.com/redlock/redlock/internal/human"
	"github.com/redlock/redlock/internal/local"
	"github.com/redlock/redlock/topology"
)

// DefaultConfigPath is the topology file used when neither -config nor
// REDLOCK_CONFIG names one.
const DefaultConfigPath = "./redlock.hcl"

// DefaultTimeout is the default of -timeout.
const DefaultTimeout = 10 * time.Second

// common holds the flags that every command reading the topology file shares:
// -config, -masters, -var (repeatable) and -timeout. A command's arguments embed
// it and call its flags method from their own.
type common struct {
	config  string
	vars    varFlag
	timeout time.Duration
	// json, when the command has -json, is it: a file that cannot be loaded then
	// also gives a JSON document on stdout.
	json bool
	// masters is -masters (or REDLOCK_MASTERS): a cluster without a file.
	masters string
	f       *Flags
	// metrics, when the command has -metrics-addr, serves the Manager's metrics.
	metrics *metricsFlag
	// timeoutEnvBad: REDLOCK_TIMEOUT is set but is not a duration.
	timeoutEnvBad bool
	// warnings says when load shows the file's warnings (warn_once.go).
	warnings warnMode
}

// metricsFlagOn declares -metrics-addr for a long-running command.
func (c *common) metricsFlagOn(f *Flags) {
	c.metrics = &metricsFlag{}
	c.metrics.flags(f)
}

// jsonFlag declares -json.
func (c *common) jsonFlag(f *Flags) {
	f.Bool(&c.json, "json", "print one JSON document on stdout")
}

// Environment variables that stand for flags scripts set every time: a flag given
// on the command line wins.
const (
	envConfig  = "REDLOCK_CONFIG"  // -config
	envMasters = "REDLOCK_MASTERS" // -masters
	envTimeout = "REDLOCK_TIMEOUT" // -timeout
	// envMaxTTL is the max_ttl of a -masters cluster (no file to declare it in).
	envMaxTTL = "REDLOCK_MAX_TTL"
)

// flags declares -config, -masters, -var and -timeout, with defaults from
// REDLOCK_CONFIG, REDLOCK_MASTERS and REDLOCK_TIMEOUT when they are set.
func (c *common) flags(f *Flags) {
	c.f = f
	def := DefaultConfigPath
	if p := f.getenv(envConfig); p != "" {
		def = p
	}
	timeout := DefaultTimeout
	if v := f.getenv(envTimeout); v != "" {
		if d, err := time.ParseDuration(v); err == nil {
			timeout = d
		} else {
			c.timeoutEnvBad = true
		}
	}
	f.String(&c.config, "config", "PATH", def, "topology file (default $REDLOCK_CONFIG, else ./redlock.hcl)")
	f.String(&c.masters, "masters", "LIST", f.getenv(envMasters), `no file: comma-separated host:port or redis://[user:pass@]host:port[/db]
(rediss:// for TLS) masters with the defaults of an empty cluster
block (default $REDLOCK_MASTERS); restart quarantine is off only
when every master is on a loopback address; $REDLOCK_MAX_TTL raises
the 5m max_ttl (also the restart quarantine's length)`)
	f.Var(&c.vars, "var", "NAME=VALUE", "set a variable of the file; repeatable; wins over REDLOCK_VAR_NAME and defaults")
	f.Duration(&c.timeout, "timeout", timeout, "overall deadline of the command (default $REDLOCK_TIMEOUT, else 10s)").atLeast(positive)
}

// check validates the parsed common flags; it returns a usage error naming the
// flag. It drops a REDLOCK_MASTERS from the environment when -config is on the
// command line (a flag wins over the environment).
func (c *common) check() error {
	if c.timeoutEnvBad && !c.f.given("timeout") {
		return usagef("%s is not a duration (e.g. 30s)", envTimeout)
	}
	if c.masters != "" && c.f.given("config") {
		if !c.f.given("masters") {
			// REDLOCK_MASTERS from the environment: -config on the command line wins.
			c.masters = ""
		} else {
			return usagef("-masters and -config are exclusive: give one")
		}
	}
	if c.timeout <= 0 {
		return usagef("-timeout must be positive, got %s", human.Duration(c.timeout))
	}
	if v := c.f.getenv(envMaxTTL); v != "" && c.masters != "" {
		if d, err := time.ParseDuration(v); err != nil || d <= 0 {
			return usagef("%s=%q is not a positive duration (e.g. 30m)", envMaxTTL, v)
		}
	}
	if c.config == "" {
		return usagef("-config must not be empty")
	}
	return nil
}

// parse is the parse step of a command that takes no positional argument.
func (c *common) parse(p *parsed) error {
	if err := p.noArgs(""); err != nil {
		return err
	}
	return c.check()
}

// options returns the hcl load options for these flags.
func (c *common) options(env *Env) hcl.Options {
	return hcl.Options{Vars: c.vars.m, Getenv: env.Getenv}
}

// loadQuiet loads the topology file (or the -masters cluster) and returns the
// diagnostics without printing them.
func (c *common) loadQuiet(env *Env) (*hcl.Config, hclv2.Diagnostics) {
	if c.masters != "" {
		cfg, diags := hcl.Load("-masters", mastersSource(c.masters, getenv(env, envMaxTTL)), c.options(env))
		// A password in a -masters URL is on the command line, not in a file kept
		// in version control: the file's warning about it does not apply.
		kept := diags[:0:0]
		for _, d := range diags {
			if d.Summary != hcl.SummaryPasswordInFile {
				kept = append(kept, d)
			}
		}
		return cfg, kept
	}
	return hcl.LoadFile(c.config, c.options(env))
}

// loadMasters loads the -masters cluster; the error names what is wrong.
func (c *common) loadMasters(env *Env) (*hcl.Config, error) {
	cfg, diags := c.loadQuiet(env)
	if diags.HasErrors() || cfg.Cluster == nil {
		var msgs []string
		for _, d := range diags {
			if d.Severity == hclv2.DiagError {
				msgs = append(msgs, cfg.Redact(d.Detail))
			}
		}
		return cfg, fail(ExitInvalid, fmt.Errorf("-masters: %s", strings.Join(msgs, "; ")))
	}
	return cfg, nil
}

// mastersSource is the topology of -masters: a cluster block with the defaults
// of an empty one and one master per comma-separated address, named after its
// host:port. Restart quarantine stays on (the default) unless every master is on
// a loopback address, the brand-new local masters of `up`, demo and tests: with
// it off, a client counts the vote of a master that restarted and lost a lock
// still held, and can take that lock a second time.
//
// maxTTL, when set ($REDLOCK_MAX_TTL), is the cluster's max_ttl.
func mastersSource(list, maxTTL string) []byte {
	f := hclwrite.NewEmptyFile()
	cl := f.Body().AppendNewBlock("cluster", []string{"masters"}).Body()
	if maxTTL != "" {
		cl.SetAttributeValue("max_ttl", cty.StringVal(maxTTL))
	}
	allLoopback := true
	var masters [][2]string // name, address as given
	for _, a := range strings.Split(list, ",") {
		a = strings.TrimSpace(a)
		if a == "" {
			continue
		}
		name, hostPort := a, a
		if !topology.IsURL(a) && strings.Contains(a, "@") {
			name, hostPort = "master", "" // credentials without redis://: refused, and secret
		}
		if topology.IsURL(a) {
			if m, err := topology.ParseMasterURL(a); err == nil {
				name, hostPort = m.Address, m.Address
			} else {
				name, hostPort = "master", ""
			}
		}
		if local.CheckLoopback(hostPort) != nil {
			allLoopback = false
		}
		masters = append(masters, [2]string{name, a})
	}
	if allLoopback && len(masters) > 0 {
		cl.SetAttributeValue("restart_quarantine", cty.False)
	}
	for _, m := range masters {
		cl.AppendNewBlock("master", []string{m[0]}).Body().SetAttributeValue("address", cty.StringVal(m[1]))
	}
	return f.Bytes()
}

// source names the topology for messages: the file, or "-masters".
func (c *common) source() string {
	if c.masters != "" {
		return "-masters"
	}
	return c.config
}

// loadOffline is loadQuiet for checks that contact no master: variables without a
// value are unknown, not errors (as terraform validate).
func (c *common) loadOffline(env *Env) (*hcl.Config, hclv2.Diagnostics) {
	if c.masters != "" {
		return c.loadQuiet(env) // no variables to leave unknown
	}
	opts := c.options(env)
	opts.AllowUnknown = true
	return hcl.LoadFile(c.config, opts)
}

// load loads the topology file and prints its errors to stderr, redacted, and
// its warnings as c.warnings says (warn_once.go). It returns the config, whose Cluster is set; or, when the file
// is invalid or unreadable, an error with ExitInvalid and, for -json, the
// diagnostics.
func (c *common) load(env *Env) (*hcl.Config, error) {
	if c.masters != "" {
		return c.loadMasters(env)
	}
	cfg, diags := c.loadQuiet(env)
	switch {
	case diags.HasErrors():
		_ = cfg.WriteDiagnostics(env.Stderr, diags, colorFor(env.Stderr, env.Getenv))
	case len(diags) > 0:
		c.showWarnings(env, cfg, diags)
	}
	if diags.HasErrors() || cfg.Cluster == nil {
		err := fmt.Errorf("%s is not a valid topology file", c.config)
		return cfg, failDoc(ExitInvalid, err, errorDoc{Error: err.Error(), Diagnostics: cfg.Report(diags).Diagnostics})
	}
	return cfg, nil
}

// colorFor reports whether diagnostics written to w may use ANSI colors: w is a
// terminal and NO_COLOR is unset.
func colorFor(w io.Writer, getenv func(string) string) bool {
	if getenv != nil && getenv("NO_COLOR") != "" {
		return false
	}
	f, ok := w.(*os.File)
	if !ok {
		return false
	}
	st, err := f.Stat()
	return err == nil && st.Mode()&os.ModeCharDevice != 0
}

// varFlag is a repeatable NAME=VALUE flag. A later value for the same name wins.
type varFlag struct{ m map[string]string }

// String lists the names set, never the values (they may be secret).
func (v *varFlag) String() string {
	if v == nil || len(v.m) == 0 {
		return ""
	}
	names := make([]string, 0, len(v.m))
	for n := range v.m {
		names = append(names, n)
	}
	sort.Strings(names)
	return strings.Join(names, ",")
}

// Set parses one NAME=VALUE. The error does not quote the value.
func (v *varFlag) Set(s string) error {
	name, value, ok := strings.Cut(s, "=")
	name = strings.TrimSpace(name)
	if !ok || name == "" {
		return fmt.Errorf("want NAME=VALUE")
	}
	if !hclsyntax.ValidIdentifier(name) {
		return fmt.Errorf("%q is not a valid variable name", name)
	}
	if v.m == nil {
		v.m = map[string]string{}
	}
	v.m[name] = value
	return nil
}
