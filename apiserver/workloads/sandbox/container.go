package sandbox

import (
	"context"
	"errors"
	"fmt"
	"io"
	"path"
	"slices"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"

	"k8s.io/utils/clock"
	"mvdan.cc/sh/v3/interp"
	"mvdan.cc/sh/v3/syntax"
)

// ErrNotInterpretable means a command is a real program (nginx, pause, an
// unknown path) that the sandbox does not have: the kubelet keeps its own
// rules for such containers.
var ErrNotInterpretable = errors.New("command is not interpretable")

// Interpretable reports whether a container's argv can run in the sandbox:
// a shell (sh, bash, busybox sh...) or one of its builtins (sleep, echo...).
func Interpretable(argv []string) bool {
	if len(argv) == 0 {
		return false
	}
	if path.Base(argv[0]) == "busybox" {
		return len(argv) > 1 && hasProgram(argv[1])
	}
	return hasProgram(argv[0])
}

// Argv is the command a container runs, as the runtime combines the image's
// ENTRYPOINT and CMD with the pod's command and args: command replaces the
// entrypoint (and drops CMD), args replace CMD.
func Argv(entrypoint, cmd, command, args []string) []string {
	switch {
	case len(command) > 0:
		return append(slices.Clone(command), args...)
	case len(args) > 0:
		return append(slices.Clone(entrypoint), args...)
	default:
		return append(slices.Clone(entrypoint), cmd...)
	}
}

// ContainerConfig is one run of a container.
type ContainerConfig struct {
	// Argv is the command, already $(VAR)-expanded (see ExpandCommand).
	Argv []string
	// Env is "NAME=value" (see Environment); PATH, HOSTNAME and HOME get
	// the runtime's defaults when missing.
	Env []string
	// WorkingDir is the container's workingDir ("" is /).
	WorkingDir string
	// FS is the container's filesystem (Pod.NewFS).
	FS *FS
	// Stdin is the container's standard input (nil: none).
	Stdin io.Reader
	// OpenStdin is the container's stdin: true: its stdin is a stream
	// kept open, so a shell without a script reads and runs its commands
	// as they come, until exit or EOF, rather than reading them all
	// first. Without Stdin, it is a pipe that Attach sessions write to.
	// Stdin is closed, if it is an io.Closer, when the container ends.
	OpenStdin bool
	// StdinOnce is the container's stdinOnce: the open stdin is closed
	// when the first Attach session's stdin ends.
	StdinOnce bool
	// TTY is the container's tty: true: the shell prompts, its input is
	// echoed, output lines end in CR LF and stderr goes to stdout.
	TTY bool
	// Log receives stdout and stderr (nil: a new one).
	Log *Log
	// SharedProcessNamespace is the pod's shareProcessNamespace: the
	// command is then not PID 1, so SIGTERM kills it unless trapped.
	SharedProcessNamespace bool
	// OnExit is called once when the container ends, from whichever
	// goroutine ends it.
	OnExit func(Result)
}

// Result is how a container ended.
type Result struct {
	ExitCode   int
	Reason     string // "Completed" or "Error", as the kubelet reports
	StartedAt  time.Time
	FinishedAt time.Time
}

// Container is a running interpreted container. While its program is
// sleeping at its top level (sleep N, sleep infinity, tail -f /dev/null,
// while true; do sleep 1; done), it holds a timer and no goroutine.
type Container struct {
	pod     *Pod
	cfg     ContainerConfig
	proc    *process
	runner  *interp.Runner
	program *syntax.File
	log     *Log
	env     map[string]string
	started time.Time
	done    chan struct{}

	mu sync.Mutex
	// next is the index of the next top-level statement to run, and frame
	// the top-level loop being stepped through, if any.
	next     int
	frame    *loopFrame
	lastCode int
	// running is set while a goroutine interprets; clear while parked.
	running bool
	timer   clock.Timer
	// parked is the sleep parked on timer, so that a stale timer wakes
	// nothing.
	parked     *parking
	stepCancel context.CancelFunc
	current    *syntax.Stmt // the step running
	// trapPending is a signal whose trap is to run next.
	trapPending string
	killed      bool
	finished    bool
	// background cancels the steps that left background jobs running.
	background []context.CancelFunc
	// resetStatus makes $? 0 after a parked sleep, as the sleep succeeded.
	resetStatus bool
	result      Result
	// stdin is the writing end of an open stdin that Attach writes to.
	stdin *io.PipeWriter
	// hangUp closes an open stdin when the container ends, ending what
	// reads it.
	hangUp func()
}

