package wire

import (
	"errors"
	"fmt"
)

// Preloading scripts at the handshake (Config.Preload). The handshake's first
// write asks SCRIPT EXISTS for every preloaded script, beside INFO; only where
// the master lacks some (restarted, flushed, or never sent them) does a second
// write load those with SCRIPT LOAD. A master that has them all costs one
// command and no compilation: Redis hashes nothing for EXISTS, and an embedded
// server that compiles every SCRIPT LOAD anew (miniredis: 4 ms for the nine
// scripts, 20 ms under the race detector) is asked to load them once, not on
// every connection. A master that refuses either command (an ACL), or answers
// EXISTS with something else than an array of integers in step, is no failure:
// nothing is loaded there, and EVAL after NOSCRIPT stays the fallback.

// appendScriptExists appends SCRIPT EXISTS for scripts, nothing when there are
// none.
func appendScriptExists(buf []byte, scripts []*Script) []byte {
	if len(scripts) == 0 {
		return buf
	}
	args := make([]string, 0, 2+len(scripts))
	args = append(args, "SCRIPT", "EXISTS")
	for _, s := range scripts {
		args = append(args, s.sha)
	}
	return appendCommand(buf, args)
}

// preload reads the reply to appendScriptExists's command, then loads the
// scripts the master lacks and reads those replies. An error is returned only
// for a connection out of step or broken.
func (wc *wireConn) preload(scripts []*Script) error {
	if len(scripts) == 0 {
		return nil
	}
	n, err := wc.header('*')
	var re ErrorReply
	switch {
	case errors.As(err, &re):
		return nil // refused: nothing loaded
	case err != nil:
		return fmt.Errorf("SCRIPT EXISTS: %w", err)
	case n != int64(len(scripts)):
		return fmt.Errorf("SCRIPT EXISTS: %w: %d replies for %d scripts", ErrProtocol, n, len(scripts))
	}
	var missing []*Script
	for _, s := range scripts {
		v, err := wc.header(':')
		if err != nil {
			return fmt.Errorf("SCRIPT EXISTS: %w", err)
		}
		if v == 0 {
			missing = append(missing, s)
		}
	}
	if len(missing) == 0 {
		return nil
	}
	var buf []byte
	for _, s := range missing {
		buf = appendCommand(buf, []string{"SCRIPT", "LOAD", s.src})
	}
	if _, err := wc.c.Write(buf); err != nil {
		return err
	}
	for range missing {
		if _, err := wc.readBulk(); err != nil && !errors.As(err, &re) {
			return fmt.Errorf("SCRIPT LOAD: %w", err)
		}
	}
	return nil
}
