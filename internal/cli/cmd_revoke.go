package cli

import (
	"errors"
	"fmt"
	"time"

	"github.com/redlock/redlock/internal/escape"
	"github.com/redlock/redlock/quorum"
)

// force-expire revokes by default: each value shown becomes its tombstone,
// which keeps the name taken until the revoked holder's validity has surely
// ended (the lock-delay), or until the holder, told to stop, releases. -now
// deletes at once instead.

// ExitRevoked: force-expire revoked the hold: the name stays taken until the
// revoked holder's validity has ended or it releases (0 means the name is free).
const ExitRevoked = 6

// What force-expire did, in its -json "action".
const (
	actionRevoked = "revoked"
	actionDeleted = "deleted"
)

var revokeWords = map[quorum.Outcome]string{
	quorum.OutcomeOK:      "revoked (tombstone until the holder's validity ends)",
	quorum.OutcomeMissing: "nothing to revoke (missing, or revoked already)",
	quorum.OutcomeForeign: "changed since it was shown: kept",
}

// forceWordsFor returns the per-master words of force-expire, -now or not.
func forceWordsFor(now bool) map[quorum.Outcome]string {
	if now {
		return forceWords
	}
	return revokeWords
}

// markAction sets what doc did: revoked when a tombstone ends at free (not
// zero), else deleted.
func markAction(doc *deleteJSON, free time.Time) {
	doc.Action, doc.FreeAt = actionDeleted, nil
	if !free.IsZero() {
		doc.Action, doc.FreeAt = actionRevoked, jsonTime(free)
	}
}

// finishForce shows the result of force-expire: as finishDelete, and after a
// revocation the time the name is free, exiting ExitRevoked.
func (s *lockSession) finishForce(env *Env, doc deleteJSON, free time.Time, err error, asJSON bool) error {
	markAction(&doc, free)
	if err != nil || doc.Action != actionRevoked {
		return s.finishDelete(env, doc, err, asJSON)
	}
	doc.OK = true
	if err := show(env, asJSON, doc); err != nil {
		return s.fail(ExitError, err)
	}
	return revokedExit(env, doc.Key, free)
}

// revokedExit tells, on stderr, until when key stays taken, and exits
// ExitRevoked (the document is written already).
func revokedExit(env *Env, key string, free time.Time) error {
	fmt.Fprintf(env.Stderr, "%s is revoked: its holder is told to stop; the name stays taken until %s (its validity plus the drift budget), or until the holder releases. force-expire -now frees it at once.\n",
		escape.Text(key), free.Format(time.RFC3339))
	return &exitError{code: ExitRevoked, err: errors.New("revoked"), doc: skipDoc{}, shown: true}
}
