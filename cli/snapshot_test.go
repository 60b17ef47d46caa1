package cli_test

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// `devplane snapshot save` and `restore` against a served instance, and
// restore on the same instance once stopped.
func TestSnapshotSaveRestoreRunningAndStopped(t *testing.T) {
	kubectl := requireKubectl(t)
	dir := t.TempDir()
	p := startUp(t, dir)
	kc := filepath.Join(dir, "kubeconfig")
	k := func(args ...string) result {
		t.Helper()
		return run(t, kubectl, append([]string{"--kubeconfig", kc}, args...)...)
	}
	mustK := func(args ...string) string {
		t.Helper()
		r := k(args...)
		if r.code != 0 {
			t.Fatalf("kubectl %v: %d %s", args, r.code, r.stderr)
		}
		return r.stdout
	}
	file := filepath.Join(t.TempDir(), "fixtures.snap")

	mustK("create", "configmap", "fixture", "--from-literal=v=1")
	uid := mustK("get", "configmap", "fixture", "-o", "jsonpath={.metadata.uid}")
	if r := run(t, devplaneBin, "snapshot", "save", file, "--data-dir", dir); r.code != 1 || !strings.Contains(r.stderr, "flags go before the file") {
		t.Errorf("flags after the file: %d %q", r.code, r.stderr)
	}
	save := run(t, devplaneBin, "snapshot", "save", "--data-dir", dir, file)
	if save.code != 0 || !strings.Contains(save.stdout, "saved") {
		t.Fatalf("snapshot save: %d %q %q", save.code, save.stdout, save.stderr)
	}
	if info, err := os.Stat(file); err != nil || info.Mode().Perm()&0o077 != 0 {
		t.Fatalf("the snapshot file: %v, mode %v (it holds Secrets: owner only)", err, info.Mode())
	}

	mustK("delete", "configmap", "fixture")
	mustK("create", "configmap", "extra")
	restore := run(t, devplaneBin, "snapshot", "restore", "--data-dir", dir, file)
	if restore.code != 0 || !strings.Contains(restore.stdout, "restored") {
		t.Fatalf("snapshot restore (running): %d %q %q", restore.code, restore.stdout, restore.stderr)
	}
	// The first read after restore returns sees the restored state.
	if got := mustK("get", "configmap", "fixture", "-o", "jsonpath={.metadata.uid} {.data.v}"); got != uid+" 1" {
		t.Errorf("fixture after restore: %q, want %q", got, uid+" 1")
	}
	if r := k("get", "configmap", "extra"); r.code == 0 || !strings.Contains(r.stderr, "NotFound") {
		t.Errorf("extra after restore: %d %q", r.code, r.stderr)
	}

	mustK("create", "configmap", "later")
	p.stop(t)
	restore = run(t, devplaneBin, "snapshot", "restore", "--data-dir", dir, file)
	// "later" goes (checked below, once started); Events written since the
	// snapshot may go too.
	if restore.code != 0 || !strings.Contains(restore.stdout, " deleted") {
		t.Fatalf("snapshot restore (stopped): %d %q %q", restore.code, restore.stdout, restore.stderr)
	}
	// A stopped instance's state can be saved too: it is the restored one.
	offlineFile := filepath.Join(t.TempDir(), "offline.snap")
	if r := run(t, devplaneBin, "snapshot", "save", "--data-dir", dir, offlineFile); r.code != 0 || !strings.Contains(r.stdout, "saved") {
		t.Fatalf("snapshot save (stopped): %d %q %q", r.code, r.stdout, r.stderr)
	}
	// Restoring the state it holds writes nothing (Events, never kept, may go).
	if r := run(t, devplaneBin, "snapshot", "restore", "--data-dir", dir, offlineFile); r.code != 0 || !strings.Contains(r.stdout, ": 0 objects written") {
		t.Errorf("restoring the state it holds changes nothing: %d %q %q", r.code, r.stdout, r.stderr)
	}
	startUp(t, dir)
	if r := k("get", "configmap", "later"); r.code == 0 || !strings.Contains(r.stderr, "NotFound") {
		t.Errorf("later after an offline restore: %d %q", r.code, r.stderr)
	}
	if got := mustK("get", "configmap", "fixture", "-o", "jsonpath={.metadata.uid}"); got != uid {
		t.Errorf("fixture after an offline restore: uid %q, want %q", got, uid)
	}

	bad := filepath.Join(t.TempDir(), "bad.snap")
	if err := os.WriteFile(bad, []byte("hello"), 0o600); err != nil {
		t.Fatal(err)
	}
	if r := run(t, devplaneBin, "snapshot", "restore", "--data-dir", dir, bad); r.code != 1 || !strings.Contains(r.stderr, "not a devplane snapshot") {
		t.Errorf("restore of a bad file: %d %q %q", r.code, r.stdout, r.stderr)
	}
	if r := run(t, devplaneBin, "snapshot", "restore", "--data-dir", t.TempDir(), file); r.code != 1 || !strings.Contains(r.stderr, "no instance") {
		t.Errorf("restore into an empty dir: %d %q %q", r.code, r.stdout, r.stderr)
	}
}
