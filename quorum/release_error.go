package quorum

import (
	"errors"
	"fmt"
	"strings"
	"time"
)

// ErrPartialRelease: a release (or force-expire) deleted the lock on every master
// that answered, and a quorum answered, but some masters did not answer or failed.
// The lock is released: no quorum can hold it any more. Each master that did not
// answer keeps its copy until the TTL it was last given ends (PartialReleaseError
// says when, where it is known); until then a new holder cannot count that master's
// vote. It never matches ErrUnavailable, which a release gets when fewer than a
// quorum answered (the lock then stays in place until it expires).
var ErrPartialRelease = errors.New("released, except on masters that did not answer")

// PartialReleaseError is a release-like round that a quorum answered and some
// masters did not. It matches ErrPartialRelease and each master's *NodeError.
type PartialReleaseError struct {
	Report
	// Expires is the latest moment the copies left on the masters that did not
	// answer can still exist (by the Manager's clock), assuming each command
	// reached its master within the node timeout or never (a master paused with a
	// command in its socket applies it when it resumes); zero when unknown (a
	// release by token or a force-expire does not know the TTL the key was last
	// given).
	Expires time.Time
}

// Error says that the lock was deleted on every master that answered, names the
// masters that did not answer and says when their copy expires.
func (e *PartialReleaseError) Error() string {
	var b strings.Builder
	var failed []string
	for _, nr := range e.Nodes {
		if nr.Outcome == OutcomeError {
			failed = append(failed, fmt.Sprintf("%s (%v)", nr.Node, nr.Err))
		}
	}
	fmt.Fprintf(&b, "%s %s: ", e.Op, e.Key)
	if e.Op == opRelease {
		b.WriteString("released: ")
	}
	fmt.Fprintf(&b, "deleted on every master that answered (%d of %d, quorum %d); ", len(e.Nodes)-len(failed), len(e.Nodes), e.Quorum)
	copies := "its copy expires"
	if len(failed) > 1 {
		b.WriteString("masters ")
		copies = "their copies expire"
	} else {
		b.WriteString("master ")
	}
	fmt.Fprintf(&b, "%s did not answer: %s ", strings.Join(failed, ", "), copies)
	if e.Expires.IsZero() {
		fmt.Fprintf(&b, "with the TTL %s last given", map[bool]string{true: "they were", false: "it was"}[len(failed) > 1])
	} else {
		fmt.Fprintf(&b, "by %s at the latest", e.Expires.UTC().Format(time.RFC3339))
	}
	return b.String()
}

// Unwrap exposes ErrPartialRelease and the per-master errors.
func (e *PartialReleaseError) Unwrap() []error {
	return append([]error{ErrPartialRelease}, e.nodeErrors()...)
}

// releaseError returns the error of a release-like round: nil when every master
// answered; a *PartialReleaseError when some did not but a quorum did (expires is
// when their copies end at the latest, zero when unknown); a *RoundError matching
// ErrUnavailable when fewer than a quorum answered.
func releaseError(rep *Report, expires time.Time) error {
	failed := rep.count(OutcomeError)
	switch {
	case failed == 0:
		return nil
	case len(rep.Nodes)-failed >= rep.Quorum:
		return &PartialReleaseError{Report: *rep, Expires: expires}
	}
	return &RoundError{Report: *rep, Kind: ErrUnavailable}
}
