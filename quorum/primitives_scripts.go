package quorum

import (
	_ "embed"

	"github.com/redlock/redlock/internal/wire"
)

// The primitives' Lua scripts (scripts/*.lua), run with EVALSHA and EVAL after
// NOSCRIPT like the others, on the pipelined wire path (scriptOnAll for an
// integer reply, scriptEach for the election's read and the search of a permit
// by its value and an administrator's read of a shared key's members, whose
// replies are arrays); their SHA1s are pinned by a test.
var (
	//go:embed scripts/sem_acquire.lua
	semAcquireLua string
	//go:embed scripts/sem_unwind.lua
	semUnwindLua string
	//go:embed scripts/sem_find.lua
	semFindLua string
	//go:embed scripts/multi_acquire.lua
	multiAcquireLua string
	//go:embed scripts/multi_extend.lua
	multiExtendLua string
	//go:embed scripts/multi_release.lua
	multiReleaseLua string
	//go:embed scripts/shared_acquire.lua
	sharedAcquireLua string
	//go:embed scripts/shared_extend.lua
	sharedExtendLua string
	//go:embed scripts/shared_release.lua
	sharedReleaseLua string
	//go:embed scripts/xwait_mark.lua
	xwaitMarkLua string
	//go:embed scripts/elect_term.lua
	electTermLua string
	//go:embed scripts/elect_read.lua
	electReadLua string
	//go:embed scripts/elect_proclaim.lua
	electProclaimLua string
	//go:embed scripts/shared_members.lua
	sharedMembersLua string

	semAcquireScript    = wire.NewScript(semAcquireLua)
	semUnwindScript     = wire.NewScript(semUnwindLua)
	multiAcquireScript  = wire.NewScript(multiAcquireLua)
	multiExtendScript   = wire.NewScript(multiExtendLua)
	multiReleaseScript  = wire.NewScript(multiReleaseLua)
	sharedAcquireScript = wire.NewScript(sharedAcquireLua)
	sharedExtendScript  = wire.NewScript(sharedExtendLua)
	sharedReleaseScript = wire.NewScript(sharedReleaseLua)
	xwaitMarkScript     = wire.NewScript(xwaitMarkLua)
	electTermScript     = wire.NewScript(electTermLua)
	electReadScript     = wire.NewScript(electReadLua)
	semFindScript       = wire.NewScript(semFindLua)
	electProclaimScript = wire.NewScript(electProclaimLua)
	sharedMembersScript = wire.NewScript(sharedMembersLua)
)
