//go:build !unix

package guard

import (
	"errors"
	"io"
	"syscall"
	"time"
)

// Command is the hidden subcommand that runs the supervisor.
const Command = "__redlock_guard"

// DefaultKillLead is how long before the deadline SIGKILL is sent.
const DefaultKillLead = 100 * time.Millisecond

// ErrUnsupported: the platform has no process groups to guard (Windows).
var ErrUnsupported = errors.New("the run guard needs a Unix system (process groups and signals)")

// ErrStart: the supervisor could not start the command.
var ErrStart = errors.New("cannot start the command")

// ErrExpired: the deadline had passed before the command started.
var ErrExpired = errors.New("the deadline passed before the command started")

// Config is the guard's configuration; see the Unix build.
type Config struct {
	Argv                    []string
	Env                     []string
	Stdin                   io.Reader
	Stdout, Stderr          io.Writer
	Until, HardUntil        time.Time
	Margin, Grace, KillLead time.Duration
	Foreground              bool
	Executable              string
}

// Exit is how the command ended.
type Exit struct {
	Code    int
	Signal  syscall.Signal
	Stopped bool
	Err     error
}

// Guard is never running on this platform.
type Guard struct{}

// Start fails with ErrUnsupported: `run` refuses rather than run a command whose
// deadline nothing enforces.
func Start(Config) (*Guard, error) { return nil, ErrUnsupported }

// Main is the supervisor's entry point; it fails on this platform.
func Main([]string) int { return 1 }

// Pid, Done, Stopped, Continued, SetUntil, Terminate, Signal, Kill and Close are
// never called: Start always fails.
func (g *Guard) Pid() int                    { return 0 }
func (g *Guard) Done() <-chan Exit           { return nil }
func (g *Guard) Stopped() <-chan struct{}    { return nil }
func (g *Guard) Continued() <-chan struct{}  { return nil }
func (g *Guard) SetUntil(time.Time) error    { return ErrUnsupported }
func (g *Guard) Terminate() error            { return ErrUnsupported }
func (g *Guard) Signal(syscall.Signal) error { return ErrUnsupported }
func (g *Guard) Kill()                       {}

// OnOrphan is not supported here.
func (g *Guard) OnOrphan(_, _ []string) error { return ErrUnsupported }
func (g *Guard) Close() error                 { return nil }
func InForeground(int) bool                   { return false }
func IsTerminal(int) bool                     { return false }
func ForegroundIs(int, int) bool              { return false }
func TakeTerminal(int)                        {}
func GiveTerminal(int, int)                   {}
