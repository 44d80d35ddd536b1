package admin

import (
	"context"
	"iter"
	"time"

	"github.com/redlock/redlock/internal/keyspace"
	"github.com/redlock/redlock/quorum"
)

// side is what package quorum lends administration through adminlink.Of: the
// operations that need the Manager's masters, connections, scripts and clock.
// Each is documented on the Admin method that calls it.
type side interface {
	Inspect(ctx context.Context, match string) (*shape, error)
	InspectStream(ctx context.Context, match string) (*shape, iter.Seq[*lockShape], error)
	NewScanner(match string) interface {
		Step(ctx context.Context) error
		Progress() keyspace.ScanProgress
		Listing() (*shape, error)
	}
	Describe(ctx context.Context, names []string) (*shape, error)
	Leader(ctx context.Context, name string) (*quorum.LeaderInfo, error)
	SharedMembers(ctx context.Context, key string) (sent time.Time, remaining []map[string]time.Duration, err error)

	ForceExpire(ctx context.Context, name, token string) (*quorum.Report, error)
	ForceExpireSeen(ctx context.Context, name string, seen map[string]keyspace.Seen) (*quorum.Report, error)
	ForceExpireListed(ctx context.Context, listed string, seen map[string]keyspace.Seen) (*quorum.Report, error)
	RevokeSeen(ctx context.Context, name string, seen map[string]keyspace.Seen) (time.Time, *quorum.Report, error)
	RevokeToken(ctx context.Context, name, token string) (time.Time, *quorum.Report, error)
	RevokeListed(ctx context.Context, listed string, seen map[string]keyspace.Seen) (time.Time, *quorum.Report, error)
	RevokeShared(ctx context.Context, name, value string) (time.Time, *quorum.Report, error)
	DeleteSharedTombstone(ctx context.Context, name, tombstone string) (*quorum.Report, error)

	ReleaseToken(ctx context.Context, name, token string) (*quorum.Report, error)
	ExtendToken(ctx context.Context, name, token string, ttl time.Duration) (time.Time, *quorum.Report, error)
	ReleaseHeld(ctx context.Context, names []string, token string) (*quorum.Report, error)
	ExtendHeld(ctx context.Context, names []string, token string, ttl time.Duration) (time.Time, *quorum.Report, error)

	Quarantine() map[string]time.Time
	FenceKey(name string) string
}
