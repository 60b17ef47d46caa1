package sandbox

import (
	"errors"
	"io"
	"strings"
	"syscall"
	"testing"
	"time"
)

func TestRunLogsExitCodeAndDuration(t *testing.T) {
	pod, clk := newTestPod(t)
	res, out := run(t, pod, clk, ContainerConfig{Argv: []string{"sh", "-c", "echo hello; sleep 2; exit 3"}})
	if out != "hello\n" {
		t.Errorf("log = %q, want %q", out, "hello\n")
	}
	if res.ExitCode != 3 || res.Reason != "Error" {
		t.Errorf("exit code %d reason %q, want 3 Error", res.ExitCode, res.Reason)
	}
	if got := res.FinishedAt.Sub(res.StartedAt); got != 2*time.Second {
		t.Errorf("ran for %v of fake time, want 2s", got)
	}
}

func TestLogLinesCarryTheirTime(t *testing.T) {
	pod, clk := newTestPod(t)
	c, err := pod.Start(ContainerConfig{Argv: []string{"sh", "-c", "echo one; sleep 1; echo two >&2"}})
	if err != nil {
		t.Fatal(err)
	}
	drive(t, clk, c, time.Minute)
	lines := c.Log().Lines()
	if len(lines) != 2 {
		t.Fatalf("lines = %+v", lines)
	}
	if !lines[0].Time.Equal(epoch) || lines[0].Stream != Stdout || string(lines[0].Text) != "one" {
		t.Errorf("first line = %+v", lines[0])
	}
	if !lines[1].Time.Equal(epoch.Add(time.Second)) || lines[1].Stream != Stderr || string(lines[1].Text) != "two" {
		t.Errorf("second line = %+v", lines[1])
	}
	got := string(Format(lines, LogOptions{Timestamps: true, TailLines: 1}))
	if want := "2026-11-27T09:00:01Z two\n"; got != want {
		t.Errorf("tail 1 with timestamps = %q, want %q", got, want)
	}
}

func TestExitCodes(t *testing.T) {
	cases := map[string]int{
		"exit 3":                    3,
		"false":                     1,
		"true":                      0,
		"nosuchcommand":             127,
		"set -e; false; exit 9":     1,
		"false; true":               0,
		"exit 300":                  44,
		"(exit 7)":                  7,
		"f() { return 6; }; f":      6,
		"sh -c 'exit 5'":            5,
		"echo 'unterminated":        2,
		"cat /nope; echo $?":        0,
		"! true":                    1,
		"sleep 1; false":            1,
		"false; sleep 1":            0,
		"exec sh -c 'exit 4'; :":    4,
		"exec sleep 1; exit 9":      0,
		"trap 'exit 8' EXIT; :":     8,
		"sleep 1 && (exit 2)":       2,
		"while :; do exit 12; done": 12,
	}
	for src, want := range cases {
		code, out := script(t, src)
		if code != want {
			t.Errorf("sh -c %q exited %d, want %d (log %q)", src, code, want, out)
		}
	}
}

func TestBackgroundJobs(t *testing.T) {
	logOf := func(c *Container) string { return string(Format(c.Log().Lines(), LogOptions{TailLines: -1})) }
	for src, want := range map[string]string{
		"(sleep 2; echo bg) & echo fg; wait; echo done": "fg\nbg\ndone\n",
		"(sleep 2; echo never) & echo fg":               "fg\n",
		"echo $$ $PPID":                                 "1 0\n",
	} {
		code, out := script(t, src)
		if code != 0 || out != want {
			t.Errorf("%q: code %d log %q, want %q", src, code, out, want)
		}
	}
	// A background job goes on while the program sleeps, and ends with it.
	pod, clk := newTestPod(t)
	c, _ := pod.Start(ContainerConfig{Argv: []string{"sh", "-c", "while true; do sleep 1; echo tick; done & sleep 1.5; echo main done"}})
	waitParked(t, c)
	waitUntil(t, "the job sleeps too", func() bool { return clk.Waiters() == 2 })
	clk.Step(time.Second)
	waitUntil(t, "the job ticks", func() bool { return logOf(c) == "tick\n" })
	waitUntil(t, "the job sleeps again", func() bool { return clk.Waiters() == 2 })
	clk.Step(500 * time.Millisecond)
	<-c.Done()
	if out := logOf(c); out != "tick\nmain done\n" {
		t.Errorf("log %q", out)
	}
	waitUntil(t, "the background job ends with the container", func() bool { return clk.Waiters() == 0 })
}

