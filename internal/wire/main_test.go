package wire_test

import (
	"context"
	"testing"

	"github.com/redis/go-redis/v9"
	"go.uber.org/goleak"
)

type quietLogger struct{}

func (quietLogger) Printf(context.Context, string, ...any) {}

func TestMain(m *testing.M) {
	// Dial failures against paused masters are expected; keep the output readable.
	redis.SetLogger(quietLogger{})
	goleak.VerifyTestMain(m)
}
