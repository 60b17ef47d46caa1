package sandbox

import (
	"runtime"
	"strings"
	"syscall"
	"testing"
	"time"
)

// waitParked waits (bounded) until the container runs without a goroutine.
func waitParked(t *testing.T, c *Container) {
	t.Helper()
	waitUntil(t, "the container parks", c.Parked)
}

func TestIdleProgramsPark(t *testing.T) {
	forever := []string{
		"sleep infinity",
		"echo up; sleep infinity",
		"tail -f /dev/null",
		"while true; do sleep 1; done",
		"while :; do sleep 5; done",
		"until false; do sleep 1; :; done",
		"while sleep 1; do :; done",
		"exec sleep infinity",
		"D=infinity; sleep $D",
	}
	for _, src := range forever {
		pod, clk := newTestPod(t)
		c, err := pod.Start(ContainerConfig{Argv: []string{"sh", "-c", src}})
		if err != nil {
			t.Fatal(err)
		}
		waitParked(t, c)
		if clk.HasWaiters() {
			t.Errorf("%q: parked forever but holds a timer", src)
		}
		c.Kill()
		if res, _ := c.Result(); res.ExitCode != 137 {
			t.Errorf("%q: killed with %d", src, res.ExitCode)
		}
	}
}

func TestSleepCommandParks(t *testing.T) {
	pod, clk := newTestPod(t)
	c, _ := pod.Start(ContainerConfig{Argv: []string{"sleep", "3600"}})
	waitParked(t, c)
	clk.Step(3599 * time.Second)
	if _, done := c.Result(); done {
		t.Fatal("ended before its hour")
	}
	clk.Step(time.Second)
	<-c.Done()
	res, _ := c.Result()
	if res.ExitCode != 0 || res.FinishedAt.Sub(res.StartedAt) != time.Hour {
		t.Errorf("result %+v", res)
	}
}

// A top-level sleep in the middle of a script parks, and the script goes
// on after it with the shell's state intact.
func TestTopLevelSleepParksAndResumes(t *testing.T) {
	pod, clk := newTestPod(t)
	c, _ := pod.Start(ContainerConfig{Argv: []string{"sh", "-c", "X=kept; false; sleep 5; echo \"$X $?\"; sleep $((1+1)); exit 4"}})
	waitParked(t, c)
	if !clk.HasWaiters() {
		t.Fatal("parked sleep has no timer")
	}
	clk.Step(5 * time.Second)
	res := drive(t, clk, c, time.Minute)
	if out := string(Format(c.Log().Lines(), LogOptions{TailLines: -1})); out != "kept 0\n" || res.ExitCode != 4 {
		t.Errorf("log %q code %d", out, res.ExitCode)
	}
	if d := res.FinishedAt.Sub(res.StartedAt); d != 7*time.Second {
		t.Errorf("took %v, want 7s", d)
	}
}

// Statements that look idle but are not stay on the interpreter.
func TestNotIdle(t *testing.T) {
	vars := func(name string) string { return map[string]string{"SPACED": "1 2", "D": "5"}[name] }
	noFuncs := func(string) bool { return false }
	for _, src := range []string{
		"sleep 5 > /tmp/x",
		"sleep 1 &",
		"! sleep 1",
		"sleep $(echo 5)",
		"sleep $SPACED",
		"sleep ${D:-1}",
		"sleep x",
		"sleep",
		"while true; do echo x; sleep 1; done",
		"while [ -f /x ]; do sleep 1; done",
		"tail -f /var/log/x",
		"nginx",
	} {
		file, err := parse(strings.NewReader(src), "")
		if err != nil {
			t.Fatal(err)
		}
		if idle, ok := idleStatement(file.Stmts[0], vars, noFuncs); ok {
			t.Errorf("%q judged idle: %+v", src, idle)
		}
	}
	file, _ := parse(strings.NewReader("sleep $D"), "")
	if idle, ok := idleStatement(file.Stmts[0], vars, noFuncs); !ok || idle.wait != 5*time.Second {
		t.Errorf("sleep $D: %+v %v", idle, ok)
	}
	if _, ok := idleStatement(file.Stmts[0], vars, func(name string) bool { return name == "sleep" }); ok {
		t.Error("a function named sleep judged idle")
	}
	// And the function runs instead of our sleep.
	code, out := script(t, "sleep() { echo mine; }; sleep 5")
	if code != 0 || out != "mine\n" {
		t.Errorf("a function named sleep: code %d log %q", code, out)
	}
}

