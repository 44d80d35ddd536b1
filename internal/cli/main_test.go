package cli

import (
	"fmt"
	"os"
	"slices"
	"sync"
	"testing"

	"go.uber.org/goleak"

	"github.com/redlock/redlock/internal/redistest"
)

// undeclared collects the exit codes commands returned in the tests that their
// exit-code table does not declare.
var (
	undeclaredMu sync.Mutex
	undeclared   []string
)

// TestMain checks that every exit code any test saw a command return is in that
// command's table, and that no test leaves a goroutine behind.
func TestMain(m *testing.M) {
	exitCheck = func(c *Command, code int) {
		codes := c.exitCodes()
		if slices.Contains(codes, code) || slices.Contains(codes, -1) {
			return
		}
		undeclaredMu.Lock()
		undeclared = append(undeclared, fmt.Sprintf("%s exited %d, not in its table %v", c.Name, code, codes))
		undeclaredMu.Unlock()
	}
	code := m.Run()
	if len(undeclared) > 0 {
		fmt.Fprintln(os.Stderr, "exit codes outside the commands' tables:")
		for _, u := range undeclared {
			fmt.Fprintln(os.Stderr, "  "+u)
		}
		code = 1
	}
	if code == 0 {
		if err := redistest.FindLeaks(goleakOptions()...); err != nil {
			fmt.Fprintln(os.Stderr, "goleak:", err)
			code = 1
		}
	}
	os.Exit(code)
}

// goleakOptions ignores the goroutines that live as long as the process by design.
func goleakOptions() []goleak.Option {
	return []goleak.Option{
		// os/signal's loop, started by the first signal.Notify (run, the console).
		goleak.IgnoreTopFunction("os/signal.signal_recv"),
		goleak.IgnoreTopFunction("os/signal.loop"),
		// teatest's watch for an interrupt, which it never stops.
		goleak.IgnoreTopFunction("github.com/charmbracelet/x/exp/teatest.NewTestModel.func2"),
	}
}
