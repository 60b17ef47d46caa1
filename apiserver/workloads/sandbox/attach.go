package sandbox

import (
	"context"
	"io"
	"slices"
	"sync"
)

// attachment is an attach session's output: what the container writes
// from the time it attached, as it writes it.
type attachment struct {
	out    [2]io.Writer // by Stream; nil: not wanted
	failed chan struct{}
	once   sync.Once
}

func (a *attachment) write(s Stream, p []byte) {
	w := a.out[s]
	if w == nil {
		return
	}
	if _, err := w.Write(p); err != nil {
		a.once.Do(func() { close(a.failed) }) // the client went away
	}
}

func (l *Log) attach(a *attachment) (detach func()) {
	l.mu.Lock()
	l.attached = append(slices.Clip(l.attached), a)
	l.mu.Unlock()
	return func() {
		l.mu.Lock()
		defer l.mu.Unlock()
		i := slices.Index(l.attached, a)
		if i >= 0 {
			l.attached = slices.Delete(slices.Clone(l.attached), i, i+1)
		}
	}
}

// Attach connects a session to the running container, as a container
// runtime's attach does: stdin, when the container's stdin is open, is
// copied to it (its end closes the container's stdin when StdinOnce),
// and what the container writes from now on goes to stdout and stderr
// (with a TTY, all to stdout), until the container ends, ctx is done, or
// writing to the session fails.
func (c *Container) Attach(ctx context.Context, stdin io.Reader, stdout, stderr io.Writer) {
	a := &attachment{out: [2]io.Writer{Stdout: stdout, Stderr: stderr}, failed: make(chan struct{})}
	detach := c.log.attach(a)
	defer detach()
	if stdin != nil && c.stdin != nil {
		go func() {
			_, _ = io.Copy(c.stdin, stdin)
			if c.cfg.StdinOnce {
				c.stdin.Close()
			}
		}()
	}
	select {
	case <-c.done:
	case <-ctx.Done():
	case <-a.failed:
	}
}