// busybox's default command, sh, reads its script from the container's
// standard input: none makes it exit 0 at once; stdin: true feeds it.
func TestShellReadingStdin(t *testing.T) {
	pod, clk := newTestPod(t)
	res, out := run(t, pod, clk, ContainerConfig{Argv: []string{"sh"}})
	if res.ExitCode != 0 || out != "" || res.FinishedAt != res.StartedAt {
		t.Errorf("sh without stdin: %+v %q", res, out)
	}
	res, out = run(t, pod, clk, ContainerConfig{Argv: []string{"/bin/sh"}, Stdin: strings.NewReader("echo fed\nexit 2\n")})
	if res.ExitCode != 2 || out != "fed\n" {
		t.Errorf("sh with stdin: %+v %q", res, out)
	}
}

func TestNotInterpretable(t *testing.T) {
	pod, _ := newTestPod(t)
	for _, argv := range [][]string{nil, {"nginx", "-g", "daemon off;"}, {"/pause"}, {"/usr/sbin/nginx"}, {"python3", "-c", "print(1)"}, {"busybox", "nope"}} {
		if Interpretable(argv) {
			t.Errorf("Interpretable(%q) = true", argv)
		}
		if _, err := pod.Start(ContainerConfig{Argv: argv}); !errors.Is(err, ErrNotInterpretable) {
			t.Errorf("Start(%q) = %v, want ErrNotInterpretable", argv, err)
		}
	}
	for _, argv := range [][]string{{"sh"}, {"/bin/sh", "-c", "x"}, {"bash", "-c", "x"}, {"sleep", "3600"}, {"/bin/sleep", "1"}, {"busybox", "sh", "-c", "x"}, {"echo", "hi"}} {
		if !Interpretable(argv) {
			t.Errorf("Interpretable(%q) = false", argv)
		}
	}
}

func TestArgv(t *testing.T) {
	ep, cmd := []string{"/entry"}, []string{"default"}
	for _, tc := range []struct {
		command, args, want []string
	}{
		{nil, nil, []string{"/entry", "default"}},
		{nil, []string{"a"}, []string{"/entry", "a"}},
		{[]string{"sh", "-c"}, []string{"echo"}, []string{"sh", "-c", "echo"}},
		{[]string{"sleep", "1"}, nil, []string{"sleep", "1"}},
	} {
		if got := Argv(ep, cmd, tc.command, tc.args); strings.Join(got, " ") != strings.Join(tc.want, " ") {
			t.Errorf("Argv(command %q, args %q) = %q, want %q", tc.command, tc.args, got, tc.want)
		}
	}
}

// A Job's script fails on odd completion indexes, as issue 30's example.
func TestJobScriptFailsOnOddIndex(t *testing.T) {
	const src = `echo "index $JOB_COMPLETION_INDEX"; sleep 1; [ $((JOB_COMPLETION_INDEX % 2)) -eq 0 ] || exit 1`
	for index, want := range []int{0, 1, 0, 1} {
		pod, clk := newTestPod(t)
		res, out := run(t, pod, clk, ContainerConfig{
			Argv: []string{"sh", "-c", src},
			Env:  []string{"JOB_COMPLETION_INDEX=" + string(rune('0'+index))},
		})
		if res.ExitCode != want {
			t.Errorf("index %d exited %d, want %d", index, res.ExitCode, want)
		}
		if wantLog := "index " + string(rune('0'+index)) + "\n"; out != wantLog {
			t.Errorf("index %d logged %q, want %q", index, out, wantLog)
		}
	}
}

func TestEmptyDirSharedBetweenContainers(t *testing.T) {
	pod, clk := newTestPod(t)
	shared := pod.EmptyDir("shared")
	writer := pod.NewFS(Mount{Path: "/out", Tree: shared})
	reader := pod.NewFS(Mount{Path: "/in", Tree: shared})
	res, _ := run(t, pod, clk, ContainerConfig{Argv: []string{"sh", "-c", "echo data > /out/file; echo private > /tmp/own"}, FS: writer})
	if res.ExitCode != 0 {
		t.Fatalf("writer exited %d", res.ExitCode)
	}
	res, out := run(t, pod, clk, ContainerConfig{Argv: []string{"sh", "-c", "cat /in/file; cat /tmp/own"}, FS: reader})
	if out != "data\ncat: can't open '/tmp/own': No such file or directory\n" || res.ExitCode != 1 {
		t.Errorf("reader: code %d log %q; want the shared file and not the other container's /tmp", res.ExitCode, out)
	}
}

