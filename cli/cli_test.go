package cli_test

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"sigs.k8s.io/yaml"
	"slices"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"
)

// devplaneBin is the devplane binary built once for these tests.
var devplaneBin string

func TestMain(m *testing.M) {
	if dir := os.Getenv(floorServerEnv); dir != "" {
		serveFloors(dir) // a child of BenchmarkServedLoad, not a test run
		return
	}
	dir, err := os.MkdirTemp("", "devplane-cli-test-")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	devplaneBin = filepath.Join(dir, "devplane")
	build := exec.Command("go", "build", "-o", devplaneBin, "github.com/devplane/devplane")
	build.Stdout, build.Stderr = os.Stderr, os.Stderr
	if err := build.Run(); err != nil {
		fmt.Fprintln(os.Stderr, "building devplane:", err)
		os.Exit(1)
	}
	evictFromPageCache(devplaneBin)
	code := m.Run()
	os.RemoveAll(dir)
	os.Exit(code)
}

// requireKubectl returns kubectl's path; CI must have it (.ci/run installs it).
func requireKubectl(t *testing.T) string {
	t.Helper()
	path, err := exec.LookPath("kubectl")
	if err != nil {
		if os.Getenv("CI") != "" {
			t.Fatal("kubectl is not on PATH in CI: .ci/run should have installed it")
		}
		t.Skip("kubectl is not on PATH; install it to run this test")
	}
	return path
}

type upProcess struct {
	cmd     *exec.Cmd
	dataDir string
	out     *outputBuffer
	exited  chan error
}

// outputBuffer is a process's output, written by exec's copying goroutine
// while the test reads it.
type outputBuffer struct {
	mu  sync.Mutex
	buf bytes.Buffer
}

func (b *outputBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.Write(p)
}

func (b *outputBuffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.String()
}

