package wire_test

import (
	"bufio"
	"fmt"
	"io"
	"net"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"
)

// fakeMaster is a RESP2 server on a free loopback port that answers INFO with a
// Redis 7 banner and every other command with what answer returns (raw RESP, any
// number of replies, garbage included; "close" in place of a part closes the
// connection): a master that misbehaves on purpose. It logs every command it
// receives, in order.
type fakeMaster struct {
	ln net.Listener
	// answer is given the connection's number, the command, and whether it is the
	// last the master has received (nothing more buffered: the end of a batch).
	answer func(conn int, args []string, last bool) string
	// wrote, when set, receives once each answer (INFO's excepted) is written whole.
	wrote chan struct{}

	mu    sync.Mutex
	log   [][]string
	conns []net.Conn
	wg    sync.WaitGroup
}

func newFakeMaster(t *testing.T, answer func(conn int, args []string, last bool) string) *fakeMaster {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	f := &fakeMaster{ln: ln, answer: answer}
	f.wg.Go(f.serve)
	t.Cleanup(f.close)
	return f
}

func (f *fakeMaster) addr() string { return f.ln.Addr().String() }

func (f *fakeMaster) close() {
	_ = f.ln.Close()
	f.mu.Lock()
	for _, c := range f.conns {
		_ = c.Close()
	}
	f.mu.Unlock()
	f.wg.Wait()
}

// received returns the commands received so far (INFO excluded).
func (f *fakeMaster) received() [][]string {
	f.mu.Lock()
	defer f.mu.Unlock()
	return append([][]string(nil), f.log...)
}

func (f *fakeMaster) serve() {
	for n := 0; ; n++ {
		c, err := f.ln.Accept()
		if err != nil {
			return
		}
		f.mu.Lock()
		f.conns = append(f.conns, c)
		f.mu.Unlock()
		f.wg.Go(func() { f.handle(n, c) })
	}
}

func (f *fakeMaster) handle(n int, c net.Conn) {
	defer c.Close()
	rd := bufio.NewReader(c)
	for {
		args, err := readCommand(rd)
		if err != nil {
			return
		}
		var out string
		if args[0] == "INFO" {
			body := "# Server\r\nredis_version:7.0.15\r\n"
			out = "$" + strconv.Itoa(len(body)) + "\r\n" + body + "\r\n"
		} else {
			f.mu.Lock()
			f.log = append(f.log, args)
			f.mu.Unlock()
			out = f.answer(n, args, rd.Buffered() == 0)
		}
		for i, part := range strings.Split(out, split) {
			if i > 0 {
				time.Sleep(time.Millisecond)
			}
			if part == "close" {
				return
			}
			if _, err := io.WriteString(c, part); err != nil {
				return
			}
		}
		if f.wrote != nil && args[0] != "INFO" {
			f.wrote <- struct{}{}
		}
	}
}

// readCommand reads one RESP array of bulk strings.
func readCommand(rd *bufio.Reader) ([]string, error) {
	line, err := rd.ReadString('\n')
	if err != nil {
		return nil, err
	}
	var n int
	if _, err := fmt.Sscanf(line, "*%d\r\n", &n); err != nil || n <= 0 {
		return nil, fmt.Errorf("bad array %q", line)
	}
	args := make([]string, n)
	for i := range args {
		line, err := rd.ReadString('\n')
		if err != nil {
			return nil, err
		}
		var l int
		if _, err := fmt.Sscanf(line, "$%d\r\n", &l); err != nil || l < 0 {
			return nil, fmt.Errorf("bad bulk %q", line)
		}
		b := make([]byte, l+2)
		if _, err := io.ReadFull(rd, b); err != nil {
			return nil, err
		}
		args[i] = string(b[:l])
	}
	return args, nil
}

// split in an answer splits it in two writes, a millisecond apart.
const split = "\x00split\x00"

// bulk is s as a RESP bulk string.
func bulk(s string) string { return "$" + strconv.Itoa(len(s)) + "\r\n" + s + "\r\n" }