func TestReadOnlyMounts(t *testing.T) {
	pod, _ := newTestPod(t)
	config := ReadOnlyFiles(map[string][]byte{"app.conf": []byte("color=blue\n"), "nested/key": []byte("v")})
	shared := pod.EmptyDir("cache")
	fsys := pod.NewFS(Mount{Path: "/etc/config", Tree: config}, Mount{Path: "/cache", Tree: shared, ReadOnly: true})
	code, out, errOut := execIn(t, pod, fsys, "", "sh", "-c", `cat /etc/config/app.conf /etc/config/nested/key; echo; ls /etc/config
echo x > /etc/config/app.conf; echo $?
touch /etc/config/new; echo $?
rm /etc/config/app.conf; echo $?
mkdir /cache/d; echo $?
cat /etc/config/app.conf`)
	wantOut := "color=blue\nv\napp.conf\nnested\n1\n1\n1\n1\ncolor=blue\n"
	if code != 0 || out != wantOut {
		t.Errorf("code %d, stdout %q, want %q (stderr %q)", code, out, wantOut, errOut)
	}
	if strings.Count(errOut, "ead-only file system") != 4 {
		t.Errorf("stderr = %q, want four read-only errors", errOut)
	}
}

func TestConfigMapUpdate(t *testing.T) {
	pod, _ := newTestPod(t)
	config := ReadOnlyFiles(map[string][]byte{"color": []byte("blue")})
	fsys := pod.NewFS(Mount{Path: "/config", Tree: config, ReadOnly: true})
	config.SetFiles(map[string][]byte{"color": []byte("red"), "size": []byte("L")})
	if _, out, _ := execIn(t, pod, fsys, "", "sh", "-c", "cat /config/color /config/size"); out != "redL" {
		t.Errorf("after the update: %q", out)
	}
}

func TestSubPathMount(t *testing.T) {
	pod, _ := newTestPod(t)
	vol := pod.EmptyDir("data")
	a := pod.NewFS(Mount{Path: "/data", Tree: vol, SubPath: "a"})
	whole := pod.NewFS(Mount{Path: "/vol", Tree: vol})
	execIn(t, pod, a, "", "sh", "-c", "echo in-a > /data/f")
	if code, out, _ := execIn(t, pod, whole, "", "cat", "/vol/a/f"); code != 0 || out != "in-a\n" {
		t.Errorf("cat /vol/a/f: code %d out %q", code, out)
	}
}

func TestHostPathTreeIsSharedAcrossPods(t *testing.T) {
	node := NewTree(NewBudget(1<<20), nil)
	podA, _ := newTestPod(t)
	podB, _ := newTestPod(t)
	execIn(t, podA, podA.NewFS(Mount{Path: "/host", Tree: node}), "", "sh", "-c", "echo from-a > /host/f")
	if _, out, _ := execIn(t, podB, podB.NewFS(Mount{Path: "/mnt", Tree: node}), "", "cat", "/mnt/f"); out != "from-a\n" {
		t.Errorf("pod B read %q from the node's hostPath tree", out)
	}
}

// until [ -f /tmp/ready ] in one container ends when another creates it,
// and the loop waits parked on a timer.
func TestUntilLoopSeesAnotherContainersFile(t *testing.T) {
	pod, clk := newTestPod(t)
	shared := pod.EmptyDir("tmp")
	waiter, err := pod.Start(ContainerConfig{
		Argv: []string{"sh", "-c", "until [ -f /tmp/ready ]; do sleep 1; done; echo ready"},
		FS:   pod.NewFS(Mount{Path: "/tmp", Tree: shared}),
	})
	if err != nil {
		t.Fatal(err)
	}
	for range 5 {
		waitParked(t, waiter)
		clk.Step(time.Second)
	}
	waitParked(t, waiter)
	maker := pod.NewFS(Mount{Path: "/tmp", Tree: shared})
	if code, _, _ := execIn(t, pod, maker, "", "touch", "/tmp/ready"); code != 0 {
		t.Fatal("touch failed")
	}
	res := drive(t, clk, waiter, 10*time.Second)
	if res.ExitCode != 0 || string(Format(waiter.Log().Lines(), LogOptions{TailLines: -1})) != "ready\n" {
		t.Errorf("waiter: %+v", res)
	}
	if took := res.FinishedAt.Sub(res.StartedAt); took != 6*time.Second {
		t.Errorf("waiter ran %v, want 6s", took)
	}
}

