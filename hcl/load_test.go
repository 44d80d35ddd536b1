package hcl

import (
	"bufio"
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"sort"
	"strconv"
	"strings"
	"testing"
	"time"

	hclv2 "github.com/hashicorp/hcl/v2"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/redlock/redlock/topology"
)

// noEnv is a Getenv that sees no environment, so tests do not depend on the caller's.
func noEnv(string) string { return "" }

// expectation is one "# ERROR: text" or "# WARNING: text" comment of a fixture. An
// "@-N" after the word shifts the expected line up by N (for a second diagnostic
// on the same line).
type expectation struct {
	line     int
	severity string
	text     string
}

var expectRE = regexp.MustCompile(`#\s*(ERROR|WARNING)(@-(\d+))?:\s*(.*?)\s*$`)

func expectations(t *testing.T, src []byte) []expectation {
	t.Helper()
	var out []expectation
	sc := bufio.NewScanner(bytes.NewReader(src))
	for n := 1; sc.Scan(); n++ {
		m := expectRE.FindStringSubmatch(sc.Text())
		if m == nil {
			continue
		}
		line := n
		if m[3] != "" {
			off, err := strconv.Atoi(m[3])
			require.NoError(t, err)
			line -= off
		}
		out = append(out, expectation{line: line, severity: strings.ToLower(m[1]), text: m[4]})
	}
	return out
}

func severityName(s hclv2.DiagnosticSeverity) string {
	if s == hclv2.DiagWarning {
		return "warning"
	}
	return "error"
}

// TestFixtures loads every file under testdata/errors and checks that the
// diagnostics are exactly those its comments announce: same line, same severity,
// the comment text a substring of "summary: detail".
func TestFixtures(t *testing.T) {
	files, err := filepath.Glob("testdata/errors/*.hcl")
	require.NoError(t, err)
	require.NotEmpty(t, files)
	for _, file := range files {
		t.Run(filepath.Base(file), func(t *testing.T) {
			src, err := os.ReadFile(file)
			require.NoError(t, err)
			want := expectations(t, src)
			require.NotEmpty(t, want, "fixture without expectations")
			cfg, diags := Load(file, src, Options{Getenv: noEnv})
			require.NotNil(t, cfg)

			var got []string
			for _, d := range diags {
				require.NotNil(t, d.Subject, "diagnostic without a range: %s", d.Summary)
				assert.Equal(t, file, d.Subject.Filename)
				got = append(got, fmt.Sprintf("%d %s %s: %s", d.Subject.Start.Line, severityName(d.Severity), d.Summary, d.Detail))
			}
			used := make([]bool, len(got))
			for _, w := range want {
				found := false
				for i, g := range got {
					prefix := fmt.Sprintf("%d %s ", w.line, w.severity)
					if !used[i] && strings.HasPrefix(g, prefix) && strings.Contains(g, w.text) {
						used[i], found = true, true
						break
					}
				}
				assert.True(t, found, "line %d: want %s containing %q; got:\n%s", w.line, w.severity, w.text, strings.Join(got, "\n"))
			}
			for i, g := range got {
				assert.True(t, used[i], "unexpected diagnostic: %s", g)
			}
			if diags.HasErrors() {
				assert.Nil(t, cfg.Cluster, "a file with errors yields no cluster")
			} else {
				assert.NotNil(t, cfg.Cluster, "a file with only warnings yields a cluster")
			}
		})
	}
}

func TestParseDuration(t *testing.T) {
	tests := []struct {
		in      string
		want    time.Duration
		wantErr string
	}{
		{in: "30s", want: 30 * time.Second},
		{in: "150ms", want: 150 * time.Millisecond},
		{in: "1m30s", want: 90 * time.Second},
		{in: " 2h ", want: 2 * time.Hour},
		{in: "-5s", want: -5 * time.Second},
		{in: "30", wantErr: `"30" needs a unit, e.g. "30s"`},
		{in: "0.5", wantErr: `needs a unit`},
		{in: "", wantErr: "empty string"},
		{in: "5 minutes", wantErr: "is not a duration"},
		{in: "5d", wantErr: "is not a duration"},
	}
	for _, tt := range tests {
		t.Run(tt.in, func(t *testing.T) {
			got, err := ParseDuration(tt.in)
			if tt.wantErr != "" {
				require.Error(t, err)
				assert.Contains(t, err.Error(), tt.wantErr)
				return
			}
			require.NoError(t, err)
			assert.Equal(t, tt.want, got)
		})
	}
}

