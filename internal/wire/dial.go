package wire

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
)

// readBuf is the size of a connection's read buffer: it holds a whole reply
// ("$4096\r\n", maxBulk bytes, "\r\n"), which is read only once it is all there
// (readLineSafe).
const readBuf = 8192

// wireConn is one raw connection to one master.
type wireConn struct {
	c  net.Conn
	rd *bufio.Reader // read by the connection's reader goroutine only
	// setGet: the master takes SET NX GET (Redis >= 7), which tells whose value
	// holds the key when the SET fails. Learned from INFO server at the handshake.
	setGet bool
}

func newWireConn(c net.Conn, size int) *wireConn {
	return &wireConn{c: c, rd: bufio.NewReaderSize(c, size)}
}

// dial connects to master i within deadline (its Dialer when set, else TCP; then
// TLS when configured) and runs the handshake: AUTH, SELECT, and INFO, given to
// OnInfo before anything is written on the connection.
func (ps *Pipes) dial(ctx context.Context, i int, deadline time.Time) (*wireConn, error) {
	return dialMaster(ctx, &ps.masters[i], deadline, readBuf, func(wc *wireConn) error { return ps.handshake(wc, i) })
}

// dialMaster connects to n within deadline (its Dialer when set, else TCP; then
// TLS when configured), with a read buffer of size bytes, and runs handshake on
// the connection; ctx's end ends the dial and the handshake at once.
func dialMaster(ctx context.Context, n *Master, deadline time.Time, size int, handshake func(*wireConn) error) (*wireConn, error) {
	dctx, cancel := context.WithDeadline(ctx, deadline)
	defer cancel()
	var (
		c   net.Conn
		err error
	)
	if n.Dialer != nil {
		c, err = n.Dialer(dctx, "tcp", n.Addr)
	} else {
		var d net.Dialer
		c, err = d.DialContext(dctx, "tcp", n.Addr)
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
	if n.TLS != nil {
		tc := tls.Client(c, n.TLS)
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
	wc := newWireConn(c, size)
	if err := handshake(wc); err != nil {
		_ = c.Close()
		return nil, err
	}
	return wc, nil
}

// handshake authenticates, selects the database, and reads INFO server (and INFO
// replication with ReadReplication): the server's version decides whether SET NX
// GET is used, and OnInfo gets both. Without ReadReplication, a refused INFO only
// means plain SET NX.
func (ps *Pipes) handshake(wc *wireConn, i int) error {
	n := &ps.masters[i]
	quar := ps.cfg.ReadReplication
	buf := appendCommand(appendLogin(nil, n), []string{"INFO", "server"})
	if quar {
		buf = appendCommand(buf, []string{"INFO", "replication"})
	}
	if _, err := wc.c.Write(buf); err != nil {
		return err
	}
	if err := wc.readLogin(n); err != nil {
		return err
	}
	server, err := wc.readBulk()
	var re ErrorReply
	switch {
	case err == nil:
		wc.setGet = setGetSupported(server)
	case errors.Is(err, ErrProtocol):
		return fmt.Errorf("not a Redis server: INFO server: %w", err)
	case !quar && errors.As(err, &re):
		// INFO refused (an ACL): plain SET NX, which tells less on a failed round.
	case !quar:
		return fmt.Errorf("INFO server: %w", err)
	default:
		return ps.infoError(i, "INFO server", err)
	}
	repl := ""
	if quar {
		if repl, err = wc.readBulk(); err != nil {
			return ps.infoError(i, "INFO replication", err)
		}
	}
	if err == nil && ps.cfg.OnInfo != nil {
		ps.cfg.OnInfo(i, server, repl)
	}
	return nil
}

// appendLogin appends the commands that open a connection to n: AUTH (with
// its username when set) when n has a password, SELECT when its database is
// not 0.
func appendLogin(buf []byte, n *Master) []byte {
	if n.Password != "" {
		if n.Username != "" {
			buf = appendArray(buf, 3)
			buf = appendBulk(buf, "AUTH")
			buf = appendBulk(buf, n.Username)
		} else {
			buf = appendArray(buf, 2)
			buf = appendBulk(buf, "AUTH")
		}
		buf = appendBulk(buf, n.Password)
	}
	if n.DB != 0 {
		buf = appendArray(buf, 2)
		buf = appendBulk(buf, "SELECT")
		buf = appendBulkInt(buf, int64(n.DB))
	}
	return buf
}

// readLogin reads the replies to appendLogin's commands.
func (wc *wireConn) readLogin(n *Master) error {
	if n.Password != "" {
		if err := wc.readOK(); err != nil {
			return fmt.Errorf("AUTH: %w", err)
		}
	}
	if n.DB != 0 {
		if err := wc.readOK(); err != nil {
			return fmt.Errorf("SELECT %d: %w", n.DB, err)
		}
	}
	return nil
}

func (ps *Pipes) infoError(i int, what string, err error) error {
	if ps.cfg.InfoError != nil {
		return ps.cfg.InfoError(i, what, err)
	}
	return fmt.Errorf("%s: %w", what, err)
}

// setGetSupported reports whether INFO server describes a server that takes SET
// with both NX and GET: Redis 7.0 or later, and Valkey (which reports a Redis
// version of 7.2 or later).
func setGetSupported(info string) bool {
	v := InfoField(info, "redis_version")
	major, _, _ := strings.Cut(v, ".")
	n, err := strconv.Atoi(major)
	return err == nil && n >= 7
}

// InfoField returns the value of field in an INFO reply, "" when absent.
func InfoField(info, field string) string {
	for _, line := range strings.Split(info, "\n") {
		if v, ok := strings.CutPrefix(line, field+":"); ok {
			return strings.TrimSpace(v)
		}
	}
	return ""
}