// waitForWaiter waits (bounded) until something sleeps on the fake clock.
func waitForWaiter(t *testing.T, clk interface{ HasWaiters() bool }) {
	t.Helper()
	waitUntil(t, "something waits on the clock", clk.HasWaiters)
}

// waitUntil waits (bounded in real time) for a condition another
// goroutine brings about.
func waitUntil(t *testing.T, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(5 * time.Second)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("timed out waiting until %s", what)
		}
		time.Sleep(time.Millisecond)
	}
}

func TestKill(t *testing.T) {
	pod, clk := newTestPod(t)
	var exited []Result
	c, err := pod.Start(ContainerConfig{
		Argv:   []string{"sh", "-c", "echo start; while true; do echo tick; sleep 1; done"},
		OnExit: func(r Result) { exited = append(exited, r) },
	})
	if err != nil {
		t.Fatal(err)
	}
	waitForWaiter(t, clk)
	clk.Step(time.Second)
	waitForWaiter(t, clk)
	c.Signal(syscall.SIGTERM) // PID 1 without a trap: ignored
	select {
	case <-c.Done():
		t.Fatal("SIGTERM ended PID 1 that does not trap it")
	case <-time.After(20 * time.Millisecond):
	}
	c.Kill()
	<-c.Done()
	res, _ := c.Result()
	if res.ExitCode != 137 || len(exited) != 1 || exited[0] != res {
		t.Errorf("result %+v, OnExit calls %+v; want one exit with 137", res, exited)
	}
	c.Kill() // a second kill changes nothing
	if len(exited) != 1 {
		t.Errorf("OnExit called %d times", len(exited))
	}
}

func TestSigterm(t *testing.T) {
	for _, tc := range []struct {
		script    string
		sharedPID bool
		code      int
		logEnd    string
	}{
		// Not PID 1: the default action ends it.
		{"echo a; sleep 100; echo b", true, 143, "a\n"},
		// A trap runs, whether the program sleeps parked or in a loop.
		{"trap 'echo stopping; exit 0' TERM; echo up; sleep 3600", false, 0, "up\nstopping\n"},
		{"trap 'echo term; exit 3' 15; while true; do echo tick; sleep 1; done", false, 3, "tick\nterm\n"},
		{"trap 'echo term; exit 4' SIGTERM; for i in 1 2; do sleep 10; done", false, 4, "term\n"},
		// The usual way to wait for a signal.
		{"trap 'echo bye; exit 0' TERM; sleep infinity & wait", false, 0, "bye\n"},
	} {
		pod, clk := newTestPod(t)
		c, _ := pod.Start(ContainerConfig{Argv: []string{"sh", "-c", tc.script}, SharedProcessNamespace: tc.sharedPID})
		waitUntil(t, "the program sleeps or waits", func() bool {
			c.mu.Lock()
			defer c.mu.Unlock()
			return clk.HasWaiters() || c.current != nil && callsWait(c.current)
		})
		c.Signal(syscall.SIGTERM)
		<-c.Done()
		res, _ := c.Result()
		if out := string(Format(c.Log().Lines(), LogOptions{TailLines: -1})); res.ExitCode != tc.code || !strings.HasSuffix(out, tc.logEnd) {
			t.Errorf("%q: code %d log %q; want %d, log ending %q", tc.script, res.ExitCode, out, tc.code, tc.logEnd)
		}
	}
}

func TestIgnoredSigterm(t *testing.T) {
	pod, clk := newTestPod(t)
	c, _ := pod.Start(ContainerConfig{Argv: []string{"sh", "-c", "trap '' TERM; sleep 10"}, SharedProcessNamespace: true})
	waitForWaiter(t, clk)
	c.Signal(syscall.SIGTERM)
	res := drive(t, clk, c, time.Minute)
	if res.ExitCode != 0 || res.FinishedAt.Sub(res.StartedAt) != 10*time.Second {
		t.Errorf("an ignored SIGTERM ended the container: %+v", res)
	}
}

