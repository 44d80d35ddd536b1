//go:build unix

package guard

import (
	"context"
	"encoding/json"
	"os"
	"os/exec"
	"time"
)

// The release of an orphaned lock: when the caller died (the control pipe closed
// before the command ended) and the command is then gone with its process group,
// nobody holds the lock any longer, and waiting for its validity to end only
// keeps the name from the next holder. The caller tells the supervisor at start
// how to release it (a run of this binary: argv and the environment entries it
// needs, over the control pipe, so that neither shows in a process listing), and
// the supervisor runs it then.

// orphanTimeout bounds the release the supervisor runs.
const orphanTimeout = 15 * time.Second

// OnOrphan tells the supervisor to run this binary with args, and its own
// environment plus env, once the command has ended after the caller died. It
// is sent over the control pipe; call it right after Start.
func (g *Guard) OnOrphan(args, env []string) error {
	b, err := json.Marshal(orphanSpec{Args: args, Env: env})
	if err != nil {
		return err
	}
	return g.send("orphan %s", b)
}

type orphanSpec struct {
	Args []string `json:"args"`
	Env  []string `json:"env"`
}

// setOrphan records the release spec of an "orphan" message.
func (s *supervisor) setOrphan(rest string) {
	var o orphanSpec
	if json.Unmarshal([]byte(rest), &o) == nil && len(o.Args) > 0 {
		s.orphan = &o
	}
}

// releaseOrphan runs the release the caller asked for, if any, and waits for
// it (bounded by orphanTimeout). Its output goes to the supervisor's stderr.
func (s *supervisor) releaseOrphan() {
	if s.orphan == nil {
		return
	}
	exe, err := os.Executable()
	if err != nil {
		return
	}
	ctx, cancel := context.WithTimeout(context.Background(), orphanTimeout)
	defer cancel()
	cmd := exec.CommandContext(ctx, exe, s.orphan.Args...)
	cmd.Env = append(os.Environ(), s.orphan.Env...)
	cmd.Stdout, cmd.Stderr = nil, os.Stderr
	_ = cmd.Run()
}
