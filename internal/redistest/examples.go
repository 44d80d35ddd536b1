package redistest

import (
	"fmt"
	"os"
	"strings"
	"testing"
)

// exampleMastersEnv hands the masters a package's TestMain started to its
// Example functions, which take no *testing.T.
const exampleMastersEnv = "REDLOCK_EXAMPLE_MASTERS"

// RunWithExampleMasters is a TestMain for a package whose Example functions
// lock on real masters: it starts three detached masters (a, b, c), names them
// for ExampleAddrs, runs the tests, kills the masters and, when the tests
// passed, fails on a goroutine left running (every Manager a test made must be
// closed). It returns the exit code for os.Exit.
func RunWithExampleMasters(m *testing.M, pkg string) int {
	var servers []*Server
	var addrs []string
	for _, name := range []string{"a", "b", "c"} {
		s, err := StartDetached(name, Options{})
		if err != nil {
			fmt.Fprintf(os.Stderr, "%s tests need redis-server: %v\n", pkg, err)
			for _, s := range servers {
				s.Kill()
			}
			return 1
		}
		servers = append(servers, s)
		addrs = append(addrs, s.Addr())
	}
	os.Setenv(exampleMastersEnv, strings.Join(addrs, ","))
	code := m.Run()
	for _, s := range servers {
		s.Kill()
	}
	if code == 0 {
		if err := FindLeaks(); err != nil {
			fmt.Fprintln(os.Stderr, "goleak:", err)
			code = 1
		}
	}
	return code
}

// ExampleAddrs returns the addresses of the masters RunWithExampleMasters
// started, in order.
func ExampleAddrs() []string { return strings.Split(os.Getenv(exampleMastersEnv), ",") }
