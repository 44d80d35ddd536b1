// Package guard runs a command under a deadline that holds even when the process
// that started it is killed or frozen.
//
// The caller (redlock run) starts a supervisor: the same binary re-executed with
// the hidden command Command. The supervisor starts the command in a process group
// of its own, learns each new deadline from the caller over a pipe, and enforces it
// by itself: SIGTERM to the whole group at deadline - Margin, SIGKILL at the
// deadline - KillLead at the latest. When the pipe closes before the command exited
// (the caller died), it SIGKILLs the group at once and, once the command is gone,
// runs the release the caller gave it (Guard.OnOrphan), if any. On Linux the command gets
// PR_SET_PDEATHSIG (SIGKILL when the supervisor dies) and the supervisor is a child
// subreaper, so the command's orphaned children stay its to reap; when the command
// exits, whatever it left in its process group is killed too.
//
// What is not guaranteed: a process that leaves the group (setsid, setpgid) escapes
// the kill; a machine that freezes as a whole (VM pause, suspend) freezes the
// supervisor too. Use fencing tokens where that matters. On platforms other than
// Linux there is no parent-death signal: if the supervisor itself is SIGKILLed, the
// command keeps running.
package guard