const varFile = `
variable "prefix" {
  type    = string
  default = "from-default:"
}
cluster "x" {
  key_prefix = var.prefix
  master "a" { address = "127.0.0.1:7001" }
  master "b" { address = "127.0.0.1:7002" }
  master "c" { address = "127.0.0.1:7003" }
}
`

func TestVariablePrecedence(t *testing.T) {
	tests := []struct {
		name string
		vars map[string]string
		env  map[string]string
		want string
	}{
		{name: "default", want: "from-default:"},
		{name: "env over default", env: map[string]string{"REDLOCK_VAR_prefix": "from-env:"}, want: "from-env:"},
		{name: "var over env", vars: map[string]string{"prefix": "from-var:"}, env: map[string]string{"REDLOCK_VAR_prefix": "from-env:"}, want: "from-var:"},
		{name: "var over default", vars: map[string]string{"prefix": "from-var:"}, want: "from-var:"},
		{name: "empty env is unset", env: map[string]string{"REDLOCK_VAR_prefix": ""}, want: "from-default:"},
		{name: "other env ignored", env: map[string]string{"REDLOCK_VAR_PREFIX": "wrong-case:"}, want: "from-default:"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			cfg, diags := Load("vars.hcl", []byte(varFile), Options{Vars: tt.vars, Getenv: func(k string) string { return tt.env[k] }})
			require.False(t, diags.HasErrors(), diags.Error())
			require.NotNil(t, cfg.Cluster)
			assert.Equal(t, tt.want, cfg.Cluster.KeyPrefix)
		})
	}
}

func TestVariableErrors(t *testing.T) {
	src := `
variable "attempts" { type = number }
variable "fair" {
  type    = bool
  default = false
}
cluster "x" {
  retry { attempts = var.attempts }
  master "a" { address = "127.0.0.1:7001" }
  master "b" { address = "127.0.0.1:7002" }
  master "c" { address = "127.0.0.1:7003" }
  lock "a/*" { fair = var.fair }
}
`
	tests := []struct {
		name    string
		vars    map[string]string
		wantErr string // "" = valid
		check   func(t *testing.T, c *topology.Cluster)
	}{
		{name: "missing value", wantErr: `Variable "attempts" has no value: pass -var attempts=VALUE, set REDLOCK_VAR_attempts`},
		{name: "number parsed", vars: map[string]string{"attempts": "7", "fair": "true"}, check: func(t *testing.T, c *topology.Cluster) {
			assert.Equal(t, 7, c.Retry.Attempts)
			assert.True(t, c.PolicyFor("a/1").Fair)
		}},
		{name: "bad number", vars: map[string]string{"attempts": "seven"}, wantErr: "The value of -var attempts is not a valid number"},
		{name: "bad bool", vars: map[string]string{"attempts": "1", "fair": "yes"}, wantErr: "The value of -var fair is not a valid bool"},
		{name: "undeclared", vars: map[string]string{"attempts": "1", "atempts": "2"}, wantErr: `Did you mean "attempts"?`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			cfg, diags := Load("vars.hcl", []byte(src), Options{Vars: tt.vars, Getenv: noEnv})
			if tt.wantErr == "" {
				require.False(t, diags.HasErrors(), diags.Error())
				tt.check(t, cfg.Cluster)
				return
			}
			require.True(t, diags.HasErrors())
			assert.Nil(t, cfg.Cluster)
			assert.Contains(t, diags.Error(), tt.wantErr)
		})
	}
}

