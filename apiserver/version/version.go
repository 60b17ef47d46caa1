// Package version says which Kubernetes API level devplane speaks and which
// build is running. kubectl's version-skew logic reads GitVersion, so it must
// stay a valid semver of the API level we implement.
package version

import (
	"fmt"
	"runtime"
	"runtime/debug"

	apimachineryversion "k8s.io/apimachinery/pkg/version"
)

// Kubernetes API level implemented (the k8s.io/* libraries' minor).
const (
	Major = "1"
	Minor = "37"
)

// Set by -ldflags "-X github.com/devplane/devplane/apiserver/version.gitCommit=..."
// when building a release; otherwise read from the Go build info.
var (
	gitCommit = ""
	buildDate = "1970-01-01T00:00:00Z"
	// Devplane is devplane's own release version.
	Devplane = "0.1.0"
)

// Commit returns the short git commit this binary was built from, or "dev".
func Commit() string {
	if gitCommit != "" {
		return gitCommit
	}
	if info, ok := debug.ReadBuildInfo(); ok {
		for _, s := range info.Settings {
			if s.Key == "vcs.revision" && len(s.Value) >= 7 {
				return s.Value[:7]
			}
		}
	}
	return "dev"
}

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
