package hcl

import (
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/redlock/redlock/topology"
)

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
