package admin_test

import (
	"os"
	"testing"

	"github.com/redlock/redlock/internal/redistest"
)

// TestMain starts the three masters the examples of this package lock on.
func TestMain(m *testing.M) { os.Exit(redistest.RunWithExampleMasters(m, "admin")) }
