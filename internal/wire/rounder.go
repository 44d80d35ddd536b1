package wire

import (
	"context"
	"crypto/sha1"
	"encoding/hex"
	"errors"
	"fmt"
	"os"
	"time"
)

// Rounder sends one command to every master as one round: the narrow interface
// between the lock algorithm and its transport.
type Rounder interface {
	// Round sends cmd to every master (those cmd.Only names, when set) and sets
	// out[i] to master i's result (out has one element per master). Each master's command, dialling included, ends
	// within the Rounder's timeout, or ctx's deadline when sooner; a cancellation
	// of ctx ends the round at once, counting the masters that had not answered as
	// failed (their commands may still take effect). A command is never sent twice.
	Round(ctx context.Context, cmd *Cmd, out []Result)
	// Close fails every round in flight and closes the connections.
	Close() error
}

// Script is a Lua script run with EVALSHA, and with EVAL after NOSCRIPT (a restart
// or SCRIPT FLUSH emptied the master's script cache).
type Script struct {
	src, sha string
}

// NewScript returns the script of source src.
func NewScript(src string) *Script {
	sum := sha1.Sum([]byte(src))
	return &Script{src: src, sha: hex.EncodeToString(sum[:])}
}

// Source returns the script's body.
func (s *Script) Source() string { return s.src }

// Hash returns the script's SHA1, in hexadecimal.
func (s *Script) Hash() string { return s.sha }

// Cmd is one command sent to every master.
type Cmd struct {
	// Script, when set, is run over Keys and Args (EVALSHA sha numkeys keys...
	// args...). Otherwise Args is the command, and Keys is not used.
	Script *Script
	Keys   []string
	Args   []string
	// Want lists the reply types the command can get besides an error reply
	// ('+', ':', '$', '*'; '$' and '*' include nil). Any other type means the
	// connection is out of step: it is dropped. Empty: any of '+', ':' and '$'.
	Want string
	// NXGet marks Args as SET key value NX PX ms, which a master that takes it
	// (Redis >= 7, learned at the handshake) gets as SET key value NX GET PX ms:
	// the reply is then nil when it set the key, and the value there when it did
	// not (Result.NXGet tells which way it went).
	NXGet bool
	// Only, when set (one element per master), sends the command only to the
	// masters i where Only[i]; the others' results are ErrNotAsked, and nothing
	// is written to them.
	Only []bool
	// Granted and Quorum, when both set, let the round end early (Pipes does;
	// another Rounder may run the round to its end) once its outcome is decided:
	// when Quorum replies satisfy Granted (called with the master's index and its
	// reply, never an error reply, from the goroutine that read it: it must be
	// quick and must not block), or when so many masters refused (replies Granted
	// turns down, error replies, failures) that no quorum can grant any more. The
	// masters that have not answered then get twice as long as the decision took,
	// at least 5 ms; then those not answering at their pace (no reply read from
	// them in that time, nor their oldest command written within three times their
	// last answer's time: stopped, cut off) fail with ErrNotAwaited, as after a
	// deadline (a command written may still take effect; one still queued is never
	// written), while one still answering (slow, busy, distant) is waited for up
	// to the deadline. A round undecided without them (masters stopped that a
	// quorum needs) runs to its end as without Granted.
	Granted func(master int, r *Result) bool
	Quorum  int
}

// Result is one master's answer to one round's command.
type Result struct {
	// Type is the reply's type: '+' (Str), ':' (Int), '$' (Str, Int its length, -1
	// for nil), '*' (an array: Array its elements, Int their number, -1 for nil)
	// or '-' (an error reply: Err is an ErrorReply); 0 when there was no reply (Err
	// says why: a deadline, the connection, a cancellation). An element of an
	// array is a Result of the same types, without Latency; an error reply there
	// is an element, with its Err set, and does not fail the command. A bulk string
	// longer than the transport keeps (4 KiB in a whole reply, 1 MiB in an array)
	// has Int its length and Str empty.
	Type  byte
	Str   string
	Int   int64
	Array []Result
	Err   error
	// NXGet tells that a Cmd with NXGet went out as SET NX GET.
	NXGet   bool
	Latency time.Duration
}

// ErrorReply is an error reply of a master ("WRONGTYPE ...", "NOPERM ...").
type ErrorReply string

func (e ErrorReply) Error() string { return string(e) }

// ErrProtocol is a reply the command cannot get; the connection is dropped.
var ErrProtocol = errors.New("unexpected reply")

// ErrNotAsked is the result of a master a Cmd's Only left out.
var ErrNotAsked = errors.New("not asked")

// ErrNoReply is the result of a command the master did not answer in time.
var ErrNoReply = fmt.Errorf("no reply within the node timeout: %w", os.ErrDeadlineExceeded)

// ErrNotAwaited is the result of a command the master had not answered when the
// others had decided the round (a quorum of them granted, or refused) and the
// time a round gives the rest ran out (Cmd.Granted).
var ErrNotAwaited = fmt.Errorf("no reply soon after the round was decided: not awaited: %w", os.ErrDeadlineExceeded)
