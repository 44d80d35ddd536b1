package quorum

import (
	"context"
	"io"
	"log"
	"os"
	"testing"

	"github.com/redis/go-redis/v9"

	"github.com/redlock/redlock/internal/redistest"
)

type quietLogger struct{}

func (quietLogger) Printf(context.Context, string, ...interface{}) {}

func TestMain(m *testing.M) {
	// Dial failures against killed masters are expected here; keep the output readable.
	redis.SetLogger(quietLogger{})
	log.SetOutput(io.Discard)
	// Every goroutine a Manager starts ends by its Close (wake-ups, background
	// clean-ups, the connections' readers and writers): RunWithExampleMasters
	// fails on one left running.
	os.Exit(redistest.RunWithExampleMasters(m, "quorum"))
}