// runtimeDefaults adds what a container runtime puts in every
// container's environment unless the image or pod sets it.
func runtimeDefaults(env []string, hostname string) []string {
	out := slices.Clone(env)
	has := func(name string) bool {
		return slices.ContainsFunc(out, func(kv string) bool { return strings.HasPrefix(kv, name+"=") })
	}
	for _, kv := range [][2]string{
		{"PATH", "/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin"},
		{"HOSTNAME", hostname},
		{"HOME", "/root"},
	} {
		if !has(kv[0]) {
			out = append(out, kv[0]+"="+kv[1])
		}
	}
	return out
}

// Start starts a container's command. It returns ErrNotInterpretable for a
// command the sandbox does not have; a shell failing to start (a script
// that does not parse) starts and exits at once, as a real one would.
func (p *Pod) Start(cfg ContainerConfig) (*Container, error) {
	if !Interpretable(cfg.Argv) {
		return nil, ErrNotInterpretable
	}
	if cfg.FS == nil {
		cfg.FS = p.NewFS()
	}
	if cfg.Log == nil {
		cfg.Log = NewLog(p.cfg.Clock, 0)
	}
	var stdinWriter *io.PipeWriter
	if cfg.OpenStdin && cfg.Stdin == nil {
		cfg.Stdin, stdinWriter = io.Pipe()
	}
	c := &Container{
		pod: p, cfg: cfg, log: cfg.Log, stdin: stdinWriter,
		proc:    newProcess(p, cfg.FS, 1, 0),
		started: p.cfg.Clock.Now(),
		done:    make(chan struct{}),
		env:     map[string]string{},
	}
	c.hangUp = func() {}
	if closer, ok := cfg.Stdin.(io.Closer); ok && cfg.OpenStdin {
		c.hangUp = func() { closer.Close() }
	}
	env := runtimeDefaults(cfg.Env, p.cfg.Hostname)
	for _, kv := range env {
		name, value, _ := strings.Cut(kv, "=")
		c.env[name] = value
	}
	stdout, stderr := c.log.Writer(Stdout), c.log.Writer(Stderr)
	if cfg.TTY {
		stdout = &crlfWriter{w: stdout}
		stderr = stdout
	}
	argv := cfg.Argv
	if path.Base(argv[0]) == "busybox" {
		argv = argv[1:]
	}
	var params []string
	if isShell(path.Base(argv[0])) {
		inv, code := c.proc.parseInvocation(dirOr(cfg.WorkingDir), argv, stderr)
		if inv == nil {
			c.finish(code)
			return c, nil
		}
		c.program = inv.program
		if c.program == nil && cfg.OpenStdin {
			c.proc.shell = inv.name
			return c.converse(env, inv, stdout, stderr)
		}
		if c.program == nil {
			// sh reading its script from standard input.
			data, _ := readAll(context.Background(), orEmpty(cfg.Stdin))
			var err error
			if c.program, err = parse(strings.NewReader(string(data)), inv.name); err != nil {
				fmt.Fprintf(stderr, "%s: %v\n", path.Base(argv[0]), err)
				c.finish(2)
				return c, nil
			}
			cfg.Stdin = nil
		}
		c.program.Name = inv.name
		c.proc.shell = inv.name
		params = inv.runnerParams()
	} else {
		c.program = commandProgram(argv)
		c.program.Name = "sh"
	}
	r, err := c.proc.newRunner(env, cfg.WorkingDir, nil, shellIO{cfg.Stdin, stdout, stderr})
	if err == nil && params != nil {
		err = interp.Params(params...)(r)
	}
	if err != nil {
		fmt.Fprintf(stderr, "sh: %v\n", err)
		c.finish(2)
		return c, nil
	}
	c.runner = r
	c.running = true
	go c.loop()
	return c, nil
}

