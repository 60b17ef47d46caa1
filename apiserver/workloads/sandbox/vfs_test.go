package sandbox

import (
	"strconv"
	"strings"
	"testing"
	"time"
)

// A script writing in a loop hits the pod's disk limit instead of the
// host's memory.
func TestDiskLimit(t *testing.T) {
	_, clk := newTestPod(t)
	pod := NewPod(PodConfig{DiskLimit: 1 << 20, Clock: clk})
	res, out := run(t, pod, clk, ContainerConfig{Argv: []string{"sh", "-c",
		`i=0; while echo 0123456789012345678901234567890123456789012345678901234567890123 >> /tmp/big; do i=$((i+1)); done; echo "stopped after $i"; rm /tmp/big; echo ok > /tmp/small && cat /tmp/small`}})
	if res.ExitCode != 0 || !strings.Contains(out, "o space left on device") || !strings.HasSuffix(out, "ok\n") {
		t.Errorf("code %d log %q", res.ExitCode, out)
	}
	if used := pod.Budget().Used(); used > 1<<20 {
		t.Errorf("budget holds %d bytes, over its limit", used)
	}
}

// Files, directories and emptyDirs of a pod share one budget; a new
// container filesystem starts empty and Release gives bytes back.
func TestBudgetIsPerPod(t *testing.T) {
	_, clk := newTestPod(t)
	pod := NewPod(PodConfig{DiskLimit: 64 << 10, Clock: clk})
	vol := pod.EmptyDir("v")
	a := pod.NewFS(Mount{Path: "/v", Tree: vol})
	if err := a.WriteFile("/v/f", make([]byte, 40<<10), 0o644); err != nil {
		t.Fatal(err)
	}
	b := pod.NewFS()
	if err := b.WriteFile("/tmp/g", make([]byte, 40<<10), 0o644); err == nil {
		t.Error("a second container wrote past the pod's budget")
	}
	if err := a.Remove("/v/f", false); err != nil {
		t.Fatal(err)
	}
	if err := b.WriteFile("/tmp/g", make([]byte, 40<<10), 0o644); err != nil {
		t.Errorf("after removing the first file: %v", err)
	}
	before := pod.Budget().Used()
	b.Release()
	if after := pod.Budget().Used(); after >= before-40<<10 {
		t.Errorf("Release gave back %d bytes", before-after)
	}
	for i := 0; ; i++ {
		if err := a.Mkdir("/tmp/d"+strings.Repeat("x", i%50)+string(rune('a'+i%26))+strconv.Itoa(i), false); err != nil {
			if !strings.Contains(err.Error(), "no space left") {
				t.Errorf("mkdir %d: %v", i, err)
			}
			break
		}
		if i > 10000 {
			t.Fatal("empty directories never reached the limit")
		}
	}
}

func TestFSBasics(t *testing.T) {
	pod, clk := newTestPod(t)
	fsys := pod.NewFS()
	if err := fsys.Mkdir("/a/b", true); err != nil {
		t.Fatal(err)
	}
	clk.Step(time.Minute)
	if err := fsys.WriteFile("/a/b/f", []byte("x"), 0o600); err != nil {
		t.Fatal(err)
	}
	info, err := fsys.Stat("/a/b/../b/f")
	if err != nil || info.Size() != 1 || info.Mode().Perm() != 0o600 || !info.ModTime().Equal(epoch.Add(time.Minute)) {
		t.Errorf("stat: %v %v", info, err)
	}
	if err := fsys.Remove("/a", false); err == nil {
		t.Error("removed a non-empty directory")
	}
	if _, err := fsys.ReadFile("/a/b/f/g"); err == nil {
		t.Error("read under a file")
	}
	if err := fsys.Remove("/", true); err == nil {
		t.Error("removed the root")
	}
	vol := pod.EmptyDir("v")
	withMount := pod.NewFS(Mount{Path: "/mnt/v", Tree: vol})
	if err := withMount.Remove("/mnt", true); err == nil {
		t.Error("removed a directory holding a mount point")
	}
	if entries, _ := withMount.ReadDir("/mnt"); len(entries) != 1 || entries[0].Name() != "v" {
		t.Errorf("mount point not listed: %v", entries)
	}
	data, _ := fsys.ReadFile("/etc/hosts")
	if !strings.Contains(string(data), "localhost") {
		t.Errorf("/etc/hosts = %q", data)
	}
}

