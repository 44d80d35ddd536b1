package cli

import (
	"context"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/redlock/redlock/admin"
	"github.com/redlock/redlock/internal/connect"
	"github.com/redlock/redlock/quorum"
)

// Regression (issue 23 item 12): the console's x could not force-expire a foreign
// key that breaks the name rule ("lock:nightly report"): it goes through
// managerLocker.ForceExpire with the name as listed, and deletes what was seen.
func TestConsoleForceExpiresAForeignKeyAsListed(t *testing.T) {
	rc, c := consoleCluster(t, 3)
	ctx := context.Background()
	for _, s := range rc.Servers {
		require.NoError(t, s.Client().Set(ctx, "lock:nightly report", "foreign", 9*time.Second).Err())
	}
	mgr, err := connect.Manager(c)
	require.NoError(t, err)
	defer mgr.Close()
	lst, err := admin.New(mgr).Inspect(ctx, "*")
	require.NoError(t, err)
	li := lst.Lock("nightly report")
	require.NotNil(t, li, "listed")
	seen := map[string]admin.Seen{}
	for _, mv := range li.Masters {
		if mv.Present {
			seen[mv.Master] = admin.Seen{Type: mv.Type, Value: mv.Value}
		}
	}
	// One master changed hands since it was shown: kept there.
	require.NoError(t, rc.Servers[0].Client().Set(ctx, "lock:nightly report", "next", 9*time.Second).Err())
	rep, err := managerLocker{mgr}.ForceExpire(ctx, li.Name, seen)
	require.NoError(t, err)
	outcomes := map[string]quorum.Outcome{}
	for _, n := range rep.Nodes {
		outcomes[n.Node] = n.Outcome
	}
	assert.Equal(t, quorum.OutcomeForeign, outcomes[rc.Servers[0].Name])
	assert.Equal(t, quorum.OutcomeOK, outcomes[rc.Servers[1].Name])
	v, err := rc.Servers[0].Client().Get(ctx, "lock:nightly report").Result()
	require.NoError(t, err)
	assert.Equal(t, "next", v)
	assert.Zero(t, rc.Servers[1].Client().Exists(ctx, "lock:nightly report").Val())

	_, err = managerLocker{mgr}.TryAcquire(ctx, "nightly report", time.Second)
	assert.ErrorIs(t, err, quorum.ErrInvalidName, "acquire keeps the name rule")
}

func TestShownGlob(t *testing.T) {
	for shown, want := range map[string]string{
		"plain":           "plain",
		`x\x1b]0;owned\a`: `x*\]0;owned*`,
		`back\\slash`:     `back\\slash`,
		`zw\u200bj`:       `zw*j`,
		`star*\n`:         `star\**`,
		`bad\xff\xfe`:     `bad**`,
		`trailing\`:       `trailing\\`,
		`hexafter\x07abc`: `hexafter*`,
		`nightly report`:  `nightly report`,
	} {
		assert.Equal(t, want, shownGlob(shown), shown)
	}
}
