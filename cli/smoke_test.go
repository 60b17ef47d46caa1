package cli_test

import (
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

// expectedSmokeFailures are the checks of ../shared/kubectl-smoke.sh that
// may fail, each with the reason; today none. Any other failure fails the
// test; a listed check that passes is reported so the list can shrink.
var expectedSmokeFailures = map[string]string{}

// TestKubectlSmoke runs the newcomer's kubectl walk-through (kept beside
// the repo in ../shared) against a real `devplane up`.
func TestKubectlSmoke(t *testing.T) {
	script, err := filepath.Abs(filepath.Join("..", "..", "shared", "kubectl-smoke.sh"))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(script); err != nil {
		t.Skipf("skipping: %s is not here (../shared sits beside the repo only in CI and for developers); the repo's own kubectl tests cover the same ground", script)
	}
	requireKubectl(t)
	dir := t.TempDir()
	p := startUp(t, dir)
	defer p.stop(t)

	cmd := exec.Command("bash", script)
	cmd.Env = append(os.Environ(), "KUBECONFIG="+filepath.Join(dir, "kubeconfig"), "NO_COLOR=1")
	out, err := cmd.CombinedOutput()
	t.Logf("kubectl-smoke.sh:\n%s", out)
	summary := regexp.MustCompile(`(?m)^(\d+) passed, (\d+) failed$`)
	if !summary.Match(out) {
		t.Fatalf("the smoke script did not finish (%v)", err)
	}
	for _, line := range strings.Split(string(out), "\n") {
		switch {
		case strings.HasPrefix(line, "FAIL "):
			name := strings.TrimPrefix(line, "FAIL ")
			if _, expected := expectedSmokeFailures[name]; !expected {
				t.Errorf("smoke check failed: %s", name)
			}
		case strings.HasPrefix(line, "ok   "):
			name := strings.TrimPrefix(line, "ok   ")
			if why, expected := expectedSmokeFailures[name]; expected {
				t.Logf("now passes (remove it from expectedSmokeFailures): %s (%s)", name, why)
			}
		}
	}
}
