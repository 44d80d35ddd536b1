package quorum

import (
	"context"
	"fmt"
	"io"
	"log"
	"os"
	"strings"
	"testing"

	"github.com/redis/go-redis/v9"

	"github.com/redlock/redlock/internal/redistest"
)

type quietLogger struct{}

func (quietLogger) Printf(context.Context, string, ...interface{}) {}

// exampleAddrs are the masters that the Example functions lock on, started by TestMain.
var exampleAddrs []string

func TestMain(m *testing.M) {
	// Dial failures against killed masters are expected here; keep the output readable.
	redis.SetLogger(quietLogger{})
	log.SetOutput(io.Discard)
	var servers []*redistest.Server
	for _, name := range []string{"a", "b", "c"} {
		s, err := redistest.StartDetached(name, redistest.Options{})
		if err != nil {
			fmt.Fprintln(os.Stderr, "quorum tests need redis-server:", err)
			os.Exit(1)
		}
		servers = append(servers, s)
		exampleAddrs = append(exampleAddrs, s.Addr())
	}
	os.Setenv("REDLOCK_EXAMPLE_MASTERS", strings.Join(exampleAddrs, ","))
	code := m.Run()
	for _, s := range servers {
		s.Kill()
	}
	if code == 0 {
		// Every goroutine a Manager starts ends by its Close (wake-ups, background
		// clean-ups, the connections' readers and writers).
		if err := redistest.FindLeaks(); err != nil {
			fmt.Fprintln(os.Stderr, "goleak:", err)
			code = 1
		}
	}
	os.Exit(code)
}
