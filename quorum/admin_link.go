package quorum

import (
	"context"
	"iter"
	"time"

	"github.com/redlock/redlock/internal/adminlink"
	"github.com/redlock/redlock/internal/keyspace"
)

// Administration and inspection live in package admin. Their implementation
// needs the Manager's masters, connections, scripts and clock, which this
// package does not export: package admin reaches them through adminlink.Of,
// which returns an adminSide, whose methods admin declares in an interface of
// its own (a test there checks that the two agree).

func init() {
	adminlink.Of = func(m any) any {
		mgr, ok := m.(*Manager)
		if !ok {
			return nil
		}
		return adminSide{mgr}
	}
	adminlink.Values = valueCodec{}
}

// valueCodec is the codec of lock values seen by package admin (admin.Value):
// the value format is this package's, its parsing and writing are not exported.
type valueCodec struct{}

// Parse is parseValue, split into the token and the owner.
func (valueCodec) Parse(s string) (string, Owner, error) {
	v, err := parseValue(s)
	return v.Token, v.Owner, err
}

// Format is lockValue.String.
func (valueCodec) Format(token string, owner Owner) string {
	return lockValue{Token: token, Owner: owner}.String()
}

// adminSide is a Manager seen by package admin; each method is the
// unexported operation of the same name, documented on admin.Admin.
type adminSide struct{ m *Manager }

func (a adminSide) Inspect(ctx context.Context, match string) (*lockListing, error) {
	return a.m.inspect(ctx, match)
}

func (a adminSide) InspectStream(ctx context.Context, match string) (*lockListing, iter.Seq[*lockInfo], error) {
	return a.m.inspectStream(ctx, match)
}

// NewScanner returns the scanner as a literal interface type, which admin's
// side declares too (a named type of either package would not match).
func (a adminSide) NewScanner(match string) interface {
	Step(ctx context.Context) error
	Progress() keyspace.ScanProgress
	Listing() (*lockListing, error)
} {
	return a.m.newScanner(match)
}

// Leader reads the leader of the election name as a listing shows it: any
// name, as written by any tool (the empty one too: NAME:leader is then
// ":leader"), not only the names Manager.Election takes. It writes nothing.
func (a adminSide) Leader(ctx context.Context, name string) (*LeaderInfo, error) {
	return (&Election{m: a.m, name: name}).leader(ctx)
}

func (a adminSide) Describe(ctx context.Context, names []string) (*lockListing, error) {
	return a.m.describe(ctx, names)
}

func (a adminSide) SharedMembers(ctx context.Context, key string) (time.Time, []map[string]time.Duration, error) {
	return a.m.sharedMembers(ctx, key)
}

func (a adminSide) ForceExpire(ctx context.Context, name, token string) (*Report, error) {
	return a.m.forceExpire(ctx, name, token)
}

func (a adminSide) ForceExpireSeen(ctx context.Context, name string, seen map[string]keyspace.Seen) (*Report, error) {
	return a.m.forceExpireSeen(ctx, name, seen)
}

func (a adminSide) ForceExpireListed(ctx context.Context, listed string, seen map[string]keyspace.Seen) (*Report, error) {
	return a.m.forceExpireListed(ctx, listed, seen)
}

func (a adminSide) RevokeSeen(ctx context.Context, name string, seen map[string]keyspace.Seen) (time.Time, *Report, error) {
	return a.m.revokeSeen(ctx, name, seen)
}

func (a adminSide) RevokeToken(ctx context.Context, name, token string) (time.Time, *Report, error) {
	return a.m.revokeToken(ctx, name, token)
}

func (a adminSide) RevokeListed(ctx context.Context, listed string, seen map[string]keyspace.Seen) (time.Time, *Report, error) {
	return a.m.revokeListed(ctx, listed, seen)
}

func (a adminSide) RevokeShared(ctx context.Context, name, value string) (time.Time, *Report, error) {
	return a.m.revokeShared(ctx, name, value)
}

func (a adminSide) DeleteSharedTombstone(ctx context.Context, name, tombstone string) (*Report, error) {
	return a.m.deleteSharedTombstone(ctx, name, tombstone)
}

func (a adminSide) ReleaseToken(ctx context.Context, name, token string) (*Report, error) {
	return a.m.releaseToken(ctx, name, token)
}

func (a adminSide) ExtendToken(ctx context.Context, name, token string, ttl time.Duration) (time.Time, *Report, error) {
	return a.m.extendToken(ctx, name, token, ttl)
}

func (a adminSide) ReleaseHeld(ctx context.Context, names []string, token string) (*Report, error) {
	return a.m.releaseHeld(ctx, names, token)
}

func (a adminSide) ExtendHeld(ctx context.Context, names []string, token string, ttl time.Duration) (time.Time, *Report, error) {
	return a.m.extendHeld(ctx, names, token, ttl)
}

func (a adminSide) Quarantine() map[string]time.Time { return a.m.quarantineEnds() }

func (a adminSide) FenceKey(name string) string { return a.m.fenceKey(name) }
