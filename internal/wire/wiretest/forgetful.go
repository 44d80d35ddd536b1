package wiretest

import (
	"bufio"
	"context"
	"fmt"
	"io"
	"net"
	"strconv"
	"sync"
	"time"

	"github.com/redlock/redlock/internal/wire"
)

// Forgetful is a deliberately broken pipelined wire.Rounder, for mutation tests: one
// connection per master shared by every round, whose rounds, when they give up,
// take their commands out of the connection's queue although they were written.
// The master still answers them, and each late reply is then read as the next
// command's: the misread that package wire's abandoned state prevents. The attack
// tests must catch it.
type Forgetful struct {
	Dial    []func(ctx context.Context) (net.Conn, error)
	Timeout time.Duration

	mu    sync.Mutex
	conns []*forgetfulConn
}

type forgetfulConn struct {
	c       net.Conn
	rd      *bufio.Reader
	mu      sync.Mutex
	pending []chan wire.Result
}

var _ wire.Rounder = (*Forgetful)(nil)

// Round implements wire.Rounder, wrongly.
func (f *Forgetful) Round(ctx context.Context, cmd *wire.Cmd, out []wire.Result) {
	t0 := time.Now()
	ctx, cancel := context.WithTimeout(ctx, f.Timeout)
	defer cancel()
	chs := make([]chan wire.Result, len(f.Dial))
	fcs := make([]*forgetfulConn, len(f.Dial))
	for i := range f.Dial {
		if cmd.Only != nil && !cmd.Only[i] {
			out[i] = wire.Result{Err: wire.ErrNotAsked}
			continue
		}
		fc, err := f.conn(ctx, i)
		if err != nil {
			out[i] = wire.Result{Err: err}
			continue
		}
		ch := make(chan wire.Result, 1)
		fc.mu.Lock()
		fc.pending = append(fc.pending, ch)
		_, err = fc.c.Write(encode(cmd))
		fc.mu.Unlock()
		if err != nil {
			f.drop(i, fc)
			out[i] = wire.Result{Err: err}
			continue
		}
		chs[i], fcs[i] = ch, fc
	}
	for i, ch := range chs {
		if ch == nil {
			continue
		}
		select {
		case r := <-ch:
			r.Latency = time.Since(t0)
			out[i] = r
		case <-ctx.Done():
			// The bug: forget the command although it was written.
			fc := fcs[i]
			fc.mu.Lock()
			for j, p := range fc.pending {
				if p == ch {
					fc.pending = append(fc.pending[:j], fc.pending[j+1:]...)
					break
				}
			}
			fc.mu.Unlock()
			out[i] = wire.Result{Err: ctx.Err(), Latency: time.Since(t0)}
		}
	}
}

// Close closes the connections.
func (f *Forgetful) Close() error {
	f.mu.Lock()
	defer f.mu.Unlock()
	for _, fc := range f.conns {
		if fc != nil {
			_ = fc.c.Close()
		}
	}
	return nil
}

func (f *Forgetful) conn(ctx context.Context, i int) (*forgetfulConn, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.conns == nil {
		f.conns = make([]*forgetfulConn, len(f.Dial))
	}
	if fc := f.conns[i]; fc != nil {
		return fc, nil
	}
	c, err := f.Dial[i](ctx)
	if err != nil {
		return nil, err
	}
	fc := &forgetfulConn{c: c, rd: bufio.NewReader(c)}
	f.conns[i] = fc
	go f.read(i, fc)
	return fc, nil
}

func (f *Forgetful) drop(i int, fc *forgetfulConn) {
	f.mu.Lock()
	if f.conns[i] == fc {
		f.conns[i] = nil
	}
	f.mu.Unlock()
	_ = fc.c.Close()
}

// read hands each reply to the oldest pending command.
func (f *Forgetful) read(i int, fc *forgetfulConn) {
	for {
		r, err := readReply(fc.rd)
		fc.mu.Lock()
		var ch chan wire.Result
		if len(fc.pending) > 0 {
			ch, fc.pending = fc.pending[0], fc.pending[1:]
		}
		fc.mu.Unlock()
		if err != nil {
			f.drop(i, fc)
			fc.mu.Lock()
			for _, p := range fc.pending {
				p <- wire.Result{Err: err}
			}
			fc.pending = nil
			fc.mu.Unlock()
			if ch != nil {
				ch <- wire.Result{Err: err}
			}
			return
		}
		if ch != nil {
			ch <- r
		}
	}
}

func encode(cmd *wire.Cmd) []byte {
	var args []string
	if cmd.Script != nil {
		args = append([]string{"EVAL", cmd.Script.Source(), strconv.Itoa(len(cmd.Keys))}, cmd.Keys...)
		args = append(args, cmd.Args...)
	} else {
		args = cmd.Args
	}
	b := fmt.Appendf(nil, "*%d\r\n", len(args))
	for _, a := range args {
		b = fmt.Appendf(b, "$%d\r\n%s\r\n", len(a), a)
	}
	return b
}

func readReply(rd *bufio.Reader) (wire.Result, error) {
	line, err := rd.ReadString('\n')
	if err != nil {
		return wire.Result{}, err
	}
	if len(line) < 3 {
		return wire.Result{}, wire.ErrProtocol
	}
	typ, body := line[0], line[1:len(line)-2]
	switch typ {
	case '+':
		return wire.Result{Type: '+', Str: body}, nil
	case '-':
		return wire.Result{Type: '-', Str: body, Err: wire.ErrorReply(body)}, nil
	case ':':
		n, err := strconv.ParseInt(body, 10, 64)
		return wire.Result{Type: ':', Int: n}, err
	case '$':
		n, err := strconv.ParseInt(body, 10, 64)
		if err != nil || n < 0 {
			return wire.Result{Type: '$', Int: -1}, err
		}
		buf := make([]byte, n+2)
		if _, err := io.ReadFull(rd, buf); err != nil {
			return wire.Result{}, err
		}
		return wire.Result{Type: '$', Str: string(buf[:n]), Int: n}, nil
	case '*':
		n, err := strconv.ParseInt(body, 10, 64)
		if err != nil || n < 0 {
			return wire.Result{Type: '*', Int: -1}, err
		}
		r := wire.Result{Type: '*', Int: n, Array: make([]wire.Result, 0, min(n, 64))}
		for range n {
			e, err := readReply(rd)
			if err != nil {
				return wire.Result{}, err
			}
			r.Array = append(r.Array, e)
		}
		return r, nil
	}
	return wire.Result{}, wire.ErrProtocol
}
