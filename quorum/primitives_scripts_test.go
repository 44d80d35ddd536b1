package quorum

import (
	"crypto/sha1"
	"encoding/hex"
	"testing"

	"github.com/stretchr/testify/assert"
)

// TestPrimitiveScriptSHA1sArePinned pins the primitives' scripts as
// TestScriptSHA1sArePinned pins the lock's: an edit must be deliberate.
func TestPrimitiveScriptSHA1sArePinned(t *testing.T) {
	pins := map[string]struct {
		src, sha string
		script   interface{ Hash() string } // a wire.Script
	}{
		"sem_acquire":    {semAcquireLua, "f88215d7afd3e40b50716c450fe06080fd0f1616", semAcquireScript},
		"sem_find":       {semFindLua, "d49ffe118d2e0e07e5d67d511e690b4f80c6956b", semFindScript},
		"sem_unwind":     {semUnwindLua, "2fe3788d632dccc4dd8faa8717f3533e4113ab46", semUnwindScript},
		"multi_acquire":  {multiAcquireLua, "90df1110c0b0d636ea421b6152853b233b6820d5", multiAcquireScript},
		"multi_extend":   {multiExtendLua, "a2b8398e03dd2d220ce9f0d4eb2adf5234a73f9b", multiExtendScript},
		"multi_release":  {multiReleaseLua, "7efca65d19f19af999beed9355d30d6cf5daebb8", multiReleaseScript},
		"shared_acquire": {sharedAcquireLua, "e7b330bbb3dca54d8d04273a1b006a3283bc267a", sharedAcquireScript},
		"shared_extend":  {sharedExtendLua, "e0dfd8f970006c7897cc0d9f9cf4716914d75f02", sharedExtendScript},
		"shared_release": {sharedReleaseLua, "4ce8508f3f849c9abd6dc3b1b851b3341e8634f1", sharedReleaseScript},
		"xwait_mark":     {xwaitMarkLua, "b757e540b8f5d7b68bf02a4f30f3db128be26daf", xwaitMarkScript},
		"elect_term":     {electTermLua, "b08ecb16ccf68ec721c8749c4aa7c194f6c62c4e", electTermScript},
		"elect_read":     {electReadLua, "535ccb0cea3876333be847be930f061e2b6cea6a", electReadScript},
		"elect_proclaim": {electProclaimLua, "a01a81308b54f06aa947b8a231092bbb955ff707", electProclaimScript},
		"shared_members": {sharedMembersLua, "6e6b87042258e40f3ecd9fdda146a88ce967d637", sharedMembersScript},
	}
	for name, p := range pins {
		sum := sha1.Sum([]byte(p.src))
		got := hex.EncodeToString(sum[:])
		assert.Equal(t, p.sha, got, "%s.lua changed: update its pinned SHA1", name)
		assert.Equal(t, got, p.script.Hash(), "%s: the script as sent hashes the same source", name)
	}
}