// TestSleepingContainersCost measures what 1,000 sleeping containers
// cost (go test -run SleepingContainersCost -v prints it): those whose
// sleep is at the top level or in a top-level while/until loop hold no
// goroutine; a sleep deeper down (in a for loop here) holds one.
func TestSleepingContainersCost(t *testing.T) {
	const n = 1000
	for _, tc := range []struct {
		script string
		parks  bool
	}{
		{"echo started; sleep 3600", true},
		{"sleep infinity", true},
		{"while true; do echo tick; sleep 3600; done", true},
		{"for i in 1 2 3; do echo $i; sleep 3600; done", false},
	} {
		pod, clk := newTestPod(t)
		runtime.GC()
		var before runtime.MemStats
		runtime.ReadMemStats(&before)
		goroutines := runtime.NumGoroutine()
		containers := make([]*Container, n)
		for i := range containers {
			c, err := pod.Start(ContainerConfig{Argv: []string{"sh", "-c", tc.script}, FS: pod.NewFS()})
			if err != nil {
				t.Fatal(err)
			}
			containers[i] = c
		}
		if tc.parks {
			for _, c := range containers {
				waitParked(t, c)
			}
		} else {
			deadline := time.Now().Add(10 * time.Second)
			for clk.Waiters() < n && time.Now().Before(deadline) {
				time.Sleep(time.Millisecond)
			}
		}
		runtime.GC()
		var after runtime.MemStats
		runtime.ReadMemStats(&after)
		extra := runtime.NumGoroutine() - goroutines
		if tc.parks && extra > 10 || !tc.parks && extra < n {
			t.Errorf("%q: %d containers hold %d goroutines", tc.script, n, extra)
		}
		t.Logf("%q: %d bytes of heap and %d of stack per container, %d goroutines for %d",
			tc.script, (int64(after.HeapAlloc)-int64(before.HeapAlloc))/n, (int64(after.StackInuse)-int64(before.StackInuse))/n, extra, n)
		for _, c := range containers {
			c.Kill()
		}
	}
}

// Top-level loops that sleep are stepped through: they behave as the
// shell runs them, and park while sleeping.
func TestSteppedLoops(t *testing.T) {
	cases := []struct {
		script string
		log    string
		code   int
		took   time.Duration
	}{
		{"i=0; while [ $i -lt 3 ]; do i=$((i+1)); echo $i; sleep 2; done; echo done $i", "1\n2\n3\ndone 3\n", 0, 6 * time.Second},
		{"i=0; until [ $i -ge 2 ]; do sleep 1; i=$((i+1)); done; echo $i", "2\n", 0, 2 * time.Second},
		{"set -e; while true; do sleep 1; false; echo never; done", "", 1, time.Second},
		{"n=0; while true; do n=$((n+1)); [ $n -eq 3 ] && exit 7; sleep 1; done", "", 7, 2 * time.Second},
		{"while false; do sleep 1; done; echo skipped", "skipped\n", 0, 0},
		{"i=0; while [ $i -lt 2 ]; do i=$((i+1)); for j in a b; do echo $i$j; done; sleep 1; done", "1a\n1b\n2a\n2b\n", 0, 2 * time.Second},
		{"i=0; while true; do i=$((i+1)); [ $i -gt 2 ] && break; sleep 1; done; echo $i", "3\n", 0, 2 * time.Second},
	}
	for _, tc := range cases {
		pod, clk := newTestPod(t)
		res, out := run(t, pod, clk, ContainerConfig{Argv: []string{"sh", "-c", tc.script}})
		if res.ExitCode != tc.code || out != tc.log || res.FinishedAt.Sub(res.StartedAt) != tc.took {
			t.Errorf("%q: code %d log %q after %v; want %d %q after %v", tc.script, res.ExitCode, out,
				res.FinishedAt.Sub(res.StartedAt), tc.code, tc.log, tc.took)
		}
	}
}

// Timers firing while signals arrive must not deadlock (a fake clock runs
// its callbacks under its lock).
func TestTimersAndSignalsTogether(t *testing.T) {
	pod, clk := newTestPod(t)
	var containers []*Container
	for range 20 {
		c, _ := pod.Start(ContainerConfig{Argv: []string{"sh", "-c", "trap 'echo term' TERM; while true; do sleep 1; done"}})
		containers = append(containers, c)
	}
	stepped := make(chan struct{})
	go func() {
		defer close(stepped)
		for range 50 {
			clk.Step(time.Second)
			time.Sleep(100 * time.Microsecond)
		}
	}()
	for range 5 {
		for _, c := range containers {
			c.Signal(syscall.SIGTERM)
		}
	}
	<-stepped
	for _, c := range containers {
		c.Kill()
		select {
		case <-c.Done():
		case <-time.After(5 * time.Second):
			t.Fatal("a container did not end")
		}
	}
}