// TestSensitiveNeverPrinted puts a sensitive value in every place that is refused
// and in the password, with other errors around, and checks that the secret appears
// in no text or JSON output.
func TestSensitiveNeverPrinted(t *testing.T) {
	const secret = "S3cr3t-Value-42"
	files := map[string]string{
		"misplaced": `
variable "pw" { sensitive = true }
cluster "x" {
  key_prefix = var.pw
  settings { requirepass = "${var.pw}" }
  master "a" {
    address  = var.pw
    username = var.pw
    password = var.pw
    db       = var.pw
    tls { server_name = var.pw }
  }
}
`,
		"type error": `
variable "pw" {
  sensitive = true
  type      = number
}
cluster "x" {
  master "a" { address = "127.0.0.1:7001" }
}
`,
		"bad use in password": `
variable "pw" { sensitive = true }
cluster "x" {
  master "a" {
    address  = "127.0.0.1:7001"
    password = var.pw + 1
  }
}
`,
		"literal password": `
cluster "x" {
  ttl = "30"
  master "a" {
    address  = "127.0.0.1:7001"
    password = "` + secret + `"
  }
}
`,
	}
	for name, src := range files {
		t.Run(name, func(t *testing.T) {
			cfg, diags := Load("s.hcl", []byte(src), Options{Vars: map[string]string{"pw": secret}, Getenv: noEnv})
			if name != "literal password" {
				require.True(t, diags.HasErrors())
			}
			require.NotEmpty(t, diags)
			var text bytes.Buffer
			require.NoError(t, cfg.WriteDiagnostics(&text, diags, false))
			js, err := json.Marshal(cfg.Report(diags))
			require.NoError(t, err)
			assert.NotContains(t, text.String(), secret)
			assert.NotContains(t, string(js), secret)
			assert.NotContains(t, text.String(), "S3cr3t")
			assert.NotEmpty(t, text.String())
		})
	}
	t.Run("redact", func(t *testing.T) {
		cfg, _ := Load("s.hcl", []byte(files["misplaced"]), Options{Vars: map[string]string{"pw": secret}, Getenv: noEnv})
		assert.Equal(t, "auth (sensitive) failed", cfg.Redact("auth "+secret+" failed"))
	})
}

func TestMisplacedSensitiveErrors(t *testing.T) {
	src := `
variable "pw" { sensitive = true }
cluster "x" {
  key_prefix = var.pw
  master "a" {
    address  = "127.0.0.1:7001"
    password = var.pw
  }
}
`
	_, diags := Load("s.hcl", []byte(src), Options{Vars: map[string]string{"pw": "x"}, Getenv: noEnv})
	require.Len(t, diags.Errs(), 1)
	d := diags[0]
	assert.Equal(t, "Sensitive value not allowed here", d.Summary)
	assert.Equal(t, 4, d.Subject.Start.Line)
}

