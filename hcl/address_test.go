package hcl

import (
	"bytes"
	"encoding/json"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestUnparsableURLRedacted is the regression test for an address URL that does
// not parse showing its password in the snippet under the error.
func TestUnparsableURLRedacted(t *testing.T) {
	for _, addr := range []string{`redis://:hun\"ter22@127.0.0.1:7001`, `redis://u:hunter22/x@127.0.0.1:7001`, `redis://:hunter22@127.0.0.1:99999`} {
		t.Run(addr, func(t *testing.T) {
			src := []byte("cluster \"t\" {\n  master \"a\" { address = \"" + addr + "\" }\n}\n")
			cfg, diags := Load("t.hcl", src, Options{Getenv: noEnv})
			require.True(t, diags.HasErrors())
			var text bytes.Buffer
			require.NoError(t, cfg.WriteDiagnostics(&text, diags, false))
			doc, err := json.Marshal(cfg.Report(diags))
			require.NoError(t, err)
			for _, out := range []string{text.String(), string(doc)} {
				assert.Contains(t, out, "Invalid master URL")
				assert.NotContains(t, out, "hunter")
				assert.NotContains(t, out, "ter22")
			}
		})
	}
}
