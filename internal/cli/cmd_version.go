package cli

import (
	"context"
	"fmt"
	"runtime"
	"runtime/debug"
)

var versionCmd = &Command{
	Name:     "version",
	Synopsis: "print the version, the commit and the Go version",
	Usage: `Usage: redlock version [-json]

Prints the module version, the VCS commit (and whether the tree was modified) and
the Go version, as the build recorded them (runtime/debug.ReadBuildInfo: go
install, go build and go run all record them). "redlock --version" is the same.

Flags:
  -json        print one JSON document

Exit codes:
  0  printed
  2  usage error`,
}

func init() {
	versionCmd.Run = runVersion
	register(versionCmd)
}

// versionInfo is `version -json`.
type versionInfo struct {
	Version   string `json:"version"`
	Commit    string `json:"commit,omitempty"`
	CommitAt  string `json:"commit_time,omitempty"`
	Modified  bool   `json:"modified"`
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
			v.Modified = s.Value == "true"
		}
	}
	return v
}

func runVersion(_ context.Context, env *Env, args []string) int {
	fs := newFlagSet(versionCmd)
	asJSON := fs.Bool("json", false, "JSON output")
	if code, ok := parseFlags(env, versionCmd, fs, args); !ok {
		return code
	}
	if fs.NArg() > 0 {
		return usageErrorf(env, versionCmd, "unexpected argument %q", fs.Arg(0))
	}
	v := buildVersion()
	if *asJSON {
		if err := writeDoc(env.Stdout, v); err != nil {
			fmt.Fprintf(env.Stderr, "redlock version: %v\n", err)
			return ExitError
		}
		return ExitOK
	}
	line := "redlock " + v.Version
	if v.Commit != "" {
		line += " (" + v.Commit
		if v.Modified {
			line += ", modified"
		}
		line += ")"
	}
	fmt.Fprintf(env.Stdout, "%s %s %s\n", line, v.GoVersion, v.Platform)
	return ExitOK
}