// startUp runs `devplane up` on a free port in dataDir and waits for readiness.
func startUp(t *testing.T, dataDir string, extra ...string) *upProcess {
	t.Helper()
	args := append([]string{"up", "--data-dir", dataDir, "--port", "0", "--merge-kubeconfig=false"}, extra...)
	cmd := exec.Command(devplaneBin, args...)
	out := &outputBuffer{}
	cmd.Stdout, cmd.Stderr = out, out
	cmd.Env = append(os.Environ(), "NO_COLOR=1", "KUBECONFIG="+filepath.Join(t.TempDir(), "untouched"))
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	p := &upProcess{cmd: cmd, dataDir: dataDir, out: out, exited: make(chan error, 1)}
	go func() { p.exited <- cmd.Wait() }()
	t.Cleanup(func() {
		if cmd.ProcessState == nil {
			_ = cmd.Process.Kill()
			<-p.exited
		}
	})
	deadline := time.Now().Add(30 * time.Second)
	for {
		if status := run(t, devplaneBin, "status", "--data-dir", dataDir); status.code == 0 {
			return p
		}
		select {
		case err := <-p.exited:
			t.Fatalf("devplane up exited early (%v):\n%s", err, out)
		default:
		}
		if time.Now().After(deadline) {
			t.Fatalf("devplane up not ready after 30s:\n%s", out)
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// stop sends SIGTERM and expects a clean exit 0 within 5s.
func (p *upProcess) stop(t *testing.T) {
	t.Helper()
	if err := p.cmd.Process.Signal(syscall.SIGTERM); err != nil {
		t.Fatal(err)
	}
	select {
	case err := <-p.exited:
		if err != nil {
			t.Fatalf("devplane up exited with %v after SIGTERM:\n%s", err, p.out)
		}
	case <-time.After(5 * time.Second):
		t.Fatalf("devplane up did not exit within 5s of SIGTERM:\n%s", p.out)
	}
}

type result struct {
	code   int
	stdout string
	stderr string
}

func run(t *testing.T, name string, args ...string) result {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	cmd := exec.CommandContext(ctx, name, args...)
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	cmd.Env = append(os.Environ(), "NO_COLOR=1")
	err := cmd.Run()
	code := 0
	if err != nil {
		exitErr, ok := err.(*exec.ExitError)
		if !ok {
			t.Fatalf("running %s %v: %v", name, args, err)
		}
		code = exitErr.ExitCode()
	}
	return result{code: code, stdout: stdout.String(), stderr: stderr.String()}
}

func TestUpServesKubectlAndRestartsWithSameCA(t *testing.T) {
	kubectl := requireKubectl(t)
	dir := t.TempDir()
	p := startUp(t, dir)
	kubeconfig := filepath.Join(dir, "kubeconfig")

	v := run(t, kubectl, "--kubeconfig", kubeconfig, "version", "-o", "json")
	if v.code != 0 || !strings.Contains(v.stdout, `"serverVersion"`) || !strings.Contains(v.stdout, "devplane") {
		t.Fatalf("kubectl version: %d\n%s\n%s", v.code, v.stdout, v.stderr)
	}
	rz := run(t, kubectl, "--kubeconfig", kubeconfig, "get", "--raw", "/readyz?verbose")
	if rz.code != 0 || !strings.Contains(rz.stdout, "[+]etcd ok") || !strings.Contains(rz.stdout, "readyz check passed") {
		t.Fatalf("kubectl get --raw /readyz?verbose: %d\n%s\n%s", rz.code, rz.stdout, rz.stderr)
	}
	st := run(t, devplaneBin, "status", "--data-dir", dir, "-o", "json")
	var report struct {
		Ready  bool                    `json:"ready"`
		Checks []struct{ Name string } `json:"checks"`
	}
	if st.code != 0 || json.Unmarshal([]byte(st.stdout), &report) != nil || !report.Ready || len(report.Checks) == 0 {
		t.Fatalf("status -o json: %d %q", st.code, st.stdout)
	}
	// Machine-readable: lower-camel-case keys and named states, in JSON
	// and YAML alike.
	for _, format := range []string{"json", "yaml"} {
		out := run(t, devplaneBin, "status", "--data-dir", dir, "-o", format)
		var doc map[string]any
		if err := yaml.Unmarshal([]byte(out.stdout), &doc); err != nil || out.code != 0 {
			t.Fatalf("status -o %s: %d %v %q", format, out.code, err, out.stdout)
		}
		if doc["running"] != true || doc["ready"] != true || doc["name"] == nil {
			t.Errorf("status -o %s: %v", format, doc)
		}
		checks, _ := doc["checks"].([]any)
		states := map[string]bool{}
		for _, c := range checks {
			check := c.(map[string]any)
			for key := range check {
				if key[0] < 'a' || key[0] > 'z' {
					t.Errorf("status -o %s: key %q is not lower camel case", format, key)
				}
			}
			states[check["kind"].(string)+"="+check["state"].(string)] = true
		}
		if !states["check=ok"] || !states["hook=done"] {
			t.Errorf("status -o %s: states %v, want checks ok and hooks done", format, states)
		}
		for s := range states {
			kind, state, _ := strings.Cut(s, "=")
			if !slices.Contains(map[string][]string{"check": {"ok", "failing", "pending"}, "hook": {"pending", "running", "done", "failed"},
				"step": {"pending", "running", "done", "failed"}}[kind], state) {
				t.Errorf("status -o %s: unknown state %s", format, s)
			}
		}
	}
	if r := run(t, devplaneBin, "reset", "--data-dir", dir); r.code != 1 || !strings.Contains(r.stdout+r.stderr, "running") {
		t.Fatalf("reset while running: %d %q %q", r.code, r.stdout, r.stderr)
	}
	kc := run(t, devplaneBin, "kubeconfig", "--data-dir", dir)
	if kc.code != 0 || !strings.Contains(kc.stdout, "devplane-default") || !strings.Contains(kc.stdout, "client-certificate-data") {
		t.Fatalf("kubeconfig: %d %q", kc.code, kc.stderr)
	}
	if !strings.Contains(p.out.String(), "ready in") {
		t.Errorf("no ready summary in output:\n%s", p.out)
	}
	if strings.Contains(p.out.String(), "\x1b[") {
		t.Errorf("escape codes in piped output with NO_COLOR:\n%q", p.out)
	}

	ca, err := os.ReadFile(filepath.Join(dir, "pki", "ca.crt"))
	if err != nil {
		t.Fatal(err)
	}
	p.stop(t)
	if st := run(t, devplaneBin, "status", "--data-dir", dir); st.code != 2 {
		t.Errorf("status after stop = %d, want 2 (nothing running)", st.code)
	}

	p2 := startUp(t, dir)
	ca2, err := os.ReadFile(filepath.Join(dir, "pki", "ca.crt"))
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(ca, ca2) {
		t.Error("the CA was regenerated on restart")
	}
	p2.stop(t)

	if r := run(t, devplaneBin, "reset", "--data-dir", dir); r.code != 0 {
		t.Fatalf("reset: %d %s", r.code, r.stderr)
	}
	if _, err := os.Stat(dir); !os.IsNotExist(err) {
		t.Errorf("data dir still there after reset: %v", err)
	}
}

func TestTwoInstancesSideBySide(t *testing.T) {
	kubectl := requireKubectl(t)
	a, b := t.TempDir(), t.TempDir()
	pa := startUp(t, a, "--name", "one")
	pb := startUp(t, b, "--name", "two")
	for _, dir := range []string{a, b} {
		r := run(t, kubectl, "--kubeconfig", filepath.Join(dir, "kubeconfig"), "get", "--raw", "/readyz")
		if r.code != 0 || r.stdout != "ok" {
			t.Errorf("instance in %s: %d %q %q", dir, r.code, r.stdout, r.stderr)
		}
	}
	pa.stop(t)
	pb.stop(t)
}

func TestBadFlagsGiveOneClearLine(t *testing.T) {
	busy, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer busy.Close()
	busyPort := fmt.Sprint(busy.Addr().(*net.TCPAddr).Port)
	file := filepath.Join(t.TempDir(), "a-file")
	if err := os.WriteFile(file, nil, 0o600); err != nil {
		t.Fatal(err)
	}
	cases := []struct {
		name string
		args []string
		want string
	}{
		{"port out of range", []string{"--port", "70000"}, "--port 70000 is out of range"},
		{"bad CIDR", []string{"--service-cluster-ip-range", "nonsense"}, `--service-cluster-ip-range "nonsense" is not a CIDR`},
		{"unwritable data dir", []string{"--data-dir", filepath.Join(file, "sub")}, "is not writable"},
		{"busy port", []string{"--port", busyPort}, "already in use"},
		{"bad authorization mode", []string{"--authorization-mode", "ABAC"}, `--authorization-mode "ABAC": use RBAC or AlwaysAllow`},
		{"negative nodes", []string{"--nodes", "-1"}, "--nodes -1 is out of range"},
		{"bad node capacity", []string{"--node-capacity", "cpu=lots"}, `--node-capacity "cpu=lots": cpu=lots: not a quantity`},
		{"pod network too small", []string{"--nodes", "300"}, "--cluster-cidr 10.244.0.0/16 holds 256 blocks of /24, fewer than --nodes 300: use a /15 or larger --cluster-cidr"},
		{"bad cluster CIDR", []string{"--cluster-cidr", "10.244.0.0"}, `--cluster-cidr "10.244.0.0" is not a CIDR`},
		{"node blocks too small", []string{"--node-cidr-mask-size", "28"}, "--node-cidr-mask-size 28 leaves 13 addresses for each node's 110 pods"},
		{"bad unpullable image", []string{"--unpullable-images", "Web:404"}, `--unpullable-images: unpullable image "Web:404": invalid reference format: repository name (library/Web) must be lowercase`},
		{"bad compression CIDR", []string{"--disable-compression-for-client-ips", "127.0.0.1"}, `--disable-compression-for-client-ips "127.0.0.1" is not a CIDR`},
		{"audit log without a policy", []string{"--audit-log-path", "-"}, "--audit-policy-file: an audit policy is needed to write audit events"},
		{"empty audit policy", []string{"--audit-policy-file", file, "--audit-log-path", "-"}, "--audit-policy-file " + file + ": "},
		{"bad audit log format", []string{"--audit-log-format", "xml"}, `--audit-log-format "xml": use json or legacy`},
		{"old audit log version", []string{"--audit-log-version", "audit.k8s.io/v1beta1"}, `--audit-log-version "audit.k8s.io/v1beta1": invalid group version, allowed versions are ["audit.k8s.io/v1"]`},
		{"bad audit webhook version", []string{"--audit-webhook-version", "a/b/c"}, `--audit-webhook-version "a/b/c": unexpected GroupVersion string: a/b/c`},
		{"bad audit truncate event size", []string{"--audit-log-truncate-max-event-size", "0"}, "--audit-log-truncate-max-event-size: invalid audit truncate log max event size 0, must be a positive number"},
		{"audit truncate batch below event", []string{"--audit-webhook-truncate-max-batch-size", "1000"}, "--audit-webhook-truncate-max-batch-size: invalid audit truncate webhook max batch size 1000, must be greater than max event size (102400)"},
		{"negative history retention", []string{"--history-retention", "-1s"}, "--history-retention -1s: use a positive duration such as 1h"},
		{"bad history bound", []string{"--history-max-revisions", "-5"}, "--history-max-revisions -5: use a positive count, or -1 for no bound"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			args := append([]string{"up", "--merge-kubeconfig=false"}, tc.args...)
			if !containsFlag(tc.args, "--data-dir") {
				args = append(args, "--data-dir", t.TempDir())
			}
			r := run(t, devplaneBin, args...)
			if r.code != 1 {
				t.Fatalf("exit %d, want 1; stderr %q", r.code, r.stderr)
			}
			lines := strings.Split(strings.TrimSpace(r.stderr), "\n")
			if len(lines) != 1 || !strings.Contains(lines[0], tc.want) {
				t.Errorf("stderr %q, want one line containing %q", r.stderr, tc.want)
			}
			if strings.Contains(r.stderr, "goroutine") || strings.Contains(r.stderr, "panic") {
				t.Errorf("stack trace in output: %s", r.stderr)
			}
		})
	}
	t.Run("all problems at once", func(t *testing.T) {
		r := run(t, devplaneBin, "up", "--data-dir", t.TempDir(), "--port", "-1", "--service-cluster-ip-range", "x", "--log-format", "xml")
		if r.code != 1 || strings.Count(r.stderr, "error:") != 3 {
			t.Errorf("exit %d, stderr %q: want three errors", r.code, r.stderr)
		}
	})
}

// TestUpWithAThousandNodes: a pod network as large as the flags say, and
// every simulated node registered and Ready with its block of it.
func TestUpWithAThousandNodes(t *testing.T) {
	kubectl := requireKubectl(t)
	dir := t.TempDir()
	p := startUp(t, dir, "--nodes", "1000", "--cluster-cidr", "10.128.0.0/14")
	defer p.stop(t)
	kubeconfig := filepath.Join(dir, "kubeconfig")
	deadline := time.Now().Add(3 * time.Minute)
	var last string
	for {
		r := run(t, kubectl, "--kubeconfig", kubeconfig, "get", "nodes", "-o",
			`jsonpath={range .items[*]}{.metadata.name} {.spec.podCIDR} {.status.conditions[?(@.type=="Ready")].status}{"\n"}{end}`)
		ready, cidrs := 0, map[string]string{}
		for _, line := range strings.Split(strings.TrimSpace(r.stdout), "\n") {
			if f := strings.Fields(line); len(f) == 3 {
				cidrs[f[0]] = f[1]
				if f[2] == "True" {
					ready++
				}
			}
		}
		last = fmt.Sprintf("%d nodes, %d Ready (exit %d %s)", len(cidrs), ready, r.code, r.stderr)
		if ready == 1000 {
			// The 1,000th node has the 1,000th /24 of 10.128.0.0/14.
			if got := cidrs["node-1000"]; got != "10.131.231.0/24" {
				t.Errorf("node-1000's pod CIDR %q, want 10.131.231.0/24", got)
			}
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("not every node Ready after 3 minutes: %s", last)
		}
		time.Sleep(time.Second)
	}
}

func containsFlag(args []string, flag string) bool {
	for _, a := range args {
		if a == flag {
			return true
		}
	}
	return false
}

func TestStatusWhenNothingRuns(t *testing.T) {
	r := run(t, devplaneBin, "status", "--data-dir", t.TempDir())
	if r.code != 2 || !strings.Contains(r.stderr, "not running") {
		t.Errorf("status: %d %q", r.code, r.stderr)
	}
}

func TestVersion(t *testing.T) {
	r := run(t, devplaneBin, "version")
	if r.code != 0 || !strings.Contains(r.stdout, "kubernetes API: v1.") || !strings.Contains(r.stdout, "go: go1.") {
		t.Errorf("version: %d %q", r.code, r.stdout)
	}
}

func TestVersionAndCompletion(t *testing.T) {
	r := run(t, devplaneBin, "version", "-o", "json")
	var v map[string]string
	if err := json.Unmarshal([]byte(r.stdout), &v); err != nil || r.code != 0 || v["version"] == "" || v["gitCommit"] == "" ||
		!strings.HasPrefix(v["kubernetesAPI"], "v1.") || v["platform"] == "" {
		t.Errorf("version -o json: %d %v %q", r.code, err, r.stdout)
	}

	bash, err := exec.LookPath("bash")
	if err != nil {
		t.Skip("no bash here")
	}
	script := run(t, devplaneBin, "completion", "bash")
	if script.code != 0 {
		t.Fatalf("completion bash: %d %s", script.code, script.stderr)
	}
	path := filepath.Join(t.TempDir(), "devplane.bash")
	if err := os.WriteFile(path, []byte(script.stdout), 0o644); err != nil {
		t.Fatal(err)
	}
	if out, err := exec.Command(bash, "-n", path).CombinedOutput(); err != nil {
		t.Fatalf("bash -n: %v\n%s", err, out)
	}
	// What bash does on Tab: the words so far, then the function.
	complete := func(words ...string) string {
		t.Helper()
		cmd := fmt.Sprintf(`source %q; COMP_WORDS=(%q %s); COMP_CWORD=%d; _devplane_complete; echo "${COMPREPLY[*]}"`,
			path, devplaneBin, strings.Join(words, " "), len(words))
		out, err := exec.Command(bash, "-c", cmd).CombinedOutput()
		if err != nil {
			t.Fatalf("completing %v: %v\n%s", words, err, out)
		}
		return strings.TrimSpace(string(out))
	}
	if got := complete("st"); got != "status" {
		t.Errorf("devplane st<Tab>: %q, want status", got)
	}
	if got := complete("status", "--da"); got != "--data-dir" {
		t.Errorf("devplane status --da<Tab>: %q, want --data-dir", got)
	}
	for _, shell := range []string{"zsh", "fish", "powershell"} {
		if r := run(t, devplaneBin, "completion", shell); r.code != 0 || !strings.Contains(r.stdout, "devplane") {
			t.Errorf("completion %s: %d %q", shell, r.code, r.stderr)
		}
	}
	if r := run(t, devplaneBin, "completion", "tcsh"); r.code == 0 || !strings.Contains(r.stderr, "bash, zsh, fish or powershell") {
		t.Errorf("completion tcsh: %d %q", r.code, r.stderr)
	}
}
