package sandbox

import (
	"context"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"
)

// The host is out of reach: its files cannot be read, listed or written,
// its programs cannot run, and no socket can be opened.

func TestCannotReadHostFiles(t *testing.T) {
	dir := t.TempDir()
	secret := filepath.Join(dir, "secret")
	if err := os.WriteFile(secret, []byte("host-secret\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	hostPasswd, _ := os.ReadFile("/etc/passwd")
	pod, _ := newTestPod(t)
	for _, src := range []string{
		"cat " + secret,
		"cat < " + secret,
		"while read l; do echo $l; done < " + secret,
		"echo " + dir + "/*",
		"ls " + dir,
		"cd " + dir + " && ls",
		"[ -e " + secret + " ] && echo exists",
		". " + secret,
		"head -n 1 " + secret,
		"grep host " + secret,
		"cp " + secret + " /tmp/copy; cat /tmp/copy",
		"base64 " + secret,
		"[ -O " + secret + " ] && echo owned",
		"[[ -G " + secret + " ]] && echo group",
		"eval '[[ -O " + secret + " ]] && echo owned'",
		"pwd -P",
	} {
		_, out, errOut := execIn(t, pod, pod.NewFS(), "", "bash", "-c", src)
		if strings.Contains(out+errOut, "host-secret") || strings.Contains(out, "secret") || strings.Contains(out, "exists") || strings.Contains(out, "owned") || strings.Contains(out, "group") {
			t.Errorf("%q reached the host: stdout %q stderr %q", src, out, errOut)
		}
	}
	_, out, _ := execIn(t, pod, pod.NewFS(), "", "cat", "/etc/passwd")
	if out != etcPasswd || (len(hostPasswd) > 0 && out == string(hostPasswd)) {
		t.Errorf("cat /etc/passwd printed %q, want the container's own", out)
	}
}

func TestCannotWriteHostFiles(t *testing.T) {
	dir := t.TempDir()
	pod, _ := newTestPod(t)
	for _, src := range []string{
		"echo pwned > " + dir + "/a",
		"echo pwned >> " + dir + "/b",
		"touch " + dir + "/c",
		"mkdir -p " + dir + "/d/e",
		"echo x | tee " + dir + "/f",
		"cd /tmp && echo x > ../../" + dir + "/g",
		"exec 3> " + dir + "/h; echo x >&3",
		"cat <(echo x)",
		"echo x > >(cat)",
	} {
		execIn(t, pod, pod.NewFS(), "", "bash", "-c", src)
	}
	// Process substitution would make a FIFO in $TMPDIR on the host.
	_, _, errOut := execIn(t, pod, pod.NewFS(), "", "env", "TMPDIR="+dir, "bash", "-c", "cat <(echo x)")
	if !strings.Contains(errOut, "process substitution") {
		t.Errorf("process substitution: stderr %q, want a refusal", errOut)
	}
	entries, err := os.ReadDir(dir)
	if err != nil || len(entries) != 0 {
		t.Errorf("the host directory holds %v (err %v), want nothing", entries, err)
	}
}

func TestCannotRunHostPrograms(t *testing.T) {
	dir := t.TempDir()
	marker := filepath.Join(dir, "ran")
	prog := filepath.Join(dir, "prog")
	if err := os.WriteFile(prog, []byte("#!/bin/sh\ntouch "+marker+"\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	hostBinary, _ := exec.LookPath("go") // a program the host surely has
	pod, _ := newTestPod(t)
	for _, src := range []string{
		prog,
		"exec " + prog,
		"command " + prog,
		"builtin exec " + prog,
		"env " + prog,
		"sh " + prog,
		"busybox " + prog,
		"PATH=" + dir + " prog",
		"go version",
		hostBinary + " version",
		"ls /usr/bin/ | grep -c .",
	} {
		code, out, errOut := execIn(t, pod, pod.NewFS(), "", "sh", "-c", src)
		if strings.Contains(out, "go version") || (code == 0 && !strings.HasPrefix(src, "ls")) {
			t.Errorf("%q: code %d stdout %q stderr %q", src, code, out, errOut)
		}
	}
	if _, err := os.Stat(marker); err == nil {
		t.Error("a host program ran")
	}
	_, out, _ := execIn(t, pod, pod.NewFS(), "", "sh", "-c", "command -v go; type go; command -v "+prog)
	if out != "" {
		t.Errorf("the host's programs were visible: %q", out)
	}
}

func TestCannotOpenSockets(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Skipf("no loopback listener: %v", err)
	}
	defer ln.Close()
	accepted := make(chan struct{}, 1)
	go func() {
		if conn, err := ln.Accept(); err == nil {
			conn.Close()
			accepted <- struct{}{}
		}
	}()
	port := ln.Addr().(*net.TCPAddr).Port
	target := "127.0.0.1/" + strconv.Itoa(port)
	pod, _ := newTestPod(t)
	for _, src := range []string{
		"echo hi > /dev/tcp/" + target,
		"exec 3<>/dev/tcp/" + target,
		"cat < /dev/tcp/" + target,
		"nc 127.0.0.1 " + strconv.Itoa(port),
		"wget http://127.0.0.1:" + strconv.Itoa(port),
		"curl http://127.0.0.1:" + strconv.Itoa(port),
	} {
		if code, _, _ := execIn(t, pod, pod.NewFS(), "", "bash", "-c", src); code == 0 {
			t.Errorf("%q succeeded", src)
		}
	}
	ctx, cancel := context.WithTimeout(context.Background(), 50*time.Millisecond)
	defer cancel()
	select {
	case <-accepted:
		t.Error("a script connected to the host's listener")
	case <-ctx.Done():
	}
}
