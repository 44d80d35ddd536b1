package admin

import (
	"context"
	"time"

	"github.com/redlock/redlock/quorum"
)

// ReleaseToken releases the lock name held with token (a full lock value, as
// quorum.Lock.Token returns) on every master: compare-and-delete, so another owner's key is
// never touched. Missing keys are not an error. It returns the per-master report and,
// when some master failed, an error naming it: a *quorum.PartialReleaseError matching
// quorum.ErrPartialRelease when a quorum answered (the lock is released), else a
// *quorum.RoundError matching quorum.ErrUnavailable.
func (a *Admin) ReleaseToken(ctx context.Context, name, token string) (*quorum.Report, error) {
	return a.side.ReleaseToken(ctx, name, token)
}

// ExtendToken extends the lock name held with token to ttl on every master where
// the value still matches; it never recreates a missing key. It succeeds when a
// quorum extended and validity is left, returning the new deadline; otherwise the
// error matches quorum.ErrLost (a majority no longer holds token) or quorum.ErrUnavailable.
func (a *Admin) ExtendToken(ctx context.Context, name, token string, ttl time.Duration) (time.Time, *quorum.Report, error) {
	return a.side.ExtendToken(ctx, name, token, ttl)
}

// ReleaseHeld releases what token holds of names on every master, as
// ReleaseToken does for a plain lock, whatever primitive took it (see
// ExtendHeld): compare-and-delete, so another holder's key, permit or share is
// never touched; missing is not an error. For a permit, one read finds the slot
// that holds token on the most masters: the report is that slot's, and every
// other slot where the read showed token (a minority leftover) is released too; a
// permit whose slot is free or another's is missing, not lost. Where it deleted,
// the holder's quorum.WithLossWatch is told (a shared holder's too, while others remain).
// A multi-name hold's token given other names than it was taken for
// (CheckTokenFor) is refused before any I/O, with an error matching
// ErrOtherLock: a multi-name hold is never released in part. (Other tokens are
// compared with what the masters hold, as ReleaseToken compares them.)
func (a *Admin) ReleaseHeld(ctx context.Context, names []string, token string) (*quorum.Report, error) {
	if err := checkMultiFor(token, names); err != nil {
		return nil, err
	}
	return a.side.ReleaseHeld(ctx, names, token)
}

// ExtendHeld extends what token holds of names to ttl on every master where it is
// still held, as ExtendToken does for a plain lock, whatever primitive took it:
// every name of a multi-name hold (names must be exactly its names, in any
// order), the permit of semaphore names[0] that token holds (the slot that one read
// shows it in on the most masters: a leftover of the token on another slot is not
// extended), or a shared hold of names[0]. It never recreates what expired. It succeeds when a quorum extended
// and validity is left, returning the new deadline; otherwise the error matches
// quorum.ErrLost (a majority no longer holds token) or quorum.ErrUnavailable. A leadership's
// token is refused (quorum.ErrInvalidArgument): a leadership lives as long as its
// candidate process does. A multi-name hold's token given other names than it
// was taken for is refused before any I/O, as ReleaseHeld refuses it.
func (a *Admin) ExtendHeld(ctx context.Context, names []string, token string, ttl time.Duration) (time.Time, *quorum.Report, error) {
	if err := checkMultiFor(token, names); err != nil {
		return time.Time{}, nil, err
	}
	return a.side.ExtendHeld(ctx, names, token, ttl)
}

// checkMultiFor is CheckTokenFor for a multi-name hold's token only.
func checkMultiFor(token string, names []string) error {
	if kind, _ := HeldKind(token); kind != KindMulti {
		return nil
	}
	return CheckTokenFor(token, names...)
}