func TestDecodedCluster(t *testing.T) {
	src := `
cluster "payments" {
  key_prefix         = "l:"
  ttl                = "10s"
  max_ttl            = "1m"
  node_timeout       = "20ms"
  restart_quarantine = false
  drift {
    factor = 0.02
    extra  = "5ms"
  }
  retry {
    attempts = 3
    delay    = "50ms"
    jitter   = "10ms"
  }
  settings {
    maxmemory_policy = "noeviction"
    appendonly       = true
    appendfsync      = "always"
    hz               = 100
  }
  master "a" {
    address  = "127.0.0.1:7001"
    username = "u"
    db       = 2
    tls {
      ca_file              = "certs/ca.pem"
      cert_file            = "/abs/cert.pem"
      key_file             = "key.pem"
      server_name          = "redis-a"
      insecure_skip_verify = true
    }
  }
  master "b" { address = "127.0.0.1:7002" }
  master "c" { address = "127.0.0.1:7003" }
  lock "billing/*" {
    ttl            = "5s"
    max_extensions = 4
    fair           = true
    fencing        = true
  }
  lock "nightly/*" {
    permits = 3
  }
}
`
	cfg, diags := Load(filepath.Join("conf", "redlock.hcl"), []byte(src), Options{Getenv: noEnv})
	require.Empty(t, diags, diags.Error())
	c := cfg.Cluster
	require.NotNil(t, c)
	assert.Equal(t, "payments", c.Name)
	assert.Equal(t, "l:", c.KeyPrefix)
	assert.Equal(t, 10*time.Second, c.TTL)
	assert.Equal(t, time.Minute, c.MaxTTL)
	assert.Equal(t, 20*time.Millisecond, c.NodeTimeout)
	assert.False(t, c.RestartQuarantine)
	assert.Equal(t, topology.Drift{Factor: 0.02, Extra: 5 * time.Millisecond}, c.Drift)
	assert.Equal(t, topology.Retry{Attempts: 3, Delay: 50 * time.Millisecond, Jitter: 10 * time.Millisecond}, c.Retry)
	assert.Equal(t, []topology.Setting{
		{Name: "maxmemory-policy", Value: "noeviction"},
		{Name: "appendonly", Value: "yes"},
		{Name: "appendfsync", Value: "always"},
		{Name: "hz", Value: "100"},
	}, c.Settings)
	require.Len(t, c.Masters, 3)
	assert.Equal(t, topology.Master{Name: "a", Address: "127.0.0.1:7001", Username: "u", DB: 2, TLS: &topology.TLS{
		CAFile: filepath.Join("conf", "certs", "ca.pem"), CertFile: "/abs/cert.pem", KeyFile: filepath.Join("conf", "key.pem"),
		ServerName: "redis-a", InsecureSkipVerify: true,
	}}, c.Masters[0])
	assert.Nil(t, c.Masters[1].TLS)
	assert.Equal(t, []topology.Policy{{Match: "billing/*", TTL: 5 * time.Second, MaxExtensions: 4, Fair: true, Fencing: true},
		{Match: "nightly/*", Permits: 3}}, c.Locks)
}

func TestDefaults(t *testing.T) {
	src := `cluster "d" {
  master "a" { address = "127.0.0.1:7001" }
  master "b" { address = "127.0.0.1:7002" }
  master "c" { address = "127.0.0.1:7003" }
}`
	cfg, diags := Load("d.hcl", []byte(src), Options{Getenv: noEnv})
	require.Empty(t, diags, diags.Error())
	want := topology.NewCluster("d")
	want.Masters = cfg.Cluster.Masters
	assert.Equal(t, want, cfg.Cluster)
	assert.Equal(t, "lock:", cfg.Cluster.KeyPrefix)
	assert.True(t, cfg.Cluster.RestartQuarantine)
}

func TestLoadFileMissing(t *testing.T) {
	cfg, diags := LoadFile(filepath.Join(t.TempDir(), "nope.hcl"), Options{Getenv: noEnv})
	require.NotNil(t, cfg)
	assert.Nil(t, cfg.Cluster)
	require.True(t, diags.HasErrors())
	assert.Contains(t, diags.Error(), "nope.hcl")
	assert.Contains(t, diags.Error(), "-config")
}

