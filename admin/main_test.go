package admin_test

import (
	"fmt"
	"os"
	"strings"
	"testing"

	"github.com/redlock/redlock/internal/redistest"
)

// TestMain starts the three masters the tests and examples of this package use.
func TestMain(m *testing.M) {
	var servers []*redistest.Server
	var addrs []string
	for _, name := range []string{"a", "b", "c"} {
		s, err := redistest.StartDetached(name, redistest.Options{})
		if err != nil {
			fmt.Fprintln(os.Stderr, "admin tests need redis-server:", err)
			os.Exit(1)
		}
		servers = append(servers, s)
		addrs = append(addrs, s.Addr())
	}
	os.Setenv("REDLOCK_EXAMPLE_MASTERS", strings.Join(addrs, ","))
	code := m.Run()
	for _, s := range servers {
		s.Kill()
	}
	if code == 0 {
		if err := redistest.FindLeaks(); err != nil {
			fmt.Fprintln(os.Stderr, "goleak:", err)
			code = 1
		}
	}
	os.Exit(code)
}
