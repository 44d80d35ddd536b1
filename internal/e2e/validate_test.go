package e2e

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// Regression (issue 23 item 16): localhost:P and 127.0.0.1:P were not flagged as
// the same master; one server counted twice breaks the quorum.
func TestValidateFlagsOneLoopbackMasterSpeltTwice(t *testing.T) {
	for _, spelling := range []string{"localhost:7001", "[::1]:7001", "[::ffff:127.0.0.1]:7001", "LocalHost.:7001"} {
		t.Run(spelling, func(t *testing.T) {
			path := filepath.Join(t.TempDir(), "dup.hcl")
			require.NoError(t, os.WriteFile(path, []byte(`cluster "x" {
  master "a" { address = "127.0.0.1:7001" }
  master "b" { address = "`+spelling+`" }
  master "c" { address = "127.0.0.1:7003" }
}
`), 0o600))
			r := finish(t, (&env{t: t, config: path}).command("", "validate"))
			assert.Equal(t, 2, r.code, "%s%s", r.stdout, r.stderr)
			assert.Contains(t, r.stdout+r.stderr, "Duplicate master address")
			assert.Contains(t, r.stdout+r.stderr, "dup.hcl line 3")
		})
	}
}
