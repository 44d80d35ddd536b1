package quorum

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync/atomic"
	"time"

	"github.com/redlock/redlock/internal/keyspace"
	"github.com/redlock/redlock/internal/wire"
)

// The connection of the loss watch to one master (track.go): dialled and opened
// as the transport's connections are (wire.Dial), switched to
// RESP3 with HELLO 3 and CLIENT TRACKING ON, so that the master pushes an
// invalidation on this very connection when a key it read changes. Another
// client cannot forge those pushes (unlike REDIRECT to __redis__:invalidate, a
// channel anyone may PUBLISH to). A master that refuses either command is read
// again periodically instead. Every reply and push is read by wire.Conn.Value,
// the one RESP parser of the project; this file only decides what they mean.

// trackValueCap bounds the values the watch reads: longer ones are read past
// and count as another holder's (a lock value is never longer: maxValueLen).
const trackValueCap = keyspace.ValueReadCap

// trackConn is the loss watch's connection to one master: a wire.Conn read as
// RESP3 (wire.Conn.Value: replies and pushes), and the commands being written.
type trackConn struct {
	wc  *wire.Conn
	out []byte
	// asked counts the commands sent whose replies are still to come: a reply
	// beyond them answers nothing the watch asked (the connection is out of
	// step, or not the master's).
	asked atomic.Int64
}

// errTrackUnasked: a reply came on a tracking connection with no command
// waiting for it.
var errTrackUnasked = errors.New("a reply to no command sent")

// send writes the n commands appended to out, failing once deadline passes: a
// write deadline only, the reading of pushes in another goroutine is left as it
// is. Their replies are counted as asked for before the write.
func (lc *trackConn) send(n int, deadline time.Time) error {
	lc.asked.Add(int64(n))
	err := lc.wc.SendBy(lc.out, deadline)
	lc.out = lc.out[:0]
	return err
}

// ask sends one command of the handshake and reads its reply (an error reply
// is a value of type '-').
func (lc *trackConn) ask(args ...string) (wire.Value, error) {
	lc.out = wire.AppendCommand(lc.out[:0], args...)
	err := lc.wc.Send(lc.out)
	lc.out = lc.out[:0]
	if err != nil {
		return wire.Value{}, err
	}
	return lc.wc.Value(trackValueCap)
}

// dialTracker dials n's tracking connection as the transport dials and opens
// its own (wire.Dial: the node's Dialer, TLS, AUTH, SELECT); tracking reports
// whether the master accepted HELLO 3 and CLIENT TRACKING ON (else the
// connection is RESP2 or untracked, and the watch polls through it).
func dialTracker(ctx context.Context, n *node, timeout time.Duration) (lc *trackConn, tracking bool, err error) {
	wc, err := wire.Dial(ctx, n.master, time.Now().Add(timeout))
	if err != nil {
		return nil, false, err
	}
	lc = &trackConn{wc: wc}
	stop := wc.Bind(ctx, time.Now().Add(timeout))
	v, err := lc.ask("HELLO", "3")
	if err == nil && v.Type != '-' {
		v, err = lc.ask("CLIENT", "TRACKING", "ON")
		tracking = err == nil && v.Type == '+'
	}
	if err == nil && v.Type == '-' && transient(v.Str) {
		// Busy or loading for now: refused now, not for the connection's
		// life. Dial again rather than poll through it.
		err = fmt.Errorf("%s: %w", n.name, errors.New(v.Str))
	}
	stop()
	if err != nil {
		_ = wc.Close()
		return nil, false, err
	}
	// No deadline from now on (serve sets one per write; its reads wait for
	// pushes), unless ctx is done already.
	wc.Extend(ctx, time.Time{})
	return lc, tracking, nil
}

// transient reports whether a master's error reply refuses for now only (a
// script running past the busy threshold, a data set loading): the same command
// is accepted once it ends.
func transient(msg string) bool {
	return strings.HasPrefix(msg, "BUSY") || strings.HasPrefix(msg, "LOADING")
}

// invalidated is what one invalidation push names: keys, keys longer than
// trackValueCap (read past, so unnamed), or every key (all).
type invalidated struct {
	keys []string
	long bool // some key was longer than trackValueCap
	all  bool // FLUSHALL, FLUSHDB, a tracking table full, or a new connection
}

// invalidation returns what a RESP3 invalidate push names, all for a null one
// (FLUSHALL, FLUSHDB, a tracking table full); ok is false for any other push or
// reply. A key longer than trackValueCap was read past: long says so, and the
// tracker reads again every watched key that long (a key prefix and a name are
// not bounded so that their sum stays under the cap).
func invalidation(v wire.Value) (inv invalidated, ok bool) {
	if v.Type != '>' || len(v.Elems) != 2 || v.Elems[0].Str != "invalidate" {
		return inv, false
	}
	if v.Elems[1].Null {
		inv.all = true
		return inv, true
	}
	for _, k := range v.Elems[1].Elems {
		if k.Long {
			inv.long = true
			continue
		}
		inv.keys = append(inv.keys, k.Str)
	}
	return inv, true
}
