package hcl

import (
	"bytes"
	"encoding/json"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

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