func TestReportJSON(t *testing.T) {
	src := "cluster \"x\" {\n  ttl = \"30\"\n  master \"a\" { address = \"127.0.0.1:7001\" }\n}\n"
	cfg, diags := Load("r.hcl", []byte(src), Options{Getenv: noEnv})
	js, err := json.Marshal(cfg.Report(diags))
	require.NoError(t, err)
	var got struct {
		Valid        bool `json:"valid"`
		ErrorCount   int  `json:"error_count"`
		WarningCount int  `json:"warning_count"`
		Diagnostics  []struct {
			Severity string `json:"severity"`
			Summary  string `json:"summary"`
			Detail   string `json:"detail"`
			Range    struct {
				Filename string `json:"filename"`
				Start    struct{ Line, Column, Byte int }
				End      struct{ Line, Column, Byte int }
			} `json:"range"`
			Snippet struct {
				Context              *string `json:"context"`
				Code                 string  `json:"code"`
				StartLine            int     `json:"start_line"`
				HighlightStartOffset int     `json:"highlight_start_offset"`
				HighlightEndOffset   int     `json:"highlight_end_offset"`
			} `json:"snippet"`
		} `json:"diagnostics"`
	}
	require.NoError(t, json.Unmarshal(js, &got))
	assert.False(t, got.Valid)
	assert.Equal(t, 1, got.ErrorCount)
	assert.Equal(t, 1, got.WarningCount) // fewer than 3 masters
	require.Len(t, got.Diagnostics, 2)
	d := got.Diagnostics[0]
	assert.Equal(t, "error", d.Severity)
	assert.Equal(t, "Duration needs a unit", d.Summary)
	assert.Equal(t, "r.hcl", d.Range.Filename)
	assert.Equal(t, 2, d.Range.Start.Line)
	assert.Equal(t, 9, d.Range.Start.Column)
	assert.Equal(t, `  ttl = "30"`, d.Snippet.Code)
	assert.Equal(t, 2, d.Snippet.StartLine)
	assert.Equal(t, `"30"`, d.Snippet.Code[d.Snippet.HighlightStartOffset:d.Snippet.HighlightEndOffset])
	require.NotNil(t, d.Snippet.Context)
	assert.Equal(t, `cluster "x"`, *d.Snippet.Context)
	assert.Equal(t, "warning", got.Diagnostics[1].Severity)
}

func TestWriteDiagnosticsText(t *testing.T) {
	src := "cluster \"x\" {\n  ttl = \"30\"\n}\n"
	cfg, diags := Load("t.hcl", []byte(src), Options{Getenv: noEnv})
	var buf bytes.Buffer
	require.NoError(t, cfg.WriteDiagnostics(&buf, diags, false))
	out := buf.String()
	assert.Contains(t, out, "Error: Duration needs a unit")
	assert.Contains(t, out, "on t.hcl line 2")
	assert.Contains(t, out, `2:   ttl = "30"`)
	assert.Contains(t, out, `e.g. "30s"`) // a hint follows
}

func TestFormat(t *testing.T) {
	tests := []struct {
		name, in, want string
		wantErr        bool
	}{
		{name: "aligns", in: "cluster \"x\" {\nttl = \"30s\"\n  node_timeout=\"50ms\"\n}\n", want: "cluster \"x\" {\n  ttl          = \"30s\"\n  node_timeout = \"50ms\"\n}\n"},
		{name: "canonical unchanged", in: "cluster \"x\" {\n  ttl = \"30s\"\n}\n", want: "cluster \"x\" {\n  ttl = \"30s\"\n}\n"},
		{name: "trailing blank lines", in: "cluster \"x\" {}\n\n\n", want: "cluster \"x\" {}\n"},
		{name: "keeps comments", in: "# top\ncluster \"x\" { # c\n  ttl = \"1s\" # why\n}\n", want: "# top\ncluster \"x\" { # c\n  ttl = \"1s\"  # why\n}\n"},
		{name: "syntax error", in: "cluster \"x\" {\n  ttl = \"30s\n}\n", wantErr: true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := Format([]byte(tt.in))
			if tt.wantErr {
				require.Error(t, err)
				var diags hclv2.Diagnostics
				assert.ErrorAs(t, err, &diags)
				return
			}
			require.NoError(t, err)
			assert.Equal(t, tt.want, string(got))
			again, err := Format(got)
			require.NoError(t, err)
			assert.Equal(t, string(got), string(again), "formatting is idempotent")
		})
	}
}

