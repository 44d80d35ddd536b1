package quorum

import (
	"context"
	"errors"
	"os"
	"strconv"
	"sync"
	"time"

	"github.com/redlock/redlock/internal/keyspace"
	"github.com/redlock/redlock/internal/wire"
)

// The connections of listings (list_resp.go, list_read.go): a wire.Conn per
// master, dialled and opened as the transport's connections are (the node's
// wire.Master: its Dialer, TLS, AUTH, SELECT), kept idle between listings and
// closed by Manager.Close. Its replies are read piece by piece, each bulk string
// into a buffer of the listing's.

// listKeyCap is the longest key a listing reads: longer keys (no lock name is
// longer than MaxNameLen; hostile names of tens of kilobytes are listed) are
// read past and not listed, so that a key name of hundreds of megabytes is
// never held.
const listKeyCap = 1 << 20

// listConn is one connection of listings to one master, and the buffers its
// listings reuse.
type listConn struct {
	c     *wire.Conn
	out   []byte    // the commands being written
	batch scanBatch // reused by every listing on the connection
	blob  []byte    // list_read.lua's records (list_read.go)
	runID string    // the master's run_id when dialled ("" when it refused INFO)
}

// listConns keeps one idle listing connection of a master between listings.
type listConns struct {
	mu     sync.Mutex
	idle   *listConn
	closed bool
}

// listConn returns the idle connection (reused true), or dials a new one.
func (n *node) listConn(ctx context.Context, timeout time.Duration) (lc *listConn, reused bool, err error) {
	n.list.mu.Lock()
	lc = n.list.idle
	n.list.idle = nil
	n.list.mu.Unlock()
	if lc != nil {
		return lc, true, nil
	}
	lc, err = n.dialList(ctx, timeout)
	return lc, false, err
}

// openList runs first on n's idle listing connection, or a new one, and
// returns the connection, for the caller to put back (putListConn). When first
// fails on an idle connection, neither on an error reply nor at its deadline
// (a master that does not answer is not waited for twice), and ctx is not
// done, it runs once more on a new connection: the master may have closed the
// idle one (a restart, its idle timeout). first must write nothing the master
// keeps (SCAN, reads). On failure the connection is closed.
func (n *node) openList(ctx context.Context, timeout time.Duration, first func(lc *listConn) error) (*listConn, error) {
	lc, reused, err := n.listConn(ctx, timeout)
	if err != nil {
		return nil, err
	}
	err = first(lc)
	var re wire.ErrorReply
	if err != nil && reused && ctx.Err() == nil && !errors.As(err, &re) && !errors.Is(err, os.ErrDeadlineExceeded) {
		_ = lc.c.Close()
		if lc, err = n.dialList(ctx, timeout); err != nil {
			return nil, err
		}
		err = first(lc)
	}
	if err != nil {
		_ = lc.c.Close()
		return nil, err
	}
	return lc, nil
}

// withListConn runs fn as openList does, then keeps the connection for the next
// listing.
func (n *node) withListConn(ctx context.Context, timeout time.Duration, fn func(lc *listConn) error) error {
	lc, err := n.openList(ctx, timeout, fn)
	if err == nil {
		n.putListConn(lc, nil)
	}
	return err
}

// putListConn keeps lc for the next listing (closing what it replaces), or
// closes it once the Manager is closed or after an error (it may be out of
// step: replies of the commands written may not all have been read).
func (n *node) putListConn(lc *listConn, err error) {
	if err != nil {
		_ = lc.c.Close()
		return
	}
	n.list.mu.Lock()
	old := n.list.idle
	if n.list.closed {
		old = lc
	} else {
		n.list.idle = lc
	}
	n.list.mu.Unlock()
	if old != nil {
		_ = old.c.Close()
	}
}

// closeList closes the idle listing connection; later ones are closed when
// put back.
func (n *node) closeList() {
	n.list.mu.Lock()
	old := n.list.idle
	n.list.idle, n.list.closed = nil, true
	n.list.mu.Unlock()
	if old != nil {
		_ = old.c.Close()
	}
}

// dialList connects to n as the transport does (wire.Dial with the node's
// wire.Master), within timeout.
func (n *node) dialList(ctx context.Context, timeout time.Duration) (*listConn, error) {
	c, err := wire.Dial(ctx, n.master, time.Now().Add(timeout))
	if err != nil {
		return nil, err
	}
	lc := &listConn{c: c}
	if err := lc.readRunID(ctx, timeout); err != nil {
		_ = c.Close()
		return nil, err
	}
	return lc, nil
}

// infoServerCap bounds the INFO server reply a listing connection reads (about
// 1.5 KB from Redis 7).
const infoServerCap = 64 << 10

// readRunID reads the master's run_id (INFO server) into lc.runID: a Scanner
// pass that goes on over a new connection to a master that restarted starts
// again, since a SCAN cursor means nothing to another process. A master that
// refuses INFO (an ACL without +info) leaves runID empty: its restarts go
// unnoticed, as before.
func (lc *listConn) readRunID(ctx context.Context, timeout time.Duration) error {
	lc.out = wire.AppendCommand(lc.out, "INFO", "server")
	return lc.roundTrip(ctx, timeout, func() error {
		b, kept, err := lc.c.Bulk(nil, infoServerCap)
		var re wire.ErrorReply
		switch {
		case errors.As(err, &re):
			return nil
		case err != nil:
			return err
		case kept:
			lc.runID = wire.InfoField(string(b), "run_id")
		}
		return nil
	})
}

// roundTrip writes the commands buffered in out, and runs read (which reads
// their replies) under the listing's per-call deadline, ended at once by ctx.
func (lc *listConn) roundTrip(ctx context.Context, timeout time.Duration, read func() error) error {
	stop := lc.c.Bind(ctx, time.Now().Add(timeout))
	defer stop()
	err := lc.c.Send(lc.out)
	lc.out = lc.out[:0]
	if err != nil {
		return err
	}
	return read()
}

// dbSize asks DBSIZE.
func (lc *listConn) dbSize(ctx context.Context, timeout time.Duration) (size int64, err error) {
	lc.out = wire.AppendCommand(lc.out, "DBSIZE")
	err = lc.roundTrip(ctx, timeout, func() error {
		size, err = lc.c.Header(':')
		return err
	})
	return size, err
}

// The commands that read one key of a batch, around its name.
var (
	getrangeHead = []byte("*4\r\n$8\r\nGETRANGE\r\n")
	getrangeTail = []byte("$1\r\n0\r\n$" + strconv.Itoa(len(strconv.Itoa(keyspace.ValueReadCap-1))) + "\r\n" + strconv.Itoa(keyspace.ValueReadCap-1) + "\r\n")
	pttlHead     = []byte("*2\r\n$4\r\nPTTL\r\n")
)

// appendReadKey appends GETRANGE key 0 ValueReadCap-1 and PTTL key, as
// wire.AppendCommand would.
func appendReadKey(b []byte, key string) []byte {
	b = wire.AppendBulk(append(b, getrangeHead...), key)
	b = append(b, getrangeTail...)
	return wire.AppendBulk(append(b, pttlHead...), key)
}
