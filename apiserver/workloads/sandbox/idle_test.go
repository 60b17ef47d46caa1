package sandbox

import (
	"runtime"
	"testing"
	"time"
)

// waitParked waits (bounded) until the container runs without a goroutine.
func waitParked(t *testing.T, c *Container) {
	t.Helper()
	deadline := time.Now().Add(5 * time.Second)
	for !c.Parked() {
		if time.Now().After(deadline) {
			t.Fatal("container never parked")
		}
		time.Sleep(time.Millisecond)
	}
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
	for _, src := range []string{
		"sleep() { echo mine; }; sleep 5",
		"sleep 5 > /tmp/x",
		"while true; do echo x; sleep 1; done",
		"sleep 1 &",
		"sleep $(echo 5)",
	} {
		pod, _ := newTestPod(t)
		c, _ := pod.Start(ContainerConfig{Argv: []string{"sh", "-c", src}})
		var stmt = c.program.Stmts[len(c.program.Stmts)-1]
		if src == "sleep() { echo mine; }; sleep 5" {
			<-c.Done()
			if out := string(Format(c.Log().Lines(), LogOptions{TailLines: -1})); out != "mine\n" {
				t.Errorf("a function named sleep was not called: %q", out)
			}
			continue
		}
		c.Kill()
		if idle, ok := idleStatement(stmt, func(string) string { return "" }, func(string) bool { return false }); ok {
			t.Errorf("%q judged idle: %+v", src, idle)
		}
	}
}

// TestParkedContainersCost measures what sleeping containers cost: no
// goroutine each, and the memory reported (go test -run ParkedContainersCost -v).
func TestParkedContainersCost(t *testing.T) {
	const n = 1000
	pod, _ := newTestPod(t)
	runtime.GC()
	var before runtime.MemStats
	runtime.ReadMemStats(&before)
	goroutines := runtime.NumGoroutine()
	containers := make([]*Container, n)
	for i := range containers {
		c, err := pod.Start(ContainerConfig{Argv: []string{"sh", "-c", "echo started; sleep 3600"}, FS: pod.NewFS()})
		if err != nil {
			t.Fatal(err)
		}
		containers[i] = c
	}
	for _, c := range containers {
		waitParked(t, c)
	}
	runtime.GC()
	var after runtime.MemStats
	runtime.ReadMemStats(&after)
	if extra := runtime.NumGoroutine() - goroutines; extra > 10 {
		t.Errorf("%d sleeping containers hold %d goroutines", n, extra)
	}
	t.Logf("%d parked containers: %d bytes of heap each, %d goroutines in all",
		n, (int64(after.HeapAlloc)-int64(before.HeapAlloc))/n, runtime.NumGoroutine()-goroutines)
	for _, c := range containers {
		c.Kill()
	}
}

// TestSleepingInLoopCost measures the other case: a loop that does work
// between sleeps keeps one goroutine per container.
func TestSleepingInLoopCost(t *testing.T) {
	const n = 1000
	pod, clk := newTestPod(t)
	runtime.GC()
	var before runtime.MemStats
	runtime.ReadMemStats(&before)
	goroutines := runtime.NumGoroutine()
	containers := make([]*Container, n)
	for i := range containers {
		c, err := pod.Start(ContainerConfig{Argv: []string{"sh", "-c", "while true; do echo tick; sleep 3600; done"}, FS: pod.NewFS()})
		if err != nil {
			t.Fatal(err)
		}
		containers[i] = c
	}
	deadline := time.Now().Add(10 * time.Second)
	for clk.Waiters() < n && time.Now().Before(deadline) {
		time.Sleep(time.Millisecond)
	}
	runtime.GC()
	var after runtime.MemStats
	runtime.ReadMemStats(&after)
	t.Logf("%d containers sleeping in a loop: %d bytes of heap each (stacks: %d bytes each), %d goroutines in all",
		n, (int64(after.HeapAlloc)-int64(before.HeapAlloc))/n, (int64(after.StackInuse)-int64(before.StackInuse))/n, runtime.NumGoroutine()-goroutines)
	for _, c := range containers {
		c.Kill()
	}
}