// A failure inside the interpreter ends the container, not the process.
func TestInterpreterPanicIsContained(t *testing.T) {
	builtins["explode"] = func(*command, []string) int { panic("boom") }
	defer delete(builtins, "explode")
	code, out := script(t, "echo before; explode; echo after")
	if code != 1 || out != "before\nsh: interpreter failure: boom\n" {
		t.Errorf("exit code %d, log %q", code, out)
	}
}

// tail -f shows what another container appends, once a second.
func TestTailFollowsAFile(t *testing.T) {
	pod, clk := newTestPod(t)
	shared := pod.EmptyDir("logs")
	writer := pod.NewFS(Mount{Path: "/logs", Tree: shared})
	if err := writer.WriteFile("/logs/app.log", []byte("one\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	c, _ := pod.Start(ContainerConfig{Argv: []string{"tail", "-f", "/logs/app.log"}, FS: pod.NewFS(Mount{Path: "/logs", Tree: shared})})
	waitForWaiter(t, clk)
	if _, out, _ := execIn(t, pod, writer, "", "sh", "-c", "echo two >> /logs/app.log"); out != "" {
		t.Fatal(out)
	}
	clk.Step(time.Second)
	waitUntil(t, "the appended line shows", func() bool {
		return string(Format(c.Log().Lines(), LogOptions{TailLines: -1})) == "one\ntwo\n"
	})
	c.Kill()
}

// A shell with stdin: true waits for commands on its open stdin and runs
// each as it comes; closing stdin (the end of an attach with stdinOnce)
// ends it with the last command's status.
func TestOpenStdinShellRunsCommandsAsTheyCome(t *testing.T) {
	pod, _ := newTestPod(t)
	in, feed := io.Pipe()
	c, err := pod.Start(ContainerConfig{Argv: []string{"sh"}, Stdin: in, OpenStdin: true})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := io.WriteString(feed, "echo one\n"); err != nil {
		t.Fatal(err)
	}
	waitForLog(t, c, "one\n")
	if _, ended := c.Result(); ended {
		t.Fatal("the shell ended while its stdin is open")
	}
	if _, err := io.WriteString(feed, "echo two >&2; false\n"); err != nil {
		t.Fatal(err)
	}
	waitForLog(t, c, "one\ntwo\n")
	feed.Close()
	select {
	case <-c.Done():
	case <-time.After(10 * time.Second):
		t.Fatal("the shell did not end when its stdin closed")
	}
	if res, _ := c.Result(); res.ExitCode != 1 {
		t.Errorf("exit code %d, want 1 (false's)", res.ExitCode)
	}
}

// Killed while it waits for input, it ends at once (137) and its stdin
// is closed.
func TestOpenStdinShellKilledWhileWaiting(t *testing.T) {
	pod, _ := newTestPod(t)
	in, feed := io.Pipe()
	c, err := pod.Start(ContainerConfig{Argv: []string{"sh"}, Stdin: in, OpenStdin: true, TTY: true})
	if err != nil {
		t.Fatal(err)
	}
	waitForLog(t, c, "/ # ")  // the tty's prompt
	c.Signal(syscall.SIGTERM) // PID 1 ignores it
	if _, ended := c.Result(); ended {
		t.Fatal("SIGTERM ended PID 1, which does not handle it")
	}
	c.Kill()
	if res, _ := c.Result(); res.ExitCode != 137 {
		t.Errorf("exit code %d, want 137", res.ExitCode)
	}
	if _, err := io.WriteString(feed, "echo late\n"); !errors.Is(err, io.ErrClosedPipe) {
		t.Errorf("writing to a killed container's stdin: %v, want %v", err, io.ErrClosedPipe)
	}
}

func waitForLog(t *testing.T, c *Container, want string) {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for {
		c.Log().Flush()
		got := string(Format(c.Log().Lines(), LogOptions{TailLines: -1}))
		if got == want || strings.TrimSuffix(got, "\n") == want {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("log = %q, want %q", got, want)
		}
		time.Sleep(5 * time.Millisecond)
	}
}
