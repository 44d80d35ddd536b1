package quorum

import (
	_ "embed"
	"strings"

	"github.com/redis/go-redis/v9"
)

// The Lua scripts, embedded from scripts/*.lua. They run with EVALSHA and fall
// back to EVAL after NOSCRIPT (a restart or SCRIPT FLUSH). Their SHA1s are pinned
// by a test so an edit is always deliberate.
var (
	//go:embed scripts/release.lua
	releaseSrc string
	releaseLua = withWakeHead(releaseSrc)
	//go:embed scripts/extend.lua
	extendLua string
	//go:embed scripts/force_expire.lua
	forceExpireLua string

	forceExpireScript = redis.NewScript(forceExpireLua)
)

// wakeHeadLua holds the Lua functions prune and wakeHead, which release.lua,
// fair_unwind.lua and fair_leave.lua share: Redis scripts cannot include one
// another, so each takes them in place of its include line.
//
//go:embed scripts/wake_head.lua
var wakeHeadLua string

// wakeHeadInclude is the line a script replaces with wakeHeadLua.
const wakeHeadInclude = "-- include: wake_head.lua (prune and wakeHead, shared with the other scripts that wake the head)\n"

// withWakeHead returns src with its include line replaced by wakeHeadLua. It
// panics when src has none: a script edited by mistake fails at start-up.
func withWakeHead(src string) string {
	if !strings.Contains(src, wakeHeadInclude) {
		panic("quorum: script without its wake_head.lua include line")
	}
	return strings.Replace(src, wakeHeadInclude, wakeHeadLua, 1)
}

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
