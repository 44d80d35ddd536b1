package quorum

import (
	"context"
	"io"
	"log"
	"os"
	"testing"

	"github.com/redis/go-redis/v9"
)

type quietLogger struct{}

func (quietLogger) Printf(context.Context, string, ...interface{}) {}

func TestMain(m *testing.M) {
	// Dial failures against killed masters are expected here; keep the output readable.
	redis.SetLogger(quietLogger{})
	log.SetOutput(io.Discard)
	os.Exit(m.Run())
}
