package sandbox

import (
	"bytes"
	"context"
	"strings"
	"sync"
	"testing"
	"time"
)

// syncBuffer is a bytes.Buffer safe for the container's writes and the
// test's reads.
type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (b *syncBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.b.Write(p)
}

func (b *syncBuffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.b.String()
}

// An attach session types into the container's open stdin and sees what
// it writes from then on; with stdinOnce, the end of the session's stdin
// is the shell's EOF.
func TestAttachTypesIntoTheShell(t *testing.T) {
	pod, _ := newTestPod(t)
	c, err := pod.Start(ContainerConfig{Argv: []string{"sh"}, OpenStdin: true, StdinOnce: true})
	if err != nil {
		t.Fatal(err)
	}
	var out, errOut syncBuffer
	done := make(chan struct{})
	go func() {
		c.Attach(context.Background(), strings.NewReader("echo hi\necho err >&2\n"), &out, &errOut)
		close(done)
	}()
	select {
	case <-done:
	case <-time.After(10 * time.Second):
		t.Fatal("attach did not end when stdin (stdinOnce) ended the shell")
	}
	if res, ended := c.Result(); !ended || res.ExitCode != 0 {
		t.Errorf("container result %+v (ended %v), want exit 0 at EOF", res, ended)
	}
	if out.String() != "hi\n" || errOut.String() != "err\n" {
		t.Errorf("attached stdout %q stderr %q", out.String(), errOut.String())
	}
	if got := string(Format(c.Log().Lines(), LogOptions{TailLines: -1})); got != "hi\nerr\n" {
		t.Errorf("log = %q", got)
	}
}

// Without stdinOnce the shell outlives a session's stdin; a later session
// reaches it, sees only what comes after it attached, and a session whose
// context ends detaches.
func TestAttachAgainWithoutStdinOnce(t *testing.T) {
	pod, _ := newTestPod(t)
	c, err := pod.Start(ContainerConfig{Argv: []string{"sh"}, OpenStdin: true})
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	var first syncBuffer
	detached := make(chan struct{})
	go func() {
		c.Attach(ctx, strings.NewReader("echo one\n"), &first, &first)
		close(detached)
	}()
	waitForLog(t, c, "one\n")
	cancel()
	<-detached
	if _, ended := c.Result(); ended {
		t.Fatal("the shell ended with the first session's stdin")
	}
	var second syncBuffer
	go c.Attach(context.Background(), strings.NewReader("echo two\nexit 4\n"), &second, &second)
	<-c.Done()
	if res, _ := c.Result(); res.ExitCode != 4 {
		t.Errorf("exit code %d, want 4", res.ExitCode)
	}
	if first.String() != "one\n" || second.String() != "two\n" {
		t.Errorf("first session saw %q, second %q", first.String(), second.String())
	}
}
