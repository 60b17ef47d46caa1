package sandbox

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"io"
	"strings"
	"testing"
	"time"
)

func TestExecSeesTheContainersWorld(t *testing.T) {
	pod, _ := newTestPod(t)
	c, err := pod.Start(ContainerConfig{
		Argv:       []string{"sh", "-c", "echo state > /tmp/s; sleep infinity"},
		Env:        []string{"GREETING=hi"},
		WorkingDir: "/tmp",
	})
	if err != nil {
		t.Fatal(err)
	}
	waitParked(t, c)
	var out bytes.Buffer
	code, err := c.Exec(context.Background(), []string{"sh", "-c", "pwd; echo $GREETING; cat s"}, nil, &out, &out, false)
	if err != nil || code != 0 || out.String() != "/tmp\nhi\nstate\n" {
		t.Errorf("exec: code %d err %v out %q", code, err, out.String())
	}
	// An exec probe: its exit code is what counts.
	code, _ = c.Exec(context.Background(), []string{"cat", "/tmp/healthy"}, nil, io.Discard, io.Discard, false)
	if code != 1 {
		t.Errorf("probe on a missing file: code %d, want 1", code)
	}
	c.Exec(context.Background(), []string{"touch", "/tmp/healthy"}, nil, nil, nil, false)
	if code, _ = c.Exec(context.Background(), []string{"cat", "/tmp/healthy"}, nil, nil, nil, false); code != 0 {
		t.Errorf("probe on a present file: code %d, want 0", code)
	}
	c.Kill()
}

func TestExecOfAnUnknownProgram(t *testing.T) {
	pod, _ := newTestPod(t)
	_, err := pod.Exec(context.Background(), ExecConfig{Argv: []string{"nginx", "-s", "reload"}})
	if !errors.Is(err, ErrNotInterpretable) {
		t.Errorf("exec nginx: %v, want ErrNotInterpretable", err)
	}
}

func TestExecStdin(t *testing.T) {
	pod, _ := newTestPod(t)
	fsys := pod.NewFS()
	if code, out, _ := execIn(t, pod, fsys, "a\nb\n", "wc", "-l"); code != 0 || out != "2\n" {
		t.Errorf("wc -l: %d %q", code, out)
	}
	// sh without a TTY reads its script from stdin, without prompts.
	if code, out, _ := execIn(t, pod, fsys, "echo one\nX=2\necho $X\nexit 6\necho never\n", "sh"); code != 6 || out != "one\n2\n" {
		t.Errorf("sh < script: %d %q", code, out)
	}
}

// An interactive shell over pipes: the prompt comes before each command,
// each command runs when its line arrives, and exit ends the session.
func TestExecInteractiveShell(t *testing.T) {
	pod, _ := newTestPod(t)
	fsys := pod.NewFS()
	stdinR, stdinW := io.Pipe()
	stdoutR, stdoutW := io.Pipe()
	result := make(chan int, 1)
	go func() {
		code, _ := pod.Exec(context.Background(), ExecConfig{
			Argv: []string{"sh"}, FS: fsys, Stdin: stdinR, Stdout: stdoutW, TTY: true,
		})
		stdoutW.Close()
		result <- code
	}()
	out := bufio.NewReader(stdoutR)
	expect := func(want string) {
		t.Helper()
		got := make([]byte, len(want))
		done := make(chan error, 1)
		go func() { _, err := io.ReadFull(out, got); done <- err }()
		select {
		case err := <-done:
			if err != nil || string(got) != want {
				t.Fatalf("read %q (err %v), want %q", got, err, want)
			}
		case <-time.After(5 * time.Second):
			t.Fatalf("timed out waiting for %q", want)
		}
	}
	expect("/ # ")
	// What is typed (Enter sends CR), and what the terminal shows after:
	// the echo, the output, the next prompt.
	for _, step := range [][2]string{
		{"cd /tmp\r", "cd /tmp\r\n/tmp # "},
		{"echo hello > f; cat f\r", "echo hello > f; cat f\r\nhello\r\n/tmp # "},
		{"if true\r", "if true\r\n> "},
		{"then echo yes; fi\r", "then echo yes; fi\r\nyes\r\n/tmp # "},
		{"nosuch\r", "nosuch\r\nsh: nosuch: not found\r\n/tmp # "},
		{"exit 2\r", "exit 2\r\n"},
	} {
		io.WriteString(stdinW, step[0])
		expect(step[1])
	}
	select {
	case code := <-result:
		if code != 2 {
			t.Errorf("exit code %d, want 2", code)
		}
	case <-time.After(5 * time.Second):
		t.Fatal("shell did not exit")
	}
	if _, out, _ := execIn(t, pod, fsys, "", "cat", "/tmp/f"); out != "hello\n" {
		t.Errorf("the session's file holds %q", out)
	}
}

func TestExecPromptAtHome(t *testing.T) {
	pod, _ := newTestPod(t)
	var out bytes.Buffer
	code, err := pod.Exec(context.Background(), ExecConfig{
		Argv: []string{"/bin/sh", "-i"}, WorkingDir: "/root", Stdin: strings.NewReader("echo $HOME\n"), Stdout: &out,
	})
	if err != nil || code != 0 || out.String() != "~ # /root\n~ # " {
		t.Errorf("code %d err %v out %q", code, err, out.String())
	}
}
