//go:build unix

// Package redistest starts real redis-server processes on free loopback ports for
// tests, and injects process faults into them: SIGKILL, restart (same port, with or
// without data), SIGSTOP and SIGCONT. Every server is stopped in t.Cleanup, also
// when the test fails.
//
// Tests fail (never skip) when redis-server cannot be found: the README's test
// command installs it. REDIS_SERVER overrides the binary's path.
package redistest

import (
	"context"
	"crypto/tls"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/redlock/redlock/internal/local"
)

// Binary returns the absolute path of redis-server, or an error that says how to
// install it.
func Binary() (string, error) {
	p, err := local.FindRedisServer()
	if err != nil {
		return "", fmt.Errorf("%w (install it: apt-get install redis-server, or run the README's test command)", err)
	}
	return filepath.Abs(p)
}

// Server is one redis-server process on 127.0.0.1.
type Server struct {
	t    testing.TB
	bin  string
	Name string
	Port int
	Dir  string
	args []string
	// TLS is set when the server was started with Options.TLS: it then accepts
	// TLS connections only, on Port.
	TLS    *TLSFiles
	tlsCfg *tls.Config

	mu  sync.Mutex
	cmd *exec.Cmd
}

// Addr returns "127.0.0.1:port".
func (s *Server) Addr() string { return "127.0.0.1:" + strconv.Itoa(s.Port) }

// Options for Start.
type Options struct {
	// Args are extra redis-server arguments ("--appendonly", "yes", ...). By default a
	// server runs with --save "" --appendonly no and --enable-debug-command local.
	Args []string
	// TLS starts TLS-only servers (--port 0, --tls-port, --tls-auth-clients no) with a
	// CA and a server certificate for 127.0.0.1 and "localhost" generated for the
	// test; Server.TLS names the files. Start gives all its servers the same CA.
	TLS bool

	tlsFiles *TLSFiles // shared by Start's servers
}

// Cluster is a set of servers started together.
type Cluster struct {
	Servers []*Server
}

// Addrs returns the servers' addresses in order.
func (c *Cluster) Addrs() []string {
	out := make([]string, len(c.Servers))
	for i, s := range c.Servers {
		out[i] = s.Addr()
	}
	return out
}

// Start starts n servers named "a", "b", ... and registers their stop in t.Cleanup.
func Start(t testing.TB, n int, opts Options) *Cluster {
	t.Helper()
	c := &Cluster{}
	if opts.TLS && opts.tlsFiles == nil {
		f, err := NewTLSFiles(t.TempDir())
		if err != nil {
			t.Fatalf("redistest: TLS certificates: %v", err)
		}
		opts.tlsFiles = f
	}
	for i := 0; i < n; i++ {
		c.Servers = append(c.Servers, StartOne(t, string(rune('a'+i)), opts))
	}
	return c
}

// StartOne starts one server on a free loopback port.
func StartOne(t testing.TB, name string, opts Options) *Server {
	t.Helper()
	bin, err := Binary()
	if err != nil {
		t.Fatal(err)
	}
	s := &Server{t: t, bin: bin, Name: name, Dir: t.TempDir(), args: opts.Args}
	if opts.TLS {
		f := opts.tlsFiles
		if f == nil {
			if f, err = NewTLSFiles(t.TempDir()); err != nil {
				t.Fatalf("redistest: TLS certificates: %v", err)
			}
		}
		if err := s.setTLS(f); err != nil {
			t.Fatalf("redistest: TLS certificates: %v", err)
		}
	}
	t.Cleanup(s.Kill)
	var lastErr error
	for try := 0; try < 5; try++ {
		s.Port = FreePort(t)
		if lastErr = s.start(); lastErr == nil {
			return s
		}
	}
	t.Fatalf("redistest: start %s: %v", name, lastErr)
	return nil
}

// StartDetached starts one server outside any test (for TestMain, where examples
// need masters). The caller must Kill it; Restart and Client need a server from
// Start or StartOne.
func StartDetached(name string, opts Options) (*Server, error) {
	bin, err := Binary()
	if err != nil {
		return nil, err
	}
	dir, err := os.MkdirTemp("", "redistest-")
	if err != nil {
		return nil, err
	}
	s := &Server{bin: bin, Name: name, Dir: dir, args: opts.Args}
	if opts.TLS {
		// The certificates go in a subdirectory: only Restart (not available here)
		// empties Dir, and Kill removes Dir with them.
		tdir := filepath.Join(dir, "tls")
		if err := os.Mkdir(tdir, 0o700); err != nil {
			return nil, err
		}
		f, err := NewTLSFiles(tdir)
		if err == nil {
			err = s.setTLS(f)
		}
		if err != nil {
			_ = os.RemoveAll(dir)
			return nil, err
		}
	}
	var lastErr error
	for try := 0; try < 5; try++ {
		l, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			return nil, err
		}
		s.Port = l.Addr().(*net.TCPAddr).Port
		_ = l.Close()
		if lastErr = s.start(); lastErr == nil {
			return s, nil
		}
	}
	return nil, lastErr
}

// FreePort returns a port on 127.0.0.1 that was free a moment ago.
func FreePort(t testing.TB) int {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatalf("redistest: free port: %v", err)
	}
	defer l.Close()
	return l.Addr().(*net.TCPAddr).Port
}

// setTLS makes s a TLS-only server with the certificates f.
func (s *Server) setTLS(f *TLSFiles) error {
	cfg, err := f.ClientConfig()
	if err != nil {
		return err
	}
	s.TLS, s.tlsCfg = f, cfg
	return nil
}

// TLSConfig returns a new client TLS configuration for a server started with
// Options.TLS (trusting its CA, expecting its server name), nil for a plain server.
func (s *Server) TLSConfig() *tls.Config {
	if s.tlsCfg == nil {
		return nil
	}
	return s.tlsCfg.Clone()
}

