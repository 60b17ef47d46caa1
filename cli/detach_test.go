//go:build !windows

package cli_test

import (
	"encoding/json"
	"net"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"
)

// detachedPID reads the pid of a detached instance, and kills it when the
// test ends in case `devplane down` did not.
func detachedPID(t *testing.T, dataDir string) int {
	t.Helper()
	body, err := os.ReadFile(filepath.Join(dataDir, "devplane.json"))
	if err != nil {
		t.Fatalf("no state file for the detached instance: %v", err)
	}
	var st struct{ PID int }
	if err := json.Unmarshal(body, &st); err != nil || st.PID <= 0 {
		t.Fatalf("state file %q: %v", body, err)
	}
	t.Cleanup(func() { _ = syscall.Kill(st.PID, syscall.SIGKILL) })
	return st.PID
}

func TestUpDetachWaitDown(t *testing.T) {
	dir := t.TempDir()
	t.Setenv("KUBECONFIG", filepath.Join(t.TempDir(), "untouched"))
	up := run(t, devplaneBin, "up", "--detach", "--data-dir", dir, "--port", "0", "--merge-kubeconfig=false")
	if up.code != 0 {
		t.Fatalf("up --detach: exit %d\nstdout: %s\nstderr: %s", up.code, up.stdout, up.stderr)
	}
	pid := detachedPID(t, dir)
	if got, want := strings.TrimSpace(up.stdout), filepath.Join(dir, "kubeconfig"); got != want {
		t.Errorf("up --detach printed %q, want the kubeconfig path %q", got, want)
	}
	if pid == os.Getpid() {
		t.Fatal("the detached instance is this process")
	}

	// It is ready when up returns, and keeps running without its parent.
	if st := run(t, devplaneBin, "status", "--data-dir", dir); st.code != 0 {
		t.Fatalf("status after up --detach: %d\n%s%s", st.code, st.stdout, st.stderr)
	}
	if w := run(t, devplaneBin, "wait", "--data-dir", dir, "--timeout", "10s"); w.code != 0 || !strings.Contains(w.stdout, "ready") {
		t.Fatalf("wait: %d %q %q", w.code, w.stdout, w.stderr)
	}
	log, err := os.ReadFile(filepath.Join(dir, "devplane.log"))
	if err != nil || len(log) == 0 {
		t.Errorf("devplane.log: %v (%d bytes)", err, len(log))
	}
	if again := run(t, devplaneBin, "up", "--detach", "--data-dir", dir, "--port", "0", "--merge-kubeconfig=false"); again.code != 1 || !strings.Contains(again.stderr, "already running") {
		t.Errorf("second up --detach: %d %q", again.code, again.stderr)
	}

	down := run(t, devplaneBin, "down", "--data-dir", dir, "--timeout", "20s")
	if down.code != 0 || !strings.Contains(down.stdout, "stopped") {
		t.Fatalf("down: %d %q %q", down.code, down.stdout, down.stderr)
	}
	if err := syscall.Kill(pid, 0); err == nil && !zombie(pid) {
		t.Errorf("pid %d still running after down", pid)
	}
	if _, err := os.Stat(filepath.Join(dir, "devplane.json")); !os.IsNotExist(err) {
		t.Errorf("state file left after down: %v", err)
	}
	if st := run(t, devplaneBin, "status", "--data-dir", dir); st.code != 2 {
		t.Errorf("status after down = %d, want 2", st.code)
	}
	if again := run(t, devplaneBin, "down", "--data-dir", dir); again.code != 0 || !strings.Contains(again.stdout, "not running") {
		t.Errorf("down with nothing running: %d %q %q", again.code, again.stdout, again.stderr)
	}
}

func zombie(pid int) bool {
	stat, err := os.ReadFile(filepath.Join("/proc", strconv.Itoa(pid), "stat"))
	if err != nil {
		return false
	}
	i := strings.LastIndexByte(string(stat), ')')
	return i >= 0 && i+2 < len(stat) && stat[i+2] == 'Z'
}

func TestUpDetachFailureShowsTheLog(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	port := ln.Addr().(*net.TCPAddr).Port
	dir := t.TempDir()
	up := run(t, devplaneBin, "up", "--detach", "--data-dir", dir, "--port", strconv.Itoa(port), "--merge-kubeconfig=false")
	if up.code != 1 {
		t.Fatalf("up --detach on a busy port: exit %d, want 1\n%s%s", up.code, up.stdout, up.stderr)
	}
	if !strings.Contains(up.stderr, "already in use") || !strings.Contains(up.stderr, "devplane.log") {
		t.Errorf("the error does not show the log's reason:\n%s", up.stderr)
	}
	if _, err := os.Stat(filepath.Join(dir, "devplane.json")); !os.IsNotExist(err) {
		t.Errorf("state file after a failed start: %v", err)
	}
}

func TestWaitTimesOutWhenNothingRuns(t *testing.T) {
	start := time.Now()
	w := run(t, devplaneBin, "wait", "--data-dir", t.TempDir(), "--timeout", "300ms")
	if w.code != 1 || !strings.Contains(w.stderr, "not ready after 300ms") {
		t.Fatalf("wait with nothing running: %d %q", w.code, w.stderr)
	}
	if d := time.Since(start); d > 10*time.Second {
		t.Errorf("wait --timeout 300ms took %s", d)
	}
}
