package admin

import (
	"testing"

	"github.com/stretchr/testify/assert"

	"github.com/redlock/redlock/internal/keyspace"
)

// The values admin spells out for its readers are the ones package quorum
// writes and classifies by (internal/keyspace).
func TestKeyNamesMatchTheKeyspace(t *testing.T) {
	kinds := map[KeyKind]keyspace.KeyKind{
		KeyLock: keyspace.KeyLock, KeyShared: keyspace.KeyShared, KeyWriterWaiting: keyspace.KeyWriterWaiting,
		KeyPermit: keyspace.KeyPermit, KeyLeader: keyspace.KeyLeader, KeyTerm: keyspace.KeyTerm,
		KeyFence: keyspace.KeyFence, KeyQueue: keyspace.KeyQueue, KeyOther: keyspace.KeyOther,
	}
	assert.Len(t, kinds, 9, "every kind distinct")
	for k, want := range kinds {
		assert.Equal(t, string(want), string(k))
		assert.Equal(t, want.Bookkeeping(), k.Bookkeeping(), k)
	}
	assert.Equal(t, keyspace.ForceExpiredMessage, ForceExpiredMessage)
	assert.Equal(t, keyspace.RevokedMessage, RevokedMessage)
	assert.Equal(t, keyspace.ValueReadCap, ValueReadCap)
}
