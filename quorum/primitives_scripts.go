package quorum

import (
	_ "embed"

	"github.com/redis/go-redis/v9"
)

// The primitives' Lua scripts (scripts/*.lua), run with EVALSHA and EVAL after
// NOSCRIPT like the others; their SHA1s are pinned by a test.
var (
	//go:embed scripts/sem_acquire.lua
	semAcquireLua string
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

	semAcquireScript    = redis.NewScript(semAcquireLua)
	multiAcquireScript  = redis.NewScript(multiAcquireLua)
	multiExtendScript   = redis.NewScript(multiExtendLua)
	multiReleaseScript  = redis.NewScript(multiReleaseLua)
	sharedAcquireScript = redis.NewScript(sharedAcquireLua)
	sharedExtendScript  = redis.NewScript(sharedExtendLua)
	sharedReleaseScript = redis.NewScript(sharedReleaseLua)
	xwaitMarkScript     = redis.NewScript(xwaitMarkLua)
	electTermScript     = redis.NewScript(electTermLua)
	electReadScript     = redis.NewScript(electReadLua)
	electProclaimScript = redis.NewScript(electProclaimLua)
)
