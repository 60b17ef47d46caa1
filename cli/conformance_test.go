package cli_test

import (
	"bufio"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strings"
	"testing"
	"time"
)

// conformanceList records, for every conformance spec of the Kubernetes
// version devplane speaks, what it does against `devplane up --nodes 3`.
const conformanceList = "../testdata/conformance/kube-v1.37.2.txt"

// conformanceReasons are the only reasons a spec may be listed as failing:
// what a control plane without containers cannot give, and "open": a
// difference from Kubernetes not fixed yet, listed so that the run guards
// everything else meanwhile. Open ones are to be fixed, never added to.
var conformanceReasons = map[string]string{
	"runtime": "needs a container runtime (container logs, exec, a container's own output)",
	"network": "needs a pod network (traffic to pods, services or node ports)",
	"image":   "needs an image that actually serves (a webhook, an extension API server, a sample app)",
	"open":    "a difference from Kubernetes still to fix",
}

// expectation is one line of the conformance list.
type expectation struct {
	outcome string // "pass" or one of conformanceReasons
	line    int
}

// readConformanceList parses the list: "<outcome><TAB><spec name>" lines,
// with # comments and blank lines between them.
func readConformanceList(path string) (map[string]expectation, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	out := map[string]expectation{}
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 64*1024), 1024*1024)
	for n := 1; sc.Scan(); n++ {
		line := sc.Text()
		if strings.TrimSpace(line) == "" || strings.HasPrefix(line, "#") {
			continue
		}
		outcome, spec, ok := strings.Cut(line, "\t")
		if !ok || spec == "" {
			return nil, fmt.Errorf("%s:%d: want \"<outcome>\\t<spec>\", got %q", path, n, line)
		}
		if _, known := conformanceReasons[outcome]; outcome != "pass" && !known {
			return nil, fmt.Errorf("%s:%d: outcome %q is neither pass nor an allowed reason (%s)", path, n, outcome, reasonNames())
		}
		if prev, dup := out[spec]; dup {
			return nil, fmt.Errorf("%s:%d: spec listed again (first on line %d): %s", path, n, prev.line, spec)
		}
		out[spec] = expectation{outcome: outcome, line: n}
	}
	return out, sc.Err()
}

func reasonNames() string {
	names := make([]string, 0, len(conformanceReasons))
	for r := range conformanceReasons {
		names = append(names, r)
	}
	sort.Strings(names)
	return strings.Join(names, ", ")
}

// readLines reads a file of one entry a line; a missing file is empty.
func readLines(path string) ([]string, error) {
	b, err := os.ReadFile(path)
	if os.IsNotExist(err) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	var out []string
	for _, l := range strings.Split(string(b), "\n") {
		if l != "" {
			out = append(out, l)
		}
	}
	return out, nil
}

// compareConformance checks a run's results against the list: every spec
// that ran must be listed, a listed pass must pass, and a listed failure
// must fail (so the list shrinks as devplane grows). It returns one
// problem a line.
func compareConformance(list map[string]expectation, passed, failed []string) []string {
	var problems []string
	for _, spec := range passed {
		e, listed := list[spec]
		switch {
		case !listed:
			problems = append(problems, "passed but not listed (add it as pass): "+spec)
		case e.outcome != "pass":
			problems = append(problems, fmt.Sprintf("passes now but is listed as %s on line %d (list it as pass): %s", e.outcome, e.line, spec))
		}
	}
	for _, spec := range failed {
		e, listed := list[spec]
		switch {
		case !listed:
			problems = append(problems, "failed and not listed: "+spec)
		case e.outcome == "pass":
			problems = append(problems, fmt.Sprintf("failed, listed as pass on line %d: %s", e.line, spec))
		}
	}
	return problems
}

func TestConformanceListComparison(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "list.txt")
	body := "# comment\n\npass\tA passes\nruntime\tB reads logs\nnetwork\tC curls a pod\n"
	if err := os.WriteFile(path, []byte(body), 0o644); err != nil {
		t.Fatal(err)
	}
	list, err := readConformanceList(path)
	if err != nil {
		t.Fatal(err)
	}
	if got := compareConformance(list, []string{"A passes"}, []string{"B reads logs", "C curls a pod"}); len(got) != 0 {
		t.Errorf("a run as listed gave problems: %q", got)
	}
	got := compareConformance(list, []string{"B reads logs", "D new"}, []string{"A passes", "E new"})
	want := []string{
		"passes now but is listed as runtime on line 4 (list it as pass): B reads logs",
		"passed but not listed (add it as pass): D new",
		"failed, listed as pass on line 3: A passes",
		"failed and not listed: E new",
	}
	if strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Errorf("problems:\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
	for _, bad := range []string{"flaky\tX\n", "pass X without a tab\n", "pass\tX\npass\tX\n"} {
		if err := os.WriteFile(path, []byte(bad), 0o644); err != nil {
			t.Fatal(err)
		}
		if _, err := readConformanceList(path); err == nil {
			t.Errorf("list %q read without error", bad)
		}
	}
}

