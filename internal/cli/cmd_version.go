package cli

import (
	"context"
	"fmt"
	"runtime"
	"runtime/debug"
)

// versionArgs are the arguments of version.
type versionArgs struct{ viewArgs }

func (a *versionArgs) parse(p *parsed) error { return p.noArgs("") }

var versionCmd = define(&Command{
	Name:     "version",
	Synopsis: "print the version, the commit and the Go version",
	About: `
Prints the module version, the VCS commit (and whether the tree was modified) and
the Go version, as the build recorded them (runtime/debug.ReadBuildInfo: go
install, go build and go run all record them; a build without VCS information
has no commit and no "modified"). "redlock --version" is the same.`,
	Exits: []Exit{
		{0, "printed"},
		{2, "usage error"},
	},
}, runVersion)

// versionInfo is `version -json`.
type versionInfo struct {
	Version  string `json:"version"`
	Commit   string `json:"commit,omitempty"`
	CommitAt string `json:"commit_time,omitempty"`
	// Modified is set only when the build recorded VCS information.
	Modified  *bool  `json:"modified,omitempty"`
	GoVersion string `json:"go_version"`
	Platform  string `json:"platform"`
}

// buildVersion reads what the build recorded about itself.
func buildVersion() versionInfo {
	v := versionInfo{Version: "(devel)", GoVersion: runtime.Version(), Platform: runtime.GOOS + "/" + runtime.GOARCH}
	bi, ok := debug.ReadBuildInfo()
	if !ok {
		return v
	}
	if bi.Main.Version != "" {
		v.Version = bi.Main.Version
	}
	for _, s := range bi.Settings {
		switch s.Key {
		case "vcs.revision":
			v.Commit = s.Value
		case "vcs.time":
			v.CommitAt = s.Value
		case "vcs.modified":
			mod := s.Value == "true"
			v.Modified = &mod
		}
	}
	return v
}

// human prints one line: version, commit, Go version, platform.
func (v versionInfo) human(env *Env) error {
	line := "redlock " + v.Version
	if v.Commit != "" {
		line += " (" + v.Commit
		if v.Modified != nil && *v.Modified {
			line += ", modified"
		}
		line += ")"
	}
	_, err := fmt.Fprintf(env.Stdout, "%s %s %s\n", line, v.GoVersion, v.Platform)
	return err
}

func runVersion(_ context.Context, env *Env, a *versionArgs) error {
	return show(env, a.json, buildVersion())
}
