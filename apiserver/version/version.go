// Package version says which Kubernetes API level devplane speaks and which
// build is running. kubectl's version-skew logic reads GitVersion, so it must
// stay a valid semver of the API level we implement.
package version

import (
	"fmt"
	"runtime"
	"runtime/debug"
	"strings"

	apimachineryversion "k8s.io/apimachinery/pkg/version"
)

// Kubernetes API level implemented (the k8s.io/* libraries' minor).
const (
	Major = "1"
	Minor = "37"
)

// Set at build time by `task release`:
//
//	-ldflags "-X github.com/devplane/devplane/apiserver/version.stampedVersion=0.2.0
//	          -X github.com/devplane/devplane/apiserver/version.gitCommit=<sha>
//	          -X github.com/devplane/devplane/apiserver/version.buildDate=<RFC 3339>"
//
// Unstamped builds read what Go recorded instead (`go install
// github.com/devplane/devplane@v0.2.0` records the module version; a build
// in a git checkout records the commit, unless -buildvcs=false).
var (
	stampedVersion = ""
	gitCommit      = ""
	buildDate      = "1970-01-01T00:00:00Z"
)

// baseVersion is the release the source is heading to; a build with no
// other version information reports it with a "-dev" suffix.
const baseVersion = "0.1.0"

// Devplane is devplane's own version: stamped, else the module version Go
// recorded, else baseVersion-dev.
var Devplane = resolveVersion(stampedVersion, buildInfo())

// Commit returns the short git commit this binary was built from
// ("-dirty" when built from a modified tree), or "dev".
func Commit() string { return resolveCommit(gitCommit, buildInfo()) }

func buildInfo() *debug.BuildInfo {
	info, _ := debug.ReadBuildInfo()
	return info
}

func resolveVersion(stamped string, info *debug.BuildInfo) string {
	if stamped != "" {
		return strings.TrimPrefix(stamped, "v")
	}
	if info != nil && info.Main.Version != "" && info.Main.Version != "(devel)" {
		return strings.TrimPrefix(info.Main.Version, "v")
	}
	return baseVersion + "-dev"
}

func resolveCommit(stamped string, info *debug.BuildInfo) string {
	if stamped != "" {
		return stamped
	}
	if info == nil {
		return "dev"
	}
	commit, dirty := "", false
	for _, s := range info.Settings {
		switch s.Key {
		case "vcs.revision":
			commit = s.Value
		case "vcs.modified":
			dirty = s.Value == "true"
		}
	}
	if len(commit) < 7 {
		return "dev"
	}
	if dirty {
		return commit[:7] + "-dirty"
	}
	return commit[:7]
}

// BuildDate is when a release was built (the epoch when not stamped).
func BuildDate() string { return buildDate }

// Get returns the /version answer.
func Get() apimachineryversion.Info {
	commit := Commit()
	return apimachineryversion.Info{
		Major:        Major,
		Minor:        Minor,
		GitVersion:   fmt.Sprintf("v%s.%s.0-devplane+%s", Major, Minor, commit),
		GitCommit:    commit,
		GitTreeState: "clean",
		BuildDate:    buildDate,
		GoVersion:    runtime.Version(),
		Compiler:     runtime.Compiler,
		Platform:     runtime.GOOS + "/" + runtime.GOARCH,
	}
}
