package quorum

import (
	_ "embed"
	"strings"

	"github.com/redlock/redlock/internal/wire"
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

	forceExpireW = wire.NewScript(forceExpireLua)
)

// Redis scripts cannot include one another: a script that shares functions with
// others has an include line, replaced by the functions' file when the package
// loads (include).

// wakeHeadLua holds the Lua functions prune and wakeHead, which release.lua,
// fair_unwind.lua and fair_leave.lua share.
//
//go:embed scripts/wake_head.lua
var wakeHeadLua string

// keepFlagLua holds the Lua function keepFlag, which the waiters' scripts that
// keep the waiting flag share (fair_acquire.lua, fair_unwind.lua,
// wait_round.lua, wait_mark.lua).
//
//go:embed scripts/keep_flag.lua
var keepFlagLua string

// The include lines a script replaces with wakeHeadLua and keepFlagLua.
const (
	wakeHeadInclude = "-- include: wake_head.lua (prune and wakeHead, shared with the other scripts that wake the head)\n"
	keepFlagInclude = "-- include: keep_flag.lua (keepFlag, shared by the scripts that keep the waiting flag)\n"
)

// withWakeHead returns src with its wake_head.lua include line replaced.
func withWakeHead(src string) string { return include(src, wakeHeadInclude, wakeHeadLua) }

// withKeepFlag returns src with its keep_flag.lua include line replaced.
func withKeepFlag(src string) string { return include(src, keepFlagInclude, keepFlagLua) }

// include returns src with its include line replaced by body. It panics when src
// has none: a script edited by mistake fails at start-up.
func include(src, line, body string) string {
	if !strings.Contains(src, line) {
		panic("quorum: script without its include line " + strings.TrimSpace(line))
	}
	return strings.Replace(src, line, body, 1)
}

// Script replies shared by release and extend. replyOwnTombstone is release.lua's
// where it deleted the tombstone of our value (we were revoked, the name is free
// now): nothing of ours was there, and nothing of another owner's is left, so it
// counts as missing, never as another owner's.
const (
	replyOurs         = 1
	replyMissing      = 0
	replyForeign      = -1
	replyOwnTombstone = 2
)

func outcomeOf(reply int64) Outcome {
	switch reply {
	case replyOurs:
		return OutcomeOK
	case replyMissing, replyOwnTombstone:
		return OutcomeMissing
	default:
		return OutcomeForeign
	}
}
