// Package local starts throwaway Redis masters on loopback addresses for `redlock
// up` and `redlock demo`: redis-server processes when the binary is installed,
// in-process embedded servers (miniredis) otherwise or on request.
//
// The masters keep no data (no RDB, no AOF) and listen on loopback only. They are
// for trying the tool and for tests, never for real locks.
package local

import (
	"bufio"
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/alicebob/miniredis/v2"
)

// Spec is one master to start. Addr is host:port on a loopback address; port 0
// picks a free port.
type Spec struct {
	Name string
	Addr string
}

// Options for Start.
type Options struct {
	// Embedded starts in-process servers even when redis-server is installed.
	Embedded bool
	// RedisServer is the redis-server binary; found on the usual paths when empty.
	RedisServer string
}

// Master is one started master.
type Master struct {
	Name string
	// Addr is the address it listens on ("127.0.0.1:7001").
	Addr string
	// Kind is "redis-server" or "embedded".
	Kind string
	// PID is the redis-server process id; 0 for embedded servers.
	PID int

	stop   func()
	exited chan struct{} // closed when the redis-server process ended; nil for embedded
	log    string        // the redis-server log file
}

// Exited is closed when the master's redis-server process ends (it crashed or was
// killed); it is nil, and never fires, for embedded servers.
func (m *Master) Exited() <-chan struct{} { return m.exited }

// LogTail returns the last lines of the master's log ("" for embedded servers).
func (m *Master) LogTail() string {
	if m.log == "" {
		return ""
	}
	return LogTail(m.log, 3)
}

// Set is the masters started together. Close stops them all.
type Set struct {
	Masters []*Master
	// Embedded reports whether the masters are in-process servers.
	Embedded bool
	dir      string
	bin      string
	once     sync.Once
}

// ErrPortInUse: a master's port is taken by another process (often another `up`).
var ErrPortInUse = errors.New("port in use")

// Restart starts master i again on the same address, after its process ended. The
// new process has forgotten every lock (no persistence). Embedded masters cannot
// end, so they are never restarted.
func (s *Set) Restart(ctx context.Context, i int) error {
	old := s.Masters[i]
	if s.Embedded {
		return fmt.Errorf("master %s: embedded masters are not restarted", old.Name)
	}
	m, err := startProcess(ctx, s.bin, filepath.Join(s.dir, old.Name), Spec{Name: old.Name, Addr: old.Addr})
	if err != nil {
		return fmt.Errorf("master %s: %w", old.Name, err)
	}
	s.Masters[i] = m
	return nil
}

// ErrNotLoopback: an address is not on a loopback interface.
var ErrNotLoopback = errors.New("not a loopback address")

// CheckLoopback returns an error matching ErrNotLoopback unless addr's host is a
// loopback IP or "localhost".
func CheckLoopback(addr string) error {
	host, port, err := net.SplitHostPort(addr)
	if err != nil {
		return fmt.Errorf("address %q: %w", addr, err)
	}
	if _, err := strconv.ParseUint(port, 10, 16); err != nil {
		return fmt.Errorf("address %q: bad port", addr)
	}
	if host == "localhost" {
		return nil
	}
	if ip := net.ParseIP(host); ip != nil && ip.IsLoopback() {
		return nil
	}
	return fmt.Errorf("address %s: %w", addr, ErrNotLoopback)
}

// FindRedisServer returns the path of redis-server, or an error when it is not installed.
func FindRedisServer() (string, error) {
	if p := os.Getenv("REDIS_SERVER"); p != "" {
		return p, nil
	}
	for _, p := range []string{"/usr/bin/redis-server", "/usr/local/bin/redis-server"} {
		if st, err := os.Stat(p); err == nil && !st.IsDir() {
			return p, nil
		}
	}
	p, err := exec.LookPath("redis-server")
	if err != nil {
		return "", fmt.Errorf("redis-server not installed: %w", err)
	}
	return p, nil
}

// Start starts one master per spec, all redis-server processes or all embedded.
// It refuses non-loopback addresses, naming the master. On error it stops what it
// started. The caller must Close the set.
func Start(ctx context.Context, specs []Spec, opts Options) (*Set, error) {
	for _, s := range specs {
		if err := CheckLoopback(s.Addr); err != nil {
			return nil, fmt.Errorf("master %s: %w; only loopback masters can be started locally", s.Name, err)
		}
	}
	bin := opts.RedisServer
	embedded := opts.Embedded
	if !embedded && bin == "" {
		p, err := FindRedisServer()
		if err != nil {
			embedded = true
		} else {
			bin = p
		}
	}
	set := &Set{Embedded: embedded, bin: bin}
	if !embedded {
		dir, err := os.MkdirTemp("", "redlock-local-")
		if err != nil {
			return nil, fmt.Errorf("data directory: %w", err)
		}
		set.dir = dir
	}
	for _, s := range specs {
		var m *Master
		var err error
		if embedded {
			m, err = startEmbedded(s)
		} else {
			m, err = startProcess(ctx, bin, filepath.Join(set.dir, s.Name), s)
		}
		if err != nil {
			set.Close()
			return nil, fmt.Errorf("master %s: %w", s.Name, err)
		}
		set.Masters = append(set.Masters, m)
	}
	return set, nil
}

// Close stops every master and removes their data directories. It is idempotent.
func (s *Set) Close() {
	s.once.Do(func() {
		var wg sync.WaitGroup
		for _, m := range s.Masters {
			wg.Add(1)
			go func() { defer wg.Done(); m.stop() }()
		}
		wg.Wait()
		if s.dir != "" {
			_ = os.RemoveAll(s.dir)
		}
	})
}

