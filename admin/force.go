package admin

import (
	"context"
	"time"

	"github.com/redlock/redlock/quorum"
)

// ForceExpire deletes the lock name on every master. With a non-empty token it
// deletes only where the value still equals token (compare-and-delete), and
// where name is a shared hold it removes the shared holder token only (and its
// tombstone), the other holders kept; with an empty token it deletes whatever
// is there. A token that nothing holds leaves every master as it was: the
// report says missing, or foreign where another value is there. Either way it publishes on the name's
// wake-up channel where it deleted, so waiters and a holder's quorum.WithLossWatch learn
// at once. It is an administrative action: it breaks the mutual exclusion of
// whoever holds the lock. name may be any key listing shows (ValidateKeyName).
func (a *Admin) ForceExpire(ctx context.Context, name, token string) (*quorum.Report, error) {
	return a.side.ForceExpire(ctx, name, token)
}

// ForceExpireSeen deletes, on each master, exactly what was seen there (by Inspect,
// shown to an operator): a string key only if it still holds the value seen, a key
// of another type only if it is still of that type; nothing where nothing was seen.
// A lock that changed hands since is kept (quorum.OutcomeForeign) and a lock taken since on
// a master where nothing was seen is not touched (quorum.OutcomeMissing). It publishes on
// the wake-up channel where it deleted. seen is indexed by master name; name may be
// any key listing shows (ValidateKeyName).
func (a *Admin) ForceExpireSeen(ctx context.Context, name string, seen map[string]Seen) (*quorum.Report, error) {
	return a.side.ForceExpireSeen(ctx, name, seenOf(seen))
}

// ForceExpireListed is ForceExpireSeen for any name a listing shows, the keys of
// the primitives included: a permit slot (NAME:permit:I) and a leadership
// (NAME:leader) are deleted on each master only where they still hold the value
// seen there, and the wake-up goes to the primitive's channel (the semaphore's
// waiters, the election's candidates and observers) and, for a permit, to its
// slot's channel (its holder's quorum.WithLossWatch). A shared key (a sorted set)
// is deleted where it is still one, its members not compared: to remove one shared
// holder, ReleaseHeld its value. A leader's record and an exclusive waiter's
// marker are refused (quorum.ErrInvalidArgument): they go with their primitive.
func (a *Admin) ForceExpireListed(ctx context.Context, listed string, seen map[string]Seen) (*quorum.Report, error) {
	return a.side.ForceExpireListed(ctx, listed, seenOf(seen))
}

// RevokeSeen revokes, on each master, exactly what was seen there (as
// ForceExpireSeen deletes it): a string key only if it still holds the value
// seen, a key of another type only if it is still of that type. The key
// becomes the tombstone of the value seen, which no acquirer takes, for its
// remaining TTL plus the drift budget of it (the lock-delay); a key without a
// TTL promises no validity and is deleted. It publishes RevokedMessage where it
// revoked. A key that changed hands since is kept (quorum.OutcomeForeign); a tombstone
// already there is kept (quorum.OutcomeMissing: nothing to revoke), and counts in the
// time returned.
//
// It returns when the name is surely free again on every master where it wrote
// a tombstone, by this process's clock (zero when it wrote none), unless the
// revoked holder releases first: its release deletes the tombstone of its own
// value. The report's quorum.OutcomeOK masters are those where the value was revoked
// (or deleted). name may be any key listing shows (ValidateKeyName).
func (a *Admin) RevokeSeen(ctx context.Context, name string, seen map[string]Seen) (time.Time, *quorum.Report, error) {
	return a.side.RevokeSeen(ctx, name, seenOf(seen))
}

// RevokeToken is RevokeSeen of token on every master: only where the lock name
// still holds token. Where name is a shared hold, it revokes the shared holder
// token only, as RevokeShared does; the other holders are kept.
func (a *Admin) RevokeToken(ctx context.Context, name, token string) (time.Time, *quorum.Report, error) {
	return a.side.RevokeToken(ctx, name, token)
}

// RevokeListed is RevokeSeen for any key a listing shows, the keys of the
// primitives included (a permit slot, a leadership, one name of a multi-name
// hold), with the wake-up on the primitive's channel as ForceExpireListed
// sends it. A shared key is refused (quorum.ErrInvalidArgument): revoke its holders one
// by one with RevokeShared.
func (a *Admin) RevokeListed(ctx context.Context, listed string, seen map[string]Seen) (time.Time, *quorum.Report, error) {
	return a.side.RevokeListed(ctx, listed, seenOf(seen))
}

// RevokeShared revokes the shared holder value of the shared hold name on every
// master where it still holds a share: its member becomes its tombstone, kept
// as long as the member would have been plus the drift budget, and an exclusive
// acquirer stays out as long (the other shared holders are not touched). The
// holder's release removes the tombstone. Returns as RevokeSeen.
func (a *Admin) RevokeShared(ctx context.Context, name, value string) (time.Time, *quorum.Report, error) {
	return a.side.RevokeShared(ctx, name, value)
}

// DeleteSharedTombstone removes, at once, a revoked shared holder's tombstone
// (a SharedHolder with FreeAt set) from the shared hold name on every master,
// waking the waiters where the key is left empty: what force-expire -now does
// with it. The revoked holder may still act while its validity lasts.
func (a *Admin) DeleteSharedTombstone(ctx context.Context, name, tombstone string) (*quorum.Report, error) {
	return a.side.DeleteSharedTombstone(ctx, name, tombstone)
}
