package sandbox

import (
	"bytes"
	"context"
	"strings"
	"testing"
	"time"

	clocktesting "k8s.io/utils/clock/testing"
)

// epoch is the fake clock's start.
var epoch = time.Date(2026, 11, 27, 9, 0, 0, 0, time.UTC)

// step is how far the fake clock moves each time the program waits.
const step = 100 * time.Millisecond

func newTestPod(t *testing.T) (*Pod, *clocktesting.FakeClock) {
	t.Helper()
	clk := clocktesting.NewFakeClock(epoch)
	return NewPod(PodConfig{Hostname: "web-0", Clock: clk}), clk
}

// drive moves the fake clock whenever the container waits on it, until
// the container ends (bounded in steps and real time).
func drive(t *testing.T, clk *clocktesting.FakeClock, c *Container, maxFake time.Duration) Result {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for moved := time.Duration(0); ; {
		select {
		case <-c.Done():
			res, _ := c.Result()
			return res
		default:
		}
		if time.Now().After(deadline) {
			t.Fatalf("container still running after 10s of real time (%v of fake time)", moved)
		}
		if clk.HasWaiters() {
			if moved >= maxFake {
				t.Fatalf("container still running after %v of fake time", moved)
			}
			clk.Step(step)
			moved += step
			// Let what the step woke run before time moves on.
			time.Sleep(time.Millisecond)
			continue
		}
		time.Sleep(time.Millisecond)
	}
}

// run starts argv in a fresh container of pod and drives it to its end.
func run(t *testing.T, pod *Pod, clk *clocktesting.FakeClock, cfg ContainerConfig) (Result, string) {
	t.Helper()
	c, err := pod.Start(cfg)
	if err != nil {
		t.Fatalf("Start(%q): %v", cfg.Argv, err)
	}
	res := drive(t, clk, c, time.Hour)
	return res, string(Format(c.Log().Lines(), LogOptions{TailLines: -1}))
}

// script runs `sh -c src` in a fresh pod and returns exit code and log.
func script(t *testing.T, src string) (int, string) {
	t.Helper()
	pod, clk := newTestPod(t)
	res, out := run(t, pod, clk, ContainerConfig{Argv: []string{"sh", "-c", src}})
	return res.ExitCode, out
}

// execIn runs argv through Exec in fsys and returns code, stdout, stderr.
func execIn(t *testing.T, pod *Pod, fsys *FS, stdin string, argv ...string) (int, string, string) {
	t.Helper()
	var stdout, stderr bytes.Buffer
	code, err := pod.Exec(context.Background(), ExecConfig{Argv: argv, FS: fsys, Stdin: strings.NewReader(stdin), Stdout: &stdout, Stderr: &stderr})
	if err != nil {
		t.Fatalf("Exec(%q): %v", argv, err)
	}
	return code, stdout.String(), stderr.String()
}