// converse runs a shell reading its commands from an open stdin as they
// come (stdin: true), on a goroutine of its own until exit or EOF; the
// container's end (a kill) hangs up: stdin is closed, ending the read.
func (c *Container) converse(env []string, inv *shellInvocation, stdout, stderr io.Writer) (*Container, error) {
	r, err := c.proc.newRunner(env, c.cfg.WorkingDir, inv.runnerParams(), shellIO{nil, stdout, stderr})
	if err != nil {
		fmt.Fprintf(stderr, "sh: %v\n", err)
		c.finish(2)
		return c, nil
	}
	in := orEmpty(c.cfg.Stdin)
	if c.cfg.TTY {
		in = &ttyInput{r: in, echo: stdout}
	}
	ctx, cancel := context.WithCancel(context.Background())
	c.runner = r
	c.running = true // signals run no trap here: only a kill ends it
	closeStdin := c.hangUp
	c.hangUp = func() {
		cancel()
		closeStdin()
	}
	go func() {
		c.finish(c.proc.interactive(ctx, r, in, stdout, stderr, c.cfg.TTY || inv.interactive))
	}()
	return c, nil
}

func dirOr(dir string) string {
	if dir == "" {
		return "/"
	}
	return dir
}

func orEmpty(r io.Reader) io.Reader {
	if r == nil {
		return strings.NewReader("")
	}
	return r
}

// exit ends the program normally: its EXIT trap, then its status.
func (c *Container) exit() {
	c.mu.Lock()
	ctx, cancel := context.WithCancel(context.Background())
	c.stepCancel = cancel
	code := c.lastCode
	c.mu.Unlock()
	code = c.proc.runExitTrap(ctx, c.runner, c.program.Name, code)
	cancel()
	c.mu.Lock()
	c.running = false
	c.mu.Unlock()
	c.finish(code)
}

// finish records the result once.
func (c *Container) finish(code int) {
	c.mu.Lock()
	if c.finished {
		c.mu.Unlock()
		return
	}
	c.finished = true
	if c.timer != nil {
		c.timer.Stop()
	}
	// When PID 1 ends, the kernel kills the rest of the container.
	for _, cancel := range c.background {
		cancel()
	}
	c.log.Flush()
	reason := "Completed"
	if code != 0 {
		reason = "Error"
	}
	c.result = Result{ExitCode: code, Reason: reason, StartedAt: c.started, FinishedAt: c.pod.cfg.Clock.Now()}
	result := c.result
	c.mu.Unlock()
	c.hangUp()
	close(c.done)
	if c.cfg.OnExit != nil {
		c.cfg.OnExit(result)
	}
}

// Signal delivers a signal as a container runtime does. SIGKILL ends the
// container at once (exit 137). SIGTERM, SIGINT, SIGHUP... run the
// program's trap for it; untrapped, they end it (128+signal) unless the
// command is PID 1, which the kernel shields from signals it does not
// handle: then only the SIGKILL after the grace period ends it.
func (c *Container) Signal(sig syscall.Signal) {
	c.mu.Lock()
	if c.finished {
		c.mu.Unlock()
		return
	}
	if sig != syscall.SIGKILL {
		name := signalName(strconv.Itoa(int(sig)))
		callback, trapped := c.proc.trapFor(name)
		switch {
		case trapped && callback == "": // ignored
			c.mu.Unlock()
			return
		case trapped:
			c.trapPending = name
			c.interruptLocked()
			c.mu.Unlock()
			return
		case !c.cfg.SharedProcessNamespace:
			c.mu.Unlock()
			return
		}
	}
	c.killed = true
	if c.stepCancel != nil {
		c.stepCancel()
	}
	c.mu.Unlock()
	c.finish(128 + int(sig))
}

// interruptLocked stops what the program is doing so that a trap runs.
func (c *Container) interruptLocked() {
	if c.stepCancel != nil {
		c.stepCancel()
		if c.current != nil && callsWait(c.current) {
			// A shell's wait returns when a trapped signal comes; ours
			// waits for the jobs, which end here.
			for _, cancel := range c.background {
				cancel()
			}
			c.background = nil
		}
		return
	}
	if !c.running {
		if c.timer != nil {
			c.timer.Stop()
			c.timer = nil
		}
		c.parked = nil
		c.running = true
		go c.loop()
	}
}

// Kill is Signal(SIGKILL).
func (c *Container) Kill() { c.Signal(syscall.SIGKILL) }

// Done is closed when the container has ended.
func (c *Container) Done() <-chan struct{} { return c.done }

// Result is how the container ended; ok is false while it runs.
func (c *Container) Result() (Result, bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.result, c.finished
}

// StartedAt is when the container started.
func (c *Container) StartedAt() time.Time { return c.started }

// Log is the container's output.
func (c *Container) Log() *Log { return c.log }

// Parked reports whether the container is running without a goroutine
// (waiting on a timer, or forever).
func (c *Container) Parked() bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	return !c.finished && !c.running && (c.parked == nil || !c.parked.over.Load())
}
