//go:build unix

package guard

import (
	"bufio"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"
)

// Command is the hidden command line argument that makes the binary a supervisor
// (see Main).
const Command = "__redlock_guard"

// DefaultKillLead is how long before the deadline SIGKILL is sent at the latest:
// room for the supervisor's own timer to fire late on a loaded machine (tens of
// milliseconds were seen with two busy cores), on top of the drift budget that
// already keeps the deadline before the masters expire the lock.
const DefaultKillLead = 100 * time.Millisecond

// Config is what Start needs.
type Config struct {
	// Argv is the command and its arguments; Env its environment.
	Argv []string
	Env  []string
	// Stdin, Stdout and Stderr are passed to the command.
	Stdin          io.Reader
	Stdout, Stderr io.Writer
	// Until is the first deadline.
	Until time.Time
	// HardUntil, when not zero, is a deadline that no later Until moves past: the
	// end that a cap on the holding time (run -max-hold) puts on the lock whether
	// or not the caller lives to forward the shortened Until.
	HardUntil time.Time
	// Margin: SIGTERM this long before the deadline. Grace: SIGKILL this long after
	// SIGTERM, but never later than the deadline - KillLead.
	Margin, Grace, KillLead time.Duration
	// Foreground puts the command's process group in the terminal's foreground
	// (stdin must be the terminal, and the caller in its foreground).
	Foreground bool
	// Executable is the binary to run as the supervisor; "" means os.Executable.
	Executable string
}

// Exit is how the command ended.
type Exit struct {
	Code   int            // exit status, when it exited
	Signal syscall.Signal // the signal that killed it, 0 when it exited
	// Stopped: the guard had sent the group SIGTERM (its deadline came, or Terminate
	// asked) before the command ended.
	Stopped bool
	Err     error // the supervisor failed or died; the other fields are unknown
}

// Guard is a running supervisor and its command.
type Guard struct {
	cmd  *exec.Cmd
	ctl  *os.File // caller -> supervisor
	pid  int      // the command's pid, which is its process group id
	mu   sync.Mutex
	done chan Exit
	stop chan struct{} // closed when the command stopped (SIGTSTP and the like)
	cont chan struct{}
}

// Start starts the supervisor and, through it, the command. It returns once the
// command has started (or failed to).
func Start(cfg Config) (*Guard, error) {
	if len(cfg.Argv) == 0 {
		return nil, errors.New("guard: no command")
	}
	exe := cfg.Executable
	if exe == "" {
		var err error
		if exe, err = os.Executable(); err != nil {
			return nil, fmt.Errorf("guard: find own executable: %w", err)
		}
	}
	ctlR, ctlW, err := os.Pipe()
	if err != nil {
		return nil, fmt.Errorf("guard: %w", err)
	}
	stR, stW, err := os.Pipe()
	if err != nil {
		_ = ctlR.Close()
		_ = ctlW.Close()
		return nil, fmt.Errorf("guard: %w", err)
	}
	args := []string{Command,
		"-until", strconv.FormatInt(stamp(cfg.Until), 10),
		"-margin", cfg.Margin.String(), "-grace", cfg.Grace.String(), "-kill-lead", cfg.KillLead.String(),
		"-foreground=" + strconv.FormatBool(cfg.Foreground)}
	if !cfg.HardUntil.IsZero() {
		args = append(args, "-hard-until", strconv.FormatInt(stamp(cfg.HardUntil), 10))
	}
	args = append(args, "--")
	cmd := exec.Command(exe, append(args, cfg.Argv...)...)
	cmd.Env = cfg.Env
	cmd.Stdin, cmd.Stdout, cmd.Stderr = cfg.Stdin, cfg.Stdout, cfg.Stderr
	cmd.ExtraFiles = []*os.File{ctlR, stW}
	// Its own process group: a signal to the caller's job (Ctrl-Z of a pipeline,
	// kill -STOP of the group) does not freeze the supervisor.
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	if err := cmd.Start(); err != nil {
		for _, f := range []*os.File{ctlR, ctlW, stR, stW} {
			_ = f.Close()
		}
		return nil, fmt.Errorf("guard: start supervisor: %w", err)
	}
	_ = ctlR.Close()
	_ = stW.Close()
	g := &Guard{cmd: cmd, ctl: ctlW, done: make(chan Exit, 1), stop: make(chan struct{}, 1), cont: make(chan struct{}, 1)}
	started := make(chan error, 1)
	go g.read(stR, started)
	if err := <-started; err != nil {
		_ = ctlW.Close()
		_ = cmd.Wait()
		return nil, err
	}
	return g, nil
}

