package wire

import (
	"context"
	"crypto/tls"
	"errors"
	"net"
	"sync/atomic"
	"time"
)

// Master is one Redis master.
type Master struct {
	Addr     string
	Username string
	Password string
	DB       int
	// TLS, when set, is the TLS configuration of the connection (its ServerName
	// set: the caller knows the name the master answers to).
	TLS *tls.Config
	// Dialer, when set, replaces the TCP dialer.
	Dialer func(ctx context.Context, network, addr string) (net.Conn, error)
}

// Config configures the pipes of a set of masters.
type Config struct {
	// Timeout bounds each command on each master, dialling included, and is how
	// long the oldest command on a connection may stay unanswered before the
	// master is taken as hung and the connection dropped.
	Timeout time.Duration
	// ReadReplication makes every new connection read INFO replication besides
	// INFO server, and fail when either cannot be read (with InfoError's error).
	// Without it, an INFO server refused by the master is no failure: the master
	// then gets SET NX without GET.
	ReadReplication bool
	// OnInfo, when set, gets INFO server (and INFO replication, when read) of
	// every new connection of master i, before anything is written on it.
	OnInfo func(i int, server, repl string)
	// InfoError, when set, makes the error of a failed INFO ("INFO server", "INFO
	// replication") of master i; the connection fails with what it returns.
	InfoError func(i int, what string, err error) error
	// Observe, when set, gets the connections' events. It is called from the
	// pipes' goroutines and must return quickly.
	Observe func(Event)
	// Submitted, when set, is called by a round right after it handed its command
	// to master i's pipe (written it, on an idle connection), in the order the
	// masters get it (Round). For tests that hold a round between two masters.
	Submitted func(i int, cmd *Cmd)
}

// EventKind says what an Event reports.
type EventKind int

const (
	// EventDropped: a connection to master Master was closed (Err says why: a
	// hung master, a reply out of step, a reset, an idle connection the master
	// closed); the commands in flight on it failed, and the next is sent on a new
	// connection.
	EventDropped EventKind = iota + 1
	// EventLateReply: a reply came for a command its round had given up, and was
	// read and thrown away (the connection stays in step).
	EventLateReply
)

// Event is something that happened on a master's connection.
type Event struct {
	Kind   EventKind
	Master int
	Err    error
}

// Pipes is the pipelined transport over a fixed set of masters: one connection
// per master, shared by every round in flight. It implements Rounder and is safe
// for concurrent use.
type Pipes struct {
	cfg     Config
	masters []Master
	pipes   []*pipe
	rounds  rounds
	// active counts the rounds that submitted their commands and have not ended.
	// A wave's commands come from rounds still running, so a pump whose queue
	// holds a command of every active round has nothing more to wait for
	// (pump.go, tail).
	active atomic.Int32
	life   context.Context
	stop   context.CancelFunc // ends life: Close
}

// New returns the pipes of masters. It does no I/O: each connection is dialled
// when its first command is sent.
func New(masters []Master, cfg Config) *Pipes {
	ps := &Pipes{cfg: cfg, masters: masters}
	ps.life, ps.stop = context.WithCancel(context.Background())
	ps.rounds.free = make(chan *round, 256)
	for i := range masters {
		ps.pipes = append(ps.pipes, newPipe(ps, i))
	}
	return ps
}

// Close fails every command queued or in flight, closes the connections and waits
// for the pipes' goroutines to end.
func (ps *Pipes) Close() error {
	ps.stop()
	for _, p := range ps.pipes {
		p.close()
	}
	return nil
}

func (ps *Pipes) observe(e Event) {
	if ps.cfg.Observe != nil {
		ps.cfg.Observe(e)
	}
}

// ErrClosed is the result of commands sent after, or in flight at, Close.
var ErrClosed = errors.New("closed")
