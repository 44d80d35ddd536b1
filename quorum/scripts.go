package quorum

import (
	_ "embed"

	"github.com/redis/go-redis/v9"
)

// The Lua scripts, embedded from scripts/*.lua. They run with EVALSHA and fall
// back to EVAL after NOSCRIPT (a restart or SCRIPT FLUSH). Their SHA1s are pinned
// by a test so an edit is always deliberate.
var (
	//go:embed scripts/release.lua
	releaseLua string
	//go:embed scripts/extend.lua
	extendLua string
	//go:embed scripts/force_expire.lua
	forceExpireLua string

	releaseScript     = redis.NewScript(releaseLua)
	extendScript      = redis.NewScript(extendLua)
	forceExpireScript = redis.NewScript(forceExpireLua)
)

// Script replies shared by release and extend.
const (
	replyOurs    = 1
	replyMissing = 0
	replyForeign = -1
)

func outcomeOf(reply int64) Outcome {
	switch reply {
	case replyOurs:
		return OutcomeOK
	case replyMissing:
		return OutcomeMissing
	default:
		return OutcomeForeign
	}
}
