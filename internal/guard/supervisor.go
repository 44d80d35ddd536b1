//go:build unix

package guard

import (
	"bufio"
	"errors"
	"flag"
	"fmt"
	"os"
	"os/exec"
	"os/signal"
	"runtime"
	"strconv"
	"strings"
	"syscall"
	"time"
)

// Main is the supervisor: the process that Start runs with Command as its first
// argument. args are the arguments after Command. It returns the process's exit
// code. It talks to the caller on fd 3 (control, read) and fd 4 (status, write).
func Main(args []string) int {
	fs := flag.NewFlagSet(Command, flag.ContinueOnError)
	untilNS := fs.Int64("until", 0, "")
	margin := fs.Duration("margin", 0, "")
	grace := fs.Duration("grace", 0, "")
	lead := fs.Duration("kill-lead", DefaultKillLead, "")
	fg := fs.Bool("foreground", false, "")
	hardNS := fs.Int64("hard-until", 0, "")
	if err := fs.Parse(args); err != nil || fs.NArg() == 0 {
		fmt.Fprintln(os.Stderr, "redlock: the guard is started by `redlock run`, not by hand")
		return 2
	}
	// The pipes came through exec without close-on-exec: keep them from the command.
	syscall.CloseOnExec(3)
	syscall.CloseOnExec(4)
	ctl := os.NewFile(3, "guard-control")
	status := os.NewFile(4, "guard-status")
	if ctl == nil || status == nil {
		fmt.Fprintln(os.Stderr, "redlock: the guard is started by `redlock run`, not by hand")
		return 2
	}
	sv := &supervisor{status: status, margin: *margin, grace: *grace, lead: *lead}
	if *hardNS != 0 {
		sv.hard = unstamp(*hardNS)
	}
	sv.setUntil(unstamp(*untilNS))
	return sv.run(fs.Args(), *fg, ctl)
}

type supervisor struct {
	status *os.File
	pgid   int
	until  time.Time // the deadline in force: the caller's latest, capped by hard
	hard   time.Time // no deadline later than this counts; zero when none
	margin time.Duration
	grace  time.Duration
	lead   time.Duration
	termAt time.Time // when SIGTERM was sent; zero before
	// orphan is how to release the lock once the caller died and the command
	// ended (orphan.go); nil when the caller gave none.
	orphan *orphanSpec
}

func (s *supervisor) report(format string, args ...any) {
	_, _ = fmt.Fprintf(s.status, format+"\n", args...)
}

func (s *supervisor) run(argv []string, foreground bool, ctl *os.File) int {
	// Terminal signals are for the command's group; the supervisor, in a group of
	// its own, must survive any that reach it. So must SIGTERM: a service manager
	// stopping everything at once (systemd's KillMode=control-group) sends it to
	// run, the supervisor and the command alike, and the command must get its
	// grace period (run forwards SIGTERM to it) under the same deadline, not the
	// parent-death SIGKILL. They are caught and dropped, not ignored: an ignored
	// signal would stay ignored in the command after exec.
	drop := make(chan os.Signal, 8)
	signal.Notify(drop, syscall.SIGINT, syscall.SIGQUIT, syscall.SIGHUP, syscall.SIGTERM,
		syscall.SIGTSTP, syscall.SIGTTIN, syscall.SIGTTOU)
	go func() {
		for range drop {
		}
	}()
	becomeSubreaper()
	// The parent-death signal fires when the thread that started the child ends:
	// keep this goroutine on its thread for the supervisor's whole life.
	runtime.LockOSThread()

	// The caller may have been frozen between acquiring and starting the guard:
	// a command started past its SIGTERM time would act, if only for a moment,
	// while another client may hold the lock.
	if !time.Now().Before(s.until.Add(-s.margin)) {
		s.report("error expired")
		return 1
	}
	cmd := exec.Command(argv[0], argv[1:]...)
	cmd.Stdin, cmd.Stdout, cmd.Stderr = os.Stdin, os.Stdout, os.Stderr
	cmd.SysProcAttr = childAttr(foreground)
	if err := cmd.Start(); err != nil {
		kind := "other"
		if errors.Is(err, exec.ErrNotFound) || errors.Is(err, os.ErrNotExist) {
			kind = "notfound"
		}
		s.report("error %s %s", kind, strings.ReplaceAll(err.Error(), "\n", " "))
		return 1
	}
	s.pgid = cmd.Process.Pid
	s.report("pid %d", s.pgid)

	msgs := make(chan string)
	go func() {
		defer close(msgs)
		sc := bufio.NewScanner(ctl)
		for sc.Scan() {
			msgs <- sc.Text()
		}
	}()
	events := make(chan syscall.WaitStatus)
	go waitChild(s.pgid, events)

	term := time.NewTimer(0)
	kill := time.NewTimer(0)
	<-term.C
	<-kill.C
	s.arm(term, kill)
	orphaned := false // the caller died before the command ended
	for {
		select {
		case m, ok := <-msgs:
			if !ok {
				// The caller died: nobody extends the lock or knows its state.
				s.killGroup()
				msgs = nil
				orphaned = true
				continue
			}
			s.handle(m, term, kill)
		case <-term.C:
			s.terminate(kill)
		case <-kill.C:
			s.killGroup()
		case ws := <-events:
			switch {
			case ws.Stopped():
				s.report("stopped")
			case ws.Continued():
				s.report("continued")
			default:
				// The command is gone: nothing it left in its group outlives it.
				s.killGroup()
				reapOrphans()
				sig := 0
				if ws.Signaled() {
					sig = int(ws.Signal())
				}
				s.report("exit %d %d %t", ws.ExitStatus(), sig, !s.termAt.IsZero())
				if orphaned {
					s.releaseOrphan()
				}
				return 0
			}
		}
	}
}