// TestConformanceListIsWellFormed reads the repo's list, so a bad edit
// fails in every run, not only in the opt-in one.
func TestConformanceListIsWellFormed(t *testing.T) {
	list, err := readConformanceList(conformanceList)
	if err != nil {
		t.Fatal(err)
	}
	if len(list) == 0 {
		t.Fatalf("%s lists no spec", conformanceList)
	}
}

// TestConformance runs Kubernetes' own conformance suite (kube's e2e.test,
// every [Conformance] spec, or DEVPLANE_CONFORMANCE_FOCUS's) against
// `devplane up --nodes 3` as users run it, and compares the outcome with
// the list in testdata. Opt-in (task conformance): a whole run takes most
// of an hour on two cores.
func TestConformance(t *testing.T) {
	if os.Getenv("DEVPLANE_CONFORMANCE") == "" {
		t.Skip("opt-in: `task conformance` (DEVPLANE_CONFORMANCE=1) runs kube's conformance suite against devplane")
	}
	bin := filepath.Join(peerDir(), "bin")
	for _, b := range []string{"e2e.test", "ginkgo"} {
		if _, err := os.Stat(filepath.Join(bin, b)); err != nil {
			t.Skipf("skipping: no %s in %s (build it with ../shared/peer/build.sh e2e)", b, bin)
		}
	}
	script := peerScript("conformance.sh")
	if script == "" {
		t.Skipf("skipping: no conformance.sh (it comes with ../shared/peer)")
	}
	if deadline, ok := t.Deadline(); ok && time.Until(deadline) < 70*time.Minute {
		t.Fatalf("a conformance run needs up to an hour: run it with -timeout 120m (task conformance does)")
	}
	list, err := readConformanceList(conformanceList)
	if err != nil {
		t.Fatal(err)
	}
	requireKubectl(t)
	dir := t.TempDir()
	// kube's e2e rolls a Deployment out to webserver:404 (test/e2e/apps/
	// deployment.go) and a DaemonSet to foo:non-existent (daemon_set.go),
	// images Docker Hub does not have: tell devplane so, as a user names
	// the images their registries lack.
	p := startUp(t, dir, "--nodes", "3", "--unpullable-images", "webserver:404,foo:non-existent")
	defer p.stop(t)

	out := filepath.Join(dir, "conformance-out")
	if keep := os.Getenv("DEVPLANE_CONFORMANCE_OUT"); keep != "" {
		out = keep
	}
	cmd := exec.Command("bash", script)
	cmd.Env = append(os.Environ(), "KUBECONFIG="+filepath.Join(dir, "kubeconfig"), "OUT="+out)
	if focus := os.Getenv("DEVPLANE_CONFORMANCE_FOCUS"); focus != "" {
		cmd.Env = append(cmd.Env, "FOCUS="+focus)
	}
	summary, err := cmd.CombinedOutput()
	t.Logf("conformance.sh: %s", summary)
	if err != nil {
		t.Fatalf("conformance.sh failed (%v); its log is %s/run.log", err, out)
	}
	passed, err := readLines(filepath.Join(out, "passed.txt"))
	if err != nil {
		t.Fatal(err)
	}
	failed, err := readLines(filepath.Join(out, "failed.txt"))
	if err != nil {
		t.Fatal(err)
	}
	if len(passed)+len(failed) == 0 {
		t.Fatalf("no spec ran; see %s/run.log", out)
	}
	if failures, err := os.ReadFile(filepath.Join(out, "failures.txt")); err == nil && len(failures) > 0 {
		t.Logf("failures, each with its first line:\n%s", failures)
	}
	for _, problem := range compareConformance(list, passed, failed) {
		t.Error(problem)
	}
	open := 0
	for _, spec := range failed {
		if list[spec].outcome == "open" {
			open++
		}
	}
	if open > 0 {
		t.Logf("%d specs still fail on a difference from Kubernetes (listed as open)", open)
	}
	t.Logf("%d passed, %d failed (results in %s)", len(passed), len(failed), out)
}