// ErrStart: the supervisor could not start the command. It wraps the reason and
// matches exec.ErrNotFound when the command was not found.
var ErrStart = errors.New("cannot start the command")

// ErrExpired: the deadline minus the margin had passed when the supervisor was
// about to start the command (the caller was delayed or frozen after acquiring),
// so the command was not started.
var ErrExpired = errors.New("the deadline passed before the command started")

// read follows the supervisor's status lines: "pid N" (or "error MSG" when the
// command could not start), "stopped", "exit CODE SIGNAL".
func (g *Guard) read(r *os.File, started chan<- error) {
	defer r.Close()
	sc := bufio.NewScanner(r)
	first := true
	for sc.Scan() {
		word, rest, _ := strings.Cut(sc.Text(), " ")
		switch word {
		case "pid":
			g.pid, _ = strconv.Atoi(rest)
			started <- nil
			first = false
		case "error":
			kind, msg, _ := strings.Cut(rest, " ")
			err := fmt.Errorf("%w: %s", ErrStart, msg)
			switch kind {
			case "notfound":
				err = fmt.Errorf("%w: %w: %s", ErrStart, exec.ErrNotFound, msg)
			case "expired":
				err = fmt.Errorf("%w: %w", ErrStart, ErrExpired)
			}
			started <- err
			return
		case "stopped":
			select {
			case g.stop <- struct{}{}:
			default:
			}
		case "continued":
			select {
			case g.cont <- struct{}{}:
			default:
			}
		case "exit":
			f := strings.Fields(rest)
			var ex Exit
			if len(f) == 3 {
				c, _ := strconv.Atoi(f[0])
				s, _ := strconv.Atoi(f[1])
				ex = Exit{Code: c, Signal: syscall.Signal(s), Stopped: f[2] == "true"}
			}
			_ = g.cmd.Wait()
			g.done <- ex
			return
		}
	}
	err := g.cmd.Wait()
	if first {
		started <- fmt.Errorf("guard: supervisor ended before starting the command: %v", err)
		return
	}
	g.done <- Exit{Err: fmt.Errorf("guard: supervisor ended without a status: %v", err)}
}

// Pid returns the command's pid, which is also its process group id.
func (g *Guard) Pid() int { return g.pid }

// Done delivers how the command ended, once.
func (g *Guard) Done() <-chan Exit { return g.done }

// Stopped fires when the command's process group was stopped by a job-control
// signal; Continued when it was continued.
func (g *Guard) Stopped() <-chan struct{}   { return g.stop }
func (g *Guard) Continued() <-chan struct{} { return g.cont }

func (g *Guard) send(format string, args ...any) error {
	g.mu.Lock()
	defer g.mu.Unlock()
	_, err := fmt.Fprintf(g.ctl, format+"\n", args...)
	return err
}

// SetUntil gives the supervisor a new deadline; both its timers are re-armed.
// The supervisor keeps the earlier of t and HardUntil.
func (g *Guard) SetUntil(t time.Time) error { return g.send("until %d", stamp(t)) }

// Terminate asks for SIGTERM now, and SIGKILL after the grace period (never later
// than the deadline - KillLead).
func (g *Guard) Terminate() error { return g.send("term") }

// Signal forwards sig to the command's process group.
func (g *Guard) Signal(sig syscall.Signal) error { return g.send("signal %d", int(sig)) }

// Kill sends SIGKILL to the command's process group directly, without the
// supervisor: the caller's own backstop.
func (g *Guard) Kill() {
	if g.pid > 0 {
		_ = syscall.Kill(-g.pid, syscall.SIGKILL)
	}
}

// Close closes the control pipe. Before the command exited, that makes the
// supervisor kill it at once.
func (g *Guard) Close() error { return g.ctl.Close() }
