package cli

import (
	"sort"
	"time"
)

// orphanReleaseTimeout is the -timeout of the release the guard runs when run
// died before its command (guard.OnOrphan).
const orphanReleaseTimeout = 10 * time.Second

// orphanRelease returns how the guard releases names once run died and the
// command ended: `redlock release` of names with the same topology, the token
// from REDLOCK_TOKEN (in the command's, and so the guard's, environment). What
// may be secret (-masters URLs, -var values) goes in env, never in args.
func (c *common) orphanRelease(names []string) (args, env []string) {
	args = []string{"release", "-timeout", orphanReleaseTimeout.String()}
	if c.masters != "" {
		env = append(env, envMasters+"="+c.masters)
	} else {
		args = append(args, "-config", c.config)
	}
	vars := make([]string, 0, len(c.vars.m))
	for k := range c.vars.m {
		vars = append(vars, k)
	}
	sort.Strings(vars)
	for _, k := range vars {
		env = append(env, "REDLOCK_VAR_"+k+"="+c.vars.m[k])
	}
	return append(append(args, "--"), names...), env
}