// Addrs returns the masters' addresses in order.
func (s *Set) Addrs() []string {
	out := make([]string, len(s.Masters))
	for i, m := range s.Masters {
		out[i] = m.Addr
	}
	return out
}

func startEmbedded(s Spec) (*Master, error) {
	srv := miniredis.NewMiniRedis()
	// miniredis does not expire keys by itself: let TTLs follow the wall clock.
	srv.ClockTTL(true)
	if err := srv.StartAddr(s.Addr); err != nil {
		return nil, fmt.Errorf("embedded server on %s: %w", s.Addr, err)
	}
	return &Master{Name: s.Name, Addr: srv.Addr(), Kind: "embedded", stop: srv.Close}, nil
}

func startProcess(ctx context.Context, bin, dir string, s Spec) (*Master, error) {
	host, port, _ := net.SplitHostPort(s.Addr)
	if host == "localhost" {
		host = "127.0.0.1"
	}
	if port != "0" {
		// Another server on the port would answer our PING: check first, so that a
		// second `up` fails instead of reporting masters it never started.
		ln, err := net.Listen("tcp", net.JoinHostPort(host, port))
		if err != nil {
			return nil, fmt.Errorf("%w: %s (another redlock up, or another redis-server?)", ErrPortInUse, net.JoinHostPort(host, port))
		}
		_ = ln.Close()
	}
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return nil, err
	}
	var lastErr error
	for try := 0; try < 5; try++ {
		p := port
		if p == "0" {
			free, err := freePort(host)
			if err != nil {
				return nil, err
			}
			p = strconv.Itoa(free)
		}
		m, err := runServer(ctx, bin, dir, s.Name, net.JoinHostPort(host, p))
		if err == nil {
			return m, nil
		}
		lastErr = err
		if port != "0" {
			break
		}
	}
	return nil, lastErr
}

func runServer(ctx context.Context, bin, dir, name, addr string) (*Master, error) {
	host, port, _ := net.SplitHostPort(addr)
	logFile := filepath.Join(dir, "redis.log")
	cmd := exec.Command(bin,
		"--port", port, "--bind", host, "--save", "", "--appendonly", "no", "--dir", dir,
		"--daemonize", "no", "--protected-mode", "no", "--loglevel", "warning", "--logfile", logFile)
	// The masters die with this process, even on SIGKILL (on Linux), and a Ctrl-C
	// at the terminal reaches this process only, which stops them in order.
	cmd.SysProcAttr = ownGroup()
	if err := cmd.Start(); err != nil {
		return nil, fmt.Errorf("%s: %w", bin, err)
	}
	exited := make(chan struct{})
	go func() { _ = cmd.Wait(); close(exited) }()
	stop := func() {
		_ = cmd.Process.Signal(syscall.SIGTERM)
		select {
		case <-exited:
		case <-time.After(3 * time.Second):
			_ = cmd.Process.Kill()
			<-exited
		}
	}
	deadline := time.Now().Add(10 * time.Second)
	for {
		select {
		case <-exited:
			return nil, fmt.Errorf("redis-server on %s exited: %s", addr, LogTail(logFile, 3))
		case <-ctx.Done():
			stop()
			return nil, ctx.Err()
		default:
		}
		if Ping(addr, nil) == nil {
			return &Master{Name: name, Addr: addr, Kind: "redis-server", PID: cmd.Process.Pid, stop: stop, exited: exited, log: logFile}, nil
		}
		if time.Now().After(deadline) {
			stop()
			return nil, fmt.Errorf("redis-server on %s did not answer PING within 10s: %s", addr, LogTail(logFile, 3))
		}
		time.Sleep(10 * time.Millisecond)
	}
}

func freePort(host string) (int, error) {
	l, err := net.Listen("tcp", net.JoinHostPort(host, "0"))
	if err != nil {
		return 0, fmt.Errorf("free port on %s: %w", host, err)
	}
	defer l.Close()
	return l.Addr().(*net.TCPAddr).Port, nil
}

// Ping sends PING over a fresh connection to addr (over TLS when cfg is not nil)
// and expects +PONG within 500ms.
func Ping(addr string, cfg *tls.Config) error {
	d := &net.Dialer{Timeout: 200 * time.Millisecond}
	var c net.Conn
	var err error
	if cfg != nil {
		c, err = tls.DialWithDialer(d, "tcp", addr, cfg)
	} else {
		c, err = d.Dial("tcp", addr)
	}
	if err != nil {
		return err
	}
	defer c.Close()
	_ = c.SetDeadline(time.Now().Add(500 * time.Millisecond))
	if _, err := c.Write([]byte("PING\r\n")); err != nil {
		return err
	}
	line, err := bufio.NewReader(c).ReadString('\n')
	if err != nil {
		return err
	}
	if !strings.HasPrefix(line, "+PONG") {
		return fmt.Errorf("PING answered %q", strings.TrimSpace(line))
	}
	return nil
}

// LogTail returns the last n lines of a log file joined by " | ", for error messages.
func LogTail(path string, n int) string {
	b, _ := os.ReadFile(path)
	lines := strings.Split(strings.TrimSpace(string(b)), "\n")
	if len(lines) > n {
		lines = lines[len(lines)-n:]
	}
	return strings.Join(lines, " | ")
}