func (s *Server) start() error {
	port := []string{"--port", strconv.Itoa(s.Port)}
	if s.TLS != nil {
		port = s.TLS.tlsArgs(strconv.Itoa(s.Port))
	}
	args := append(port, "--bind", "127.0.0.1",
		"--save", "", "--appendonly", "no", "--dir", s.Dir,
		"--enable-debug-command", "local", "--daemonize", "no",
		"--protected-mode", "no", "--loglevel", "warning", "--logfile", filepath.Join(s.Dir, "redis.log"),
	)
	args = append(args, s.args...)
	cmd := exec.Command(s.bin, args...)
	cmd.SysProcAttr = local.DieWithParent(&syscall.SysProcAttr{})
	if err := cmd.Start(); err != nil {
		return fmt.Errorf("%s: %w", s.bin, err)
	}
	s.mu.Lock()
	s.cmd = cmd
	s.mu.Unlock()
	exited := make(chan error, 1)
	go func() { exited <- cmd.Wait() }()
	deadline := time.Now().Add(10 * time.Second)
	for time.Now().Before(deadline) {
		select {
		case err := <-exited:
			return fmt.Errorf("redis-server on port %d exited: %v: %s", s.Port, err, s.logTail())
		default:
		}
		if s.ping() == nil {
			if !s.ownsPort(cmd.Process.Pid) {
				// Another process's server answered on this port (a port race with a
				// concurrent test run): ours failed to bind.
				_ = cmd.Process.Kill()
				<-exited
				return fmt.Errorf("port %d is taken by another redis-server", s.Port)
			}
			go func() { <-exited }()
			return nil
		}
		time.Sleep(10 * time.Millisecond)
	}
	_ = cmd.Process.Kill()
	return fmt.Errorf("redis-server on port %d did not answer PING within 10s: %s", s.Port, s.logTail())
}

// ownsPort reports whether the server answering on s.Port is the process pid.
func (s *Server) ownsPort(pid int) bool {
	c := redis.NewClient(&redis.Options{Addr: s.Addr(), TLSConfig: s.TLSConfig(), Protocol: 2, DisableIdentity: true, MaxRetries: -1})
	defer c.Close()
	ctx, cancel := context.WithTimeout(context.Background(), time.Second)
	defer cancel()
	info, err := c.Info(ctx, "server").Result()
	if err != nil {
		return false
	}
	return strings.Contains(info, "process_id:"+strconv.Itoa(pid)+"\r\n")
}

func (s *Server) logTail() string { return local.LogTail(filepath.Join(s.Dir, "redis.log"), 5) }

func (s *Server) ping() error {
	if s.tlsCfg != nil {
		return local.Ping(s.Addr(), s.tlsCfg)
	}
	return local.Ping(s.Addr(), nil)
}

func (s *Server) signal(sig syscall.Signal) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.cmd != nil && s.cmd.Process != nil {
		_ = s.cmd.Process.Signal(sig)
	}
}

// Kill sends SIGKILL (after SIGCONT, in case it is stopped) and waits until the
// port is closed. It is safe to call more than once.
func (s *Server) Kill() {
	s.mu.Lock()
	cmd := s.cmd
	s.cmd = nil
	s.mu.Unlock()
	if cmd == nil || cmd.Process == nil {
		return
	}
	if s.t == nil {
		defer os.RemoveAll(s.Dir)
	}
	_ = cmd.Process.Signal(syscall.SIGCONT)
	_ = cmd.Process.Kill()
	for i := 0; i < 200; i++ {
		if err := syscall.Kill(cmd.Process.Pid, 0); err != nil {
			break
		}
		time.Sleep(5 * time.Millisecond)
	}
}

// Restart kills the server and starts it again on the same port. With keepData it
// keeps its directory (so an AOF or RDB file, when enabled, is reloaded); without,
// the data directory is emptied first.
func (s *Server) Restart(keepData bool) {
	s.t.Helper()
	s.Kill()
	if !keepData {
		entries, _ := os.ReadDir(s.Dir)
		for _, e := range entries {
			_ = os.RemoveAll(filepath.Join(s.Dir, e.Name()))
		}
	}
	var err error
	for try := 0; try < 50; try++ { // the port may linger briefly
		if err = s.start(); err == nil {
			return
		}
		time.Sleep(50 * time.Millisecond)
	}
	s.t.Fatalf("redistest: restart %s: %v", s.Name, err)
}

// Stop pauses the process with SIGSTOP: connections stay open, nothing is answered.
func (s *Server) Stop() { s.signal(syscall.SIGSTOP) }

// Cont resumes a process paused with Stop.
func (s *Server) Cont() { s.signal(syscall.SIGCONT) }

// Client returns a go-redis client for administrative access in tests (not for lock
// traffic), over TLS for a TLS server, closed in t.Cleanup.
func (s *Server) Client() *redis.Client {
	c := redis.NewClient(&redis.Options{Addr: s.Addr(), TLSConfig: s.TLSConfig(), Protocol: 2, DisableIdentity: true, MaxRetries: -1})
	s.t.Cleanup(func() { _ = c.Close() })
	return c
}

// Keys returns every key on the server (tests only: uses KEYS).
func (s *Server) Keys(ctx context.Context) []string {
	s.t.Helper()
	c := redis.NewClient(&redis.Options{Addr: s.Addr(), TLSConfig: s.TLSConfig(), Protocol: 2, DisableIdentity: true})
	defer c.Close()
	keys, err := c.Keys(ctx, "*").Result()
	if err != nil {
		s.t.Fatalf("redistest: KEYS on %s: %v", s.Name, err)
	}
	return keys
}
