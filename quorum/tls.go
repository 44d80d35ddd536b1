package quorum

import (
	"context"
	"crypto/tls"
	"fmt"
	"net"
)

// tlsFor returns the TLS configuration used on n's raw connections: cfg with the
// server name taken from the address when unset, as tls.Dial does.
func tlsFor(cfg *tls.Config, addr string) *tls.Config {
	if cfg == nil {
		return nil
	}
	if cfg.ServerName != "" || cfg.InsecureSkipVerify {
		return cfg
	}
	c := cfg.Clone()
	host, _, err := net.SplitHostPort(addr)
	if err != nil {
		host = addr
	}
	c.ServerName = host
	return c
}

// dialTLS returns dial with a TLS client on top when cfg is set. go-redis negotiates
// TLS only with its own dialer: a custom Dialer must do it itself, or the commands go
// out in plain text. The handshake ends with ctx (go-redis bounds it by DialTimeout).
func dialTLS(dial func(ctx context.Context, network, addr string) (net.Conn, error), cfg *tls.Config) func(ctx context.Context, network, addr string) (net.Conn, error) {
	if cfg == nil {
		return dial
	}
	return func(ctx context.Context, network, addr string) (net.Conn, error) {
		c, err := dial(ctx, network, addr)
		if err != nil {
			return nil, err
		}
		tc := tls.Client(c, cfg)
		if err := tc.HandshakeContext(ctx); err != nil {
			_ = c.Close()
			return nil, fmt.Errorf("tls handshake: %w", err)
		}
		return tc, nil
	}
}