// handle applies one control message.
func (s *supervisor) handle(m string, term, kill *time.Timer) {
	word, rest, _ := strings.Cut(m, " ")
	switch word {
	case "until":
		ns, err := strconv.ParseInt(rest, 10, 64)
		if err != nil {
			return
		}
		s.setUntil(unstamp(ns))
		s.arm(term, kill)
	case "term":
		s.terminate(kill)
	case "orphan":
		s.setOrphan(rest)
	case "signal":
		n, err := strconv.Atoi(rest)
		if err == nil && n > 0 {
			_ = syscall.Kill(-s.pgid, syscall.Signal(n))
		}
	}
}

// setUntil takes the caller's new deadline, capped by the hard one.
func (s *supervisor) setUntil(t time.Time) {
	if !s.hard.IsZero() && t.After(s.hard) {
		t = s.hard
	}
	s.until = t
}

// arm sets both timers from the deadline: SIGTERM at until - margin (unless sent
// already), SIGKILL at the kill deadline.
func (s *supervisor) arm(term, kill *time.Timer) {
	if s.termAt.IsZero() {
		term.Reset(max(time.Until(s.until.Add(-s.margin)), 0))
	}
	kill.Reset(max(time.Until(s.killAt()), 0))
}

// killAt is the SIGKILL deadline: the deadline - lead, or grace after SIGTERM when
// that is sooner.
func (s *supervisor) killAt() time.Time {
	at := s.until.Add(-s.lead)
	if !s.termAt.IsZero() {
		if g := s.termAt.Add(s.grace); g.Before(at) {
			at = g
		}
	}
	return at
}

func (s *supervisor) terminate(kill *time.Timer) {
	if !s.termAt.IsZero() {
		return
	}
	s.termAt = time.Now()
	_ = syscall.Kill(-s.pgid, syscall.SIGTERM)
	_ = syscall.Kill(-s.pgid, syscall.SIGCONT) // a stopped group must see it
	kill.Reset(max(time.Until(s.killAt()), 0))
}

func (s *supervisor) killGroup() { _ = syscall.Kill(-s.pgid, syscall.SIGKILL) }

// waitChild reports every state change of pid (stopped, continued, ended).
func waitChild(pid int, out chan<- syscall.WaitStatus) {
	for {
		var ws syscall.WaitStatus
		_, err := syscall.Wait4(pid, &ws, syscall.WUNTRACED|wcontinued, nil)
		if errors.Is(err, syscall.EINTR) {
			continue
		}
		if err != nil {
			out <- ws
			return
		}
		out <- ws
		if ws.Exited() || ws.Signaled() {
			return
		}
	}
}

// reapOrphans collects the exit status of the orphans the supervisor inherited as
// subreaper, without waiting for any that still run outside the group.
func reapOrphans() {
	for {
		var ws syscall.WaitStatus
		pid, err := syscall.Wait4(-1, &ws, syscall.WNOHANG, nil)
		if pid <= 0 || err != nil {
			return
		}
	}
}
