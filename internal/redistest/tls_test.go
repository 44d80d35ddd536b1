package redistest

import (
	"context"
	"crypto/tls"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/redlock/redlock/internal/local"
)

func TestTLSServer(t *testing.T) {
	c := Start(t, 2, Options{TLS: true})
	a, b := c.Servers[0], c.Servers[1]
	require.NotNil(t, a.TLS)
	assert.Equal(t, a.TLS.CAFile, b.TLS.CAFile, "one CA per cluster")
	assert.Equal(t, "localhost", a.TLS.ServerName)

	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	require.NoError(t, a.Client().Set(ctx, "k", "v", 0).Err())
	assert.Equal(t, []string{"k"}, a.Keys(ctx))

	// The server speaks TLS only: a plain PING gets no PONG.
	assert.Error(t, local.Ping(a.Addr(), nil))
	// Verification is real: a client without the CA is refused.
	_, err := tls.Dial("tcp", a.Addr(), &tls.Config{ServerName: "localhost", MinVersion: tls.VersionTLS12})
	assert.Error(t, err)

	// The certificates survive a restart that empties the data directory.
	a.Restart(false)
	assert.Empty(t, a.Keys(ctx))
}

func TestPlainServerHasNoTLS(t *testing.T) {
	s := StartOne(t, "a", Options{})
	assert.Nil(t, s.TLS)
	assert.Nil(t, s.TLSConfig())
	require.NoError(t, local.Ping(s.Addr(), nil))
}

func TestStartDetachedTLS(t *testing.T) {
	s, err := StartDetached("a", Options{TLS: true})
	require.NoError(t, err)
	defer s.Kill()
	require.NotNil(t, s.TLS)
	require.NoError(t, local.Ping(s.Addr(), s.TLSConfig()))
}