func TestHostsFile(t *testing.T) {
	pod := NewPod(PodConfig{Hostname: "web-0", Hosts: []byte("# Kubernetes-managed hosts file.\n127.0.0.1\tlocalhost\n10.0.0.5\tweb-0.web.shop.svc.cluster.local\tweb-0\n")})
	code, out, _ := execIn(t, pod, pod.NewFS(), "", "sh", "-c", "hostname -i; grep -c web-0 /etc/hosts")
	if code != 0 || out != "10.0.0.5\n1\n" {
		t.Errorf("code %d out %q", code, out)
	}
}

func TestLogBounds(t *testing.T) {
	pod, clk := newTestPod(t)
	log := NewLog(clk, 100)
	res, _ := run(t, pod, clk, ContainerConfig{Argv: []string{"sh", "-c", "seq 1000"}, Log: log})
	if res.ExitCode != 0 {
		t.Fatal(res)
	}
	out := string(Format(log.Lines(), LogOptions{TailLines: -1}))
	if len(out) > 100 || !strings.HasSuffix(out, "\n999\n1000\n") {
		t.Errorf("log kept %d bytes: %q", len(out), out)
	}
	// A line without its newline is kept, marked partial, at exit.
	res, out = run(t, pod, clk, ContainerConfig{Argv: []string{"sh", "-c", "printf 'no newline'"}})
	if out != "no newline" {
		t.Errorf("partial line: %q", out)
	}
	// Long lines are cut in 16 KiB pieces, joined again when shown.
	long := NewLog(clk, 0)
	w := long.Writer(Stdout)
	w.Write([]byte(strings.Repeat("x", 40<<10) + "\n"))
	if lines := long.Lines(); len(lines) != 3 || !lines[0].Partial || lines[2].Partial {
		t.Errorf("long line pieces: %d", len(lines))
	}
	if got := Format(long.Lines(), LogOptions{TailLines: -1}); len(got) != 40<<10+1 {
		t.Errorf("long line shown as %d bytes", len(got))
	}
}

func TestLogFormatOptions(t *testing.T) {
	_, clk := newTestPod(t)
	log := NewLog(clk, 0)
	out, errw := log.Writer(Stdout), log.Writer(Stderr)
	changed := log.Changed()
	out.Write([]byte("a\nb"))
	select {
	case <-changed:
	default:
		t.Error("Changed not closed by a new line")
	}
	clk.Step(time.Second)
	out.Write([]byte("c\n"))
	errw.Write([]byte("d\n"))
	lines := log.Lines()
	for _, tc := range []struct {
		opts LogOptions
		want string
	}{
		{LogOptions{TailLines: -1}, "a\nbc\nd\n"},
		{LogOptions{TailLines: 2}, "bc\nd\n"},
		{LogOptions{TailLines: 0}, ""},
		{LogOptions{TailLines: -1, Since: epoch.Add(time.Second)}, "d\n"},
		{LogOptions{TailLines: -1, LimitBytes: 4}, "a\nbc"},
		{LogOptions{TailLines: 1, Timestamps: true}, "2026-11-27T09:00:01Z d\n"},
	} {
		if got := string(Format(lines, tc.opts)); got != tc.want {
			t.Errorf("%+v: %q, want %q", tc.opts, got, tc.want)
		}
	}
}

// A read-only root (readOnlyRootFilesystem) refuses writes as busybox
// reports them, its error lines beginning with the shell's name as it was
// started (/bin/sh here, sh when started as sh); its mounts and devices
// still take them.
func TestReadOnlyRoot(t *testing.T) {
	pod, clk := newTestPod(t)
	fsys := pod.NewFS(Mount{Tree: pod.EmptyDir("work"), Path: "/work"}).ReadOnlyRoot()
	res, out := run(t, pod, clk, ContainerConfig{FS: fsys, Argv: []string{"/bin/sh", "-c",
		"echo test > /file; echo $?; echo ok > /work/f && cat /work/f; echo gone > /dev/null && echo null"}})
	if res.ExitCode != 0 || out != "/bin/sh: can't create /file: Read-only file system\n1\nok\nnull\n" {
		t.Errorf("exit %d, log %q", res.ExitCode, out)
	}
	res, out = run(t, pod, clk, ContainerConfig{FS: fsys, Argv: []string{"sh", "-c", "echo test > /file; sh -c 'nope'"}})
	if res.ExitCode != 127 || out != "sh: can't create /file: Read-only file system\nsh: nope: not found\n" {
		t.Errorf("started as sh: exit %d, log %q", res.ExitCode, out)
	}
}