// TestExamples validates every examples/*.hcl, giving a value to each required
// variable, and checks that each is in canonical format.
func TestExamples(t *testing.T) {
	files, err := filepath.Glob("../examples/*.hcl")
	require.NoError(t, err)
	require.GreaterOrEqual(t, len(files), 3)
	names := make([]string, 0, len(files))
	for _, f := range files {
		names = append(names, filepath.Base(f))
	}
	sort.Strings(names)
	assert.Subset(t, names, []string{"local.hcl", "production.hcl", "three-masters.hcl"})
	for _, file := range files {
		t.Run(filepath.Base(file), func(t *testing.T) {
			vars := map[string]string{}
			if filepath.Base(file) == "production.hcl" {
				vars["redis_password"] = "example-password"
			}
			cfg, diags := LoadFile(file, Options{Vars: vars, Getenv: noEnv})
			require.Empty(t, diags, diags.Error())
			require.NotNil(t, cfg.Cluster)
			assert.Equal(t, 1, len(cfg.Cluster.Masters)%2, "odd number of masters")
			src, err := os.ReadFile(file)
			require.NoError(t, err)
			out, err := Format(src)
			require.NoError(t, err)
			assert.Equal(t, string(src), string(out), "not in canonical format")
		})
	}
}

func TestSensitiveDefaultRedactedWhenOverridden(t *testing.T) {
	src := `
variable "pw" {
  sensitive = true
  default   = "old-default-secret"
}
cluster "x" {
  ttl = "30"
  master "a" {
    address  = "127.0.0.1:7001"
    password = var.pw
  }
}
`
	cfg, diags := Load("s.hcl", []byte(src), Options{Vars: map[string]string{"pw": "new-secret"}, Getenv: noEnv})
	require.True(t, diags.HasErrors())
	assert.Equal(t, "(sensitive) (sensitive)", cfg.Redact("old-default-secret new-secret"))
}

// validate does not need variable values: a variable without one is unknown, its
// uses are not checked, and everything else still is.
func TestAllowUnknownVariables(t *testing.T) {
	src := `variable "pw" {
  type      = string
  sensitive = true
}
variable "host_a" { type = string }
variable "ttl" { type = number }
cluster "c" {
  ttl = "30"
  master "a" { address = var.host_a }
  master "b" {
    address  = "127.0.0.1:7002"
    password = var.pw
  }
  master "c" { address = "127.0.0.1:7003" }
}
`
	opts := Options{Getenv: noEnv, AllowUnknown: true}
	_, diags := Load("t.hcl", []byte(src), opts)
	require.Len(t, diags, 1, "only the duration without a unit: %v", diags)
	assert.Contains(t, diags[0].Summary, "Duration needs a unit")

	fixed := strings.Replace(src, `ttl = "30"`, `ttl = "30s"`, 1)
	cfg, diags := Load("t.hcl", []byte(fixed), opts)
	require.Empty(t, diags)
	require.NotNil(t, cfg.Cluster)

	// Without AllowUnknown (every command that connects) the values are required.
	_, diags = Load("t.hcl", []byte(fixed), Options{Getenv: noEnv})
	require.True(t, diags.HasErrors())
	assert.Contains(t, diags.Error(), "No value for required variable")
}

// An address may be a redis:// or rediss:// URL: its user, password (a secret), db
// and TLS fill the master; a sensitive variable is allowed only inside a URL.
func TestAddressURL(t *testing.T) {
	src := `variable "pw" {
  type      = string
  sensitive = true
}
cluster "c" {
  master "a" { address = "rediss://app:${var.pw}@10.0.0.1:6380/3" }
  master "b" { address = "redis://10.0.0.2" }
  master "c" { address = "10.0.0.3:6379" }
}
`
	cfg, diags := Load("t.hcl", []byte(src), Options{Getenv: noEnv, Vars: map[string]string{"pw": "Url-Secret-42"}})
	require.Empty(t, diags)
	a := cfg.Cluster.Masters[0]
	assert.Equal(t, "10.0.0.1:6380", a.Address)
	assert.Equal(t, "app", a.Username)
	assert.Equal(t, "Url-Secret-42", a.Password)
	assert.Equal(t, 3, a.DB)
	assert.NotNil(t, a.TLS)
	assert.Equal(t, "10.0.0.2:6379", cfg.Cluster.Masters[1].Address)
	assert.Equal(t, "(sensitive)", cfg.Redact("Url-Secret-42"))

	bad := strings.Replace(src, `"redis://10.0.0.2"`, `"redis://10.0.0.2:http"`, 1)
	_, diags = Load("t.hcl", []byte(bad), Options{Getenv: noEnv, Vars: map[string]string{"pw": "Url-Secret-42"}})
	require.True(t, diags.HasErrors())
	assert.Contains(t, diags.Error(), "Invalid master URL")
	assert.NotContains(t, diags.Error(), "Url-Secret-42")

	sens := strings.Replace(src, `"10.0.0.3:6379"`, `var.pw`, 1)
	_, diags = Load("t.hcl", []byte(sens), Options{Getenv: noEnv, Vars: map[string]string{"pw": "Url-Secret-42"}})
	require.True(t, diags.HasErrors())
	assert.Contains(t, diags.Error(), "Sensitive value not allowed here")
}

