package quorum

import (
	"bufio"
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"net"
	"strconv"
	"strings"
	"time"

	"github.com/redis/go-redis/v9"
)

// wireReadBuf is the size of a connection's read buffer: it holds a whole reply
// of the fast path ("$4096\r\n", maxValueLen bytes, "\r\n"), which is read only
// once it is all there (readLineSafe).
const wireReadBuf = 8192

// wireConn is one raw connection to one master.
type wireConn struct {
	c  net.Conn
	rd *bufio.Reader // read by the connection's reader goroutine only
	// setGet: the master takes SET NX GET (Redis >= 7), which tells whose value
	// holds the key when the SET fails. Learned from INFO server at the handshake.
	setGet bool
}

// dialWire connects to n within deadline (the node's Dialer when set, else TCP;
// then TLS when configured) and runs the handshake: AUTH, SELECT, and INFO server
// fed to the restart quarantine before any vote on this connection counts.
func (m *Manager) dialWire(ctx context.Context, n *node, deadline time.Time) (*wireConn, error) {
	dctx, cancel := context.WithDeadline(ctx, deadline)
	defer cancel()
	var (
		c   net.Conn
		err error
	)
	if n.spec.Dialer != nil {
		c, err = n.spec.Dialer(dctx, "tcp", n.spec.Addr)
	} else {
		var d net.Dialer
		c, err = d.DialContext(dctx, "tcp", n.spec.Addr)
	}
	if err != nil {
		if dctx.Err() != nil && ctx.Err() == nil {
			return nil, fmt.Errorf("dial: no connection within the node timeout: %w", err)
		}
		return nil, err
	}
	if err := c.SetDeadline(deadline); err != nil {
		_ = c.Close()
		return nil, err
	}
	// The handshake's reads end with ctx too (Close), not only with the deadline:
	// a master that accepts and never answers (paused) would hold Close a node
	// timeout.
	raw := c
	stop := context.AfterFunc(ctx, func() { _ = raw.SetDeadline(time.Now()) })
	defer stop()
	if n.tls != nil {
		tc := tls.Client(c, n.tls)
		if err := tc.HandshakeContext(dctx); err != nil {
			_ = c.Close()
			// The connection's deadline and dctx's end together: either may fire.
			if ctx.Err() == nil && !time.Now().Before(deadline) {
				return nil, fmt.Errorf("tls handshake: not done within the node timeout: %w", err)
			}
			return nil, fmt.Errorf("tls handshake: %w", err)
		}
		c = tc
	}
	wc := &wireConn{c: c, rd: bufio.NewReaderSize(c, wireReadBuf)}
	if err := m.handshake(wc, n); err != nil {
		_ = c.Close()
		return nil, err
	}
	return wc, nil
}

// handshake authenticates, selects the database, and reads INFO server and INFO
// replication: the server's version decides whether SET NX GET is used, and both
// feed the restart quarantine. Without the quarantine, a refused INFO only means
// plain SET NX.
func (m *Manager) handshake(wc *wireConn, n *node) error {
	var buf []byte
	auth, sel, quar := n.spec.Password != "", n.spec.DB != 0, m.cfg.quarantine > 0
	if auth {
		if n.spec.Username != "" {
			buf = appendArray(buf, 3)
			buf = appendBulk(buf, "AUTH")
			buf = appendBulk(buf, n.spec.Username)
		} else {
			buf = appendArray(buf, 2)
			buf = appendBulk(buf, "AUTH")
		}
		buf = appendBulk(buf, n.spec.Password)
	}
	if sel {
		buf = appendArray(buf, 2)
		buf = appendBulk(buf, "SELECT")
		buf = appendBulkInt(buf, int64(n.spec.DB))
	}
	buf = appendArray(buf, 2)
	buf = appendBulk(buf, "INFO")
	buf = appendBulk(buf, "server")
	if quar {
		buf = appendArray(buf, 2)
		buf = appendBulk(buf, "INFO")
		buf = appendBulk(buf, "replication")
	}
	if _, err := wc.c.Write(buf); err != nil {
		return err
	}
	if auth {
		if err := wc.readOK(); err != nil {
			return fmt.Errorf("AUTH: %w", err)
		}
	}
	if sel {
		if err := wc.readOK(); err != nil {
			return fmt.Errorf("SELECT %d: %w", n.spec.DB, err)
		}
	}
	server, err := wc.readBulk()
	var re replyError
	switch {
	case err == nil:
		wc.setGet = setGetSupported(server)
	case errors.Is(err, errProtocol):
		return fmt.Errorf("not a Redis server: INFO server: %w", err)
	case !quar && errors.As(err, &re):
		// INFO refused (an ACL): plain SET NX, which tells less on a failed round.
	case !quar:
		return fmt.Errorf("INFO server: %w", err)
	default:
		return n.infoFailed("INFO server", err)
	}
	if quar {
		repl, err := wc.readBulk()
		if err != nil {
			return n.infoFailed("INFO replication", err)
		}
		m.quarantined(n, n.observe(server, repl, m.cfg.clock.Now(), m.cfg.quarantine))
	}
	return nil
}

// infoFailed returns the error of an INFO the quarantine needs (what names the
// command). Only a permission error (a NOPERM reply: an ACL without +info) is
// advice that holds until the next good handshake: it is recorded, and appended to
// the master's later errors. Any other failure (a timeout on a paused master, a
// reset, EOF, a peer that is not Redis) says what happened and is not kept.
func (n *node) infoFailed(what string, err error) error {
	if !isNoPerm(err) {
		return fmt.Errorf("restart quarantine: %s: %w", what, err)
	}
	err = fmt.Errorf("restart quarantine needs INFO server and INFO replication (grant +info, or turn restart_quarantine off): %w", err)
	n.mu.Lock()
	n.connectErr = err
	n.mu.Unlock()
	return err
}

// isNoPerm reports whether err is a master's NOPERM error reply, from the wire
// path or from go-redis.
func isNoPerm(err error) bool {
	var re replyError
	if errors.As(err, &re) {
		return strings.HasPrefix(string(re), "NOPERM")
	}
	return redis.IsPermissionError(err)
}

// setGetSupported reports whether INFO server describes a server that takes SET
// with both NX and GET: Redis 7.0 or later, and Valkey (which reports a Redis
// version of 7.2 or later).
func setGetSupported(info string) bool {
	v := infoField(info, "redis_version")
	major, _, _ := strings.Cut(v, ".")
	n, err := strconv.Atoi(major)
	return err == nil && n >= 7
}

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
