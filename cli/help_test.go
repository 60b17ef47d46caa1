package cli_test

import (
	"regexp"
	"strings"
	"testing"

	"github.com/devplane/devplane/cli"
)

// flagSpec is one name of a flag as help prints it: the name, then urfave's
// placeholder "value" (and its repeat for slices) or nothing.
var flagSpec = regexp.MustCompile(`^--?[a-z0-9-]+( value( \[ --?[a-z0-9-]+ value \])?)?$`)

// TestHelpShowsNoBackquotedPlaceholders checks every command's help: urfave/cli
// takes a backquoted word in a flag's usage as its value's name, so a usage
// that quotes a command with backquotes prints it beside the flag.
func TestHelpShowsNoBackquotedPlaceholders(t *testing.T) {
	for _, cmd := range cli.NewApp().Commands {
		r := run(t, devplaneBin, cmd.Name, "--help")
		if r.code != 0 {
			t.Errorf("%s --help: exit %d %s", cmd.Name, r.code, r.stderr)
			continue
		}
		flags := 0
		for _, line := range strings.Split(r.stdout, "\n") {
			line = strings.TrimSpace(line)
			if !strings.HasPrefix(line, "-") {
				continue
			}
			flags++
			spec, _, _ := strings.Cut(line, "  ") // the usage column starts after two spaces
			for _, name := range strings.Split(spec, ", ") {
				if !flagSpec.MatchString(name) {
					t.Errorf("%s --help prints the flag as %q:\n%s", cmd.Name, name, line)
				}
			}
		}
		if flags == 0 {
			t.Errorf("%s --help lists no flags:\n%s", cmd.Name, r.stdout)
		}
	}
}