// A defaults block gives every master its credentials, db and tls; a master's own
// values win (its tls block replaces the default one whole).
func TestDefaultsBlock(t *testing.T) {
	src := `variable "pw" {
  type      = string
  sensitive = true
}
cluster "c" {
  defaults {
    username = "app"
    password = var.pw
    db       = 2
    tls { server_name = "redis.internal" }
  }
  master "a" { address = "10.0.0.1:6379" }
  master "b" {
    address = "10.0.0.2:6379"
    db      = 5
    tls { insecure_skip_verify = true }
  }
  master "c" { address = "10.0.0.3:6379" }
  ignore "vulnerable-version" {
    reason  = "Debian backports the Lua fixes"
    masters = ["a", "b"]
  }
}
`
	cfg, diags := Load("t.hcl", []byte(src), Options{Getenv: noEnv, Vars: map[string]string{"pw": "Def-Secret-1"}})
	require.Empty(t, diags)
	a, b := cfg.Cluster.Masters[0], cfg.Cluster.Masters[1]
	assert.Equal(t, "app", a.Username)
	assert.Equal(t, "Def-Secret-1", a.Password)
	assert.Equal(t, 2, a.DB)
	require.NotNil(t, a.TLS)
	assert.Equal(t, "redis.internal", a.TLS.ServerName)
	assert.Equal(t, 5, b.DB)
	assert.Equal(t, "", b.TLS.ServerName, "b's own tls block replaces the default")
	assert.True(t, b.TLS.InsecureSkipVerify)
	require.Len(t, cfg.Cluster.Ignores, 1)
	assert.NotNil(t, cfg.Cluster.Acknowledged("vulnerable-version", "a"))
	assert.Nil(t, cfg.Cluster.Acknowledged("vulnerable-version", "c"))

	for _, tt := range []struct{ ignore, want string }{
		{`ignore "no-such-code" { reason = "x" }`, "Unknown finding code"},
		{`ignore "eviction-policy" { reason = "x" }`, "Errors cannot be acknowledged"},
		{`ignore "clock-offset" {}`, "reason"},
		{`ignore "clock-offset" {
    reason  = "x"
    masters = ["zz"]
  }`, `names master "zz"`},
	} {
		bad := strings.Replace(src, `ignore "vulnerable-version" {
    reason  = "Debian backports the Lua fixes"
    masters = ["a", "b"]
  }`, tt.ignore, 1)
		_, diags := Load("t.hcl", []byte(bad), Options{Getenv: noEnv, Vars: map[string]string{"pw": "Def-Secret-1"}, AllowUnknown: true})
		require.True(t, diags.HasErrors(), tt.ignore)
		assert.Contains(t, diags.Error(), tt.want, tt.ignore)
	}
}

// The topology file shown in README.md is valid (the first hcl block there).
func TestReadmeExample(t *testing.T) {
	b, err := os.ReadFile("../README.md")
	require.NoError(t, err)
	_, rest, ok := strings.Cut(string(b), "```hcl\n")
	require.True(t, ok, "README.md shows a topology file")
	src, _, ok := strings.Cut(rest, "```")
	require.True(t, ok)
	cfg, diags := Load("README.md", []byte(src), Options{Getenv: noEnv, Vars: map[string]string{"redis_password": "x"}})
	require.False(t, diags.HasErrors(), "%v", diags)
	require.NotNil(t, cfg.Cluster)
}
