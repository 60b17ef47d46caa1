package version

import (
	"runtime/debug"
	"testing"
)

func TestResolveVersionAndCommit(t *testing.T) {
	installed := &debug.BuildInfo{Main: debug.Module{Path: "github.com/devplane/devplane", Version: "v0.3.1"}}
	checkout := &debug.BuildInfo{Main: debug.Module{Version: "(devel)"}, Settings: []debug.BuildSetting{
		{Key: "vcs.revision", Value: "0123456789abcdef"}, {Key: "vcs.modified", Value: "true"}}}
	for _, c := range []struct {
		name, stampedVersion, stampedCommit string
		info                                *debug.BuildInfo
		version, commit                     string
	}{
		{"task release", "v0.2.0", "abc1234", checkout, "0.2.0", "abc1234"},
		{"go install module@version", "", "", installed, "0.3.1", "dev"},
		{"go build in a modified checkout", "", "", checkout, baseVersion + "-dev", "0123456-dirty"},
		{"no build info", "", "", nil, baseVersion + "-dev", "dev"},
	} {
		if got := resolveVersion(c.stampedVersion, c.info); got != c.version {
			t.Errorf("%s: version %q, want %q", c.name, got, c.version)
		}
		if got := resolveCommit(c.stampedCommit, c.info); got != c.commit {
			t.Errorf("%s: commit %q, want %q", c.name, got, c.commit)
		}
	}
}
