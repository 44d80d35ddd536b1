package cli

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"os"
	"path/filepath"
	"runtime"

	hclv2 "github.com/hashicorp/hcl/v2"

	"github.com/redlock/redlock/hcl"
)

// The topology file's warnings (a password written in it, say) are for the
// person who edits the file, not for every cron run: the lock commands show
// them once per content of the file, and never under -json. validate and plan
// show them every time; so does any command when this user's cache directory
// cannot be written (nothing would remember that they were shown).

// envWarnings, set to "always", shows the file's warnings on every command.
const envWarnings = "REDLOCK_WARNINGS"

// warnMode says when a command shows the file's warnings.
type warnMode int

const (
	warnOnce   warnMode = iota // once per content of the file (the default)
	warnAlways                 // every time (plan, apply: they check the file)
	warnNever                  // never (bench's workers: bench shows them)
)

// showWarnings prints the warnings diags of the file (cfg loaded from c.config)
// unless they were shown before for this very content, or the command's output
// is a -json document.
func (c *common) showWarnings(env *Env, cfg *hcl.Config, diags hclv2.Diagnostics) {
	if c.json || c.warnings == warnNever {
		return
	}
	mark := ""
	if c.warnings == warnOnce && getenv(env, envWarnings) != "always" {
		mark = warnedMark(cacheDir(env), c.config, cfg, diags)
		if mark != "" {
			if _, err := os.Stat(mark); err == nil {
				return // shown before for this content
			}
		}
	}
	_ = cfg.WriteDiagnostics(env.Stderr, diags, colorFor(env.Stderr, env.Getenv))
	if mark != "" && os.MkdirAll(filepath.Dir(mark), 0o700) == nil {
		_ = os.WriteFile(mark, nil, 0o600)
	}
}

// cacheDir is this user's cache directory, from env's environment (as
// os.UserCacheDir, for Unix): $XDG_CACHE_HOME, else $HOME/.cache
// ($HOME/Library/Caches on macOS); "" when neither is set.
func cacheDir(env *Env) string {
	if d := getenv(env, "XDG_CACHE_HOME"); filepath.IsAbs(d) {
		return d
	}
	home := getenv(env, "HOME")
	switch {
	case home == "":
		return ""
	case runtime.GOOS == "darwin":
		return filepath.Join(home, "Library", "Caches")
	}
	return filepath.Join(home, ".cache")
}

// warnedMark is the file that records that the warnings of the file at path,
// with its current content, were shown: in the cache directory dir, named by a
// hash of the path, the content and the warnings. "" when there is no cache
// directory or the file cannot be read again.
func warnedMark(dir, path string, cfg *hcl.Config, diags hclv2.Diagnostics) string {
	if dir == "" {
		return ""
	}
	abs, err := filepath.Abs(path)
	if err != nil {
		return ""
	}
	content, err := os.ReadFile(abs)
	if err != nil {
		return ""
	}
	var text bytes.Buffer
	_ = cfg.WriteDiagnostics(&text, diags, false)
	h := sha256.New()
	for _, part := range [][]byte{[]byte(abs), content, text.Bytes()} {
		h.Write(part)
		h.Write([]byte{0})
	}
	return filepath.Join(dir, "redlock", "warned", hex.EncodeToString(h.Sum(nil))[:32])
}

// getenv reads the environment of env, "" when it has none.
func getenv(env *Env, name string) string {
	if env == nil || env.Getenv == nil {
		return ""
	}
	return env.Getenv(name)
}
