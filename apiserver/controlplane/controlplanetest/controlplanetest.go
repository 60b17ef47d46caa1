// Package controlplanetest is the scaffolding devplane's own tests share: a real
// devplane started in the test process, kubectl pointed at it, and bounded
// polling. Only tests import it; it is a normal package so that the external
// test packages (package x_test) of several packages can.
package controlplanetest

import (
	"bytes"
	"context"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"runtime/pprof"
	"strings"
	"testing"
	"time"

	"k8s.io/client-go/tools/clientcmd"

	"github.com/devplane/devplane/apiserver/controlplane"
)

const (
	readyTimeout   = 30 * time.Second
	stopTimeout    = 20 * time.Second
	kubectlTimeout = time.Minute
)

// StartDevplane starts devplane and waits until it is ready. Unset fields of
// opts default to a test instance: name "test", a temp data dir of t, and
// otherwise Options' defaults (127.0.0.1 on a free port); fsync is always
// off.
// stop ends it and fails t unless it stops cleanly in time; it runs at t's
// cleanup too and may be called earlier, e.g. to restart on the same dir.
func StartDevplane(t testing.TB, opts controlplane.Options) (cp *controlplane.ControlPlane, stop func()) {
	t.Helper()
	if opts.Name == "" {
		opts.Name = "test"
	}
	if opts.DataDir == "" {
		opts.DataDir = t.TempDir()
	}
	opts.UnsafeNoFsync = true
	opts.Complete()
	if err := opts.Validate(); err != nil {
		t.Fatalf("devplane options: %v", err)
	}

	ctx, cancel := context.WithCancel(context.Background())
	var err error
	// On a fixed port, the previous instance's listener may take a moment
	// to be released.
	for attempt := 0; attempt < 50; attempt++ {
		cp, err = controlplane.New(ctx, opts)
		if err == nil || opts.Port == 0 || !strings.Contains(err.Error(), "cannot listen") {
			break
		}
		time.Sleep(100 * time.Millisecond)
	}
	if err != nil {
		cancel()
		t.Fatalf("starting devplane: %v", err)
	}
	done := make(chan error, 1)
	go func() { done <- cp.Run(ctx) }()
	stopped := false
	stop = func() {
		t.Helper()
		if stopped {
			return
		}
		stopped = true
		cancel()
		select {
		case err := <-done:
			if err != nil {
				t.Errorf("devplane stopped with error: %v", err)
			}
		case <-time.After(stopTimeout):
			var dump strings.Builder
			_ = pprof.Lookup("goroutine").WriteTo(&dump, 1)
			t.Errorf("devplane did not stop within %s; goroutines:\n%s", stopTimeout, dump.String())
		}
	}
	t.Cleanup(stop)
	deadline := time.Now().Add(readyTimeout)
	for !cp.Ready() {
		if time.Now().After(deadline) {
			t.Fatalf("devplane not ready after %s: %+v", readyTimeout, cp.Status())
		}
		time.Sleep(5 * time.Millisecond)
	}
	return cp, stop
}

// WriteKubeconfig writes cp's admin kubeconfig into a temp dir of t and
// returns its path.
func WriteKubeconfig(t testing.TB, cp *controlplane.ControlPlane) string {
	t.Helper()
	path := filepath.Join(t.TempDir(), "kubeconfig")
	if err := clientcmd.WriteToFile(*cp.Kubeconfig(), path); err != nil {
		t.Fatal(err)
	}
	return path
}

// KubectlRun is one kubectl invocation.
type KubectlRun struct {
	Kubeconfig string
	Args       []string
	Stdin      string
	Env        []string // extra "K=V" variables
}

// KubectlResult is how a kubectl run ended.
type KubectlResult struct {
	Stdout, Stderr string
	Code           int // exit status
}

// Kubectl runs /usr/bin/kubectl --kubeconfig kubeconfig args..., see Run.
func Kubectl(t testing.TB, kubeconfig string, args ...string) KubectlResult {
	t.Helper()
	return KubectlRun{Kubeconfig: kubeconfig, Args: args}.Run(t)
}

// Run runs kubectl bounded to a minute, with a temp HOME of t (so its
// discovery cache is fresh) and without interactive prompts. A non-zero
// exit is in the result; kubectl not running or not finishing fails t.
func (r KubectlRun) Run(t testing.TB) KubectlResult {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), kubectlTimeout)
	defer cancel()
	cmd := exec.CommandContext(ctx, "/usr/bin/kubectl", append([]string{"--kubeconfig", r.Kubeconfig}, r.Args...)...)
	cmd.Env = append(os.Environ(), "HOME="+t.TempDir(), "KUBECTL_INTERACTIVE_DELETE=false")
	cmd.Env = append(cmd.Env, r.Env...)
	if r.Stdin != "" {
		cmd.Stdin = strings.NewReader(r.Stdin)
	}
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	err := cmd.Run()
	res := KubectlResult{Stdout: stdout.String(), Stderr: stderr.String()}
	var exitErr *exec.ExitError
	switch {
	case err == nil:
	case errors.As(err, &exitErr):
		res.Code = exitErr.ExitCode()
	default:
		t.Fatalf("kubectl %s: %v", strings.Join(r.Args, " "), err)
	}
	if ctx.Err() != nil {
		t.Fatalf("kubectl %s did not finish within %s", strings.Join(r.Args, " "), kubectlTimeout)
	}
	return res
}

// Eventually polls cond every 20ms until it holds, failing t after timeout
// with what cond last reported.
func Eventually(t testing.TB, timeout time.Duration, what string, cond func() (ok bool, last string)) {
	t.Helper()
	deadline := time.Now().Add(timeout)
	for {
		ok, last := cond()
		if ok {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("%s: not within %s (last: %s)", what, timeout, last)
		}
		time.Sleep(20 * time.Millisecond)
	}
}
