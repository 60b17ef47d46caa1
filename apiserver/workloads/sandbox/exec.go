package sandbox

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"path"
	"strings"

	"mvdan.cc/sh/v3/interp"
	"mvdan.cc/sh/v3/syntax"
)

// ExecConfig is a command run in a running container, as `kubectl exec`
// and exec probes do.
type ExecConfig struct {
	Argv []string
	// Env, WorkingDir and FS are the container's.
	Env        []string
	WorkingDir string
	FS         *FS
	Stdin      io.Reader
	Stdout     io.Writer
	Stderr     io.Writer
	// TTY is `kubectl exec -t`: the shell prompts, input is echoed and
	// output lines end in CR LF; stderr goes to Stdout.
	TTY bool
}

// Exec runs a command in a container's filesystem and environment and
// returns its exit code. A command the sandbox does not have gives
// ErrNotInterpretable. A shell without a script reads its commands from
// Stdin line by line (with a prompt on a TTY) until `exit` or EOF; the
// commands it runs get no standard input.
func (p *Pod) Exec(ctx context.Context, cfg ExecConfig) (int, error) {
	if !Interpretable(cfg.Argv) {
		return 0, fmt.Errorf("%w: exec: %q: executable file not found in $PATH", ErrNotInterpretable, firstOr(cfg.Argv))
	}
	if cfg.FS == nil {
		cfg.FS = p.NewFS()
	}
	stdout, stderr := orDiscard(cfg.Stdout), orDiscard(cfg.Stderr)
	stdin := cfg.Stdin
	if cfg.TTY {
		stdout = &crlfWriter{w: stdout}
		stderr = stdout
		if stdin != nil {
			stdin = &ttyInput{r: stdin, echo: stdout}
		}
	}
	proc := newProcess(p, cfg.FS, p.newPID(), 0)
	env := runtimeDefaults(cfg.Env, p.cfg.Hostname)
	argv := cfg.Argv
	if path.Base(argv[0]) == "busybox" {
		argv = argv[1:]
	}
	if !isShell(path.Base(argv[0])) {
		r, err := proc.newRunner(env, cfg.WorkingDir, nil, shellIO{stdin, stdout, stderr})
		if err != nil {
			return 0, err
		}
		return proc.runProgram(ctx, r, commandProgram(argv)), nil
	}
	inv, code := proc.parseInvocation(dirOr(cfg.WorkingDir), argv, stderr)
	if inv == nil {
		return code, nil
	}
	if inv.program != nil {
		inv.program.Name = inv.name
		proc.shell = inv.name
		r, err := proc.newRunner(env, cfg.WorkingDir, inv.runnerParams(), shellIO{stdin, stdout, stderr})
		if err != nil {
			return 0, err
		}
		return proc.runProgram(ctx, r, inv.program), nil
	}
	r, err := proc.newRunner(env, cfg.WorkingDir, inv.runnerParams(), shellIO{nil, stdout, stderr})
	if err != nil {
		return 0, err
	}
	return proc.interactive(ctx, r, orEmpty(stdin), stdout, stderr, cfg.TTY || inv.interactive), nil
}

// Exec runs a command in this container, with its environment, working
// directory and filesystem.
func (c *Container) Exec(ctx context.Context, argv []string, stdin io.Reader, stdout, stderr io.Writer, tty bool) (int, error) {
	return c.pod.Exec(ctx, ExecConfig{
		Argv: argv, Env: c.cfg.Env, WorkingDir: c.cfg.WorkingDir, FS: c.cfg.FS,
		Stdin: stdin, Stdout: stdout, Stderr: stderr, TTY: tty,
	})
}

func firstOr(argv []string) string {
	if len(argv) == 0 {
		return ""
	}
	return argv[0]
}

func orDiscard(w io.Writer) io.Writer {
	if w == nil {
		return io.Discard
	}
	return w
}

// prompt is busybox's root prompt, PS1='\w \$ ': "/ # ", "~ # ".
func prompt(r *interp.Runner) string {
	dir := r.Dir
	if home := r.Vars["HOME"].String(); home != "" && (dir == home || strings.HasPrefix(dir, home+"/")) {
		dir = "~" + strings.TrimPrefix(dir, home)
	}
	return dir + " # "
}

// interactive reads commands from in as they come, running each complete
// one, until exit or EOF.
func (p *process) interactive(ctx context.Context, r *interp.Runner, in io.Reader, stdout, stderr io.Writer, showPrompt bool) int {
	if showPrompt {
		// The first prompt needs the shell's state (HOME, PWD) set.
		_ = runSafely(ctx, r, noop)
		io.WriteString(stdout, prompt(r))
	}
	parser := syntax.NewParser()
	code := 0
	err := parser.Interactive(in, func(stmts []*syntax.Stmt) bool {
		if parser.Incomplete() {
			if showPrompt {
				io.WriteString(stdout, "> ")
			}
			return true
		}
		for _, stmt := range stmts {
			if err := sanitize(stmt); err != nil {
				fmt.Fprintf(stderr, "sh: %v\n", err)
				code = 2
				continue
			}
			code = exitCode(runSafely(ctx, r, stmt))
			if r.Exited() || ctx.Err() != nil {
				return false
			}
		}
		if showPrompt {
			io.WriteString(stdout, prompt(r))
		}
		return true
	})
	if err != nil && ctx.Err() == nil {
		fmt.Fprintf(stderr, "sh: %v\n", err)
		code = 2
	}
	if ctx.Err() != nil {
		return code
	}
	return p.runExitTrap(ctx, r, "sh", code)
}

// crlfWriter is a terminal's output processing: "\n" becomes "\r\n".
type crlfWriter struct{ w io.Writer }

func (c *crlfWriter) Write(p []byte) (int, error) {
	if _, err := c.w.Write(bytes.ReplaceAll(p, []byte("\n"), []byte("\r\n"))); err != nil {
		return 0, err
	}
	return len(p), nil
}

// ttyInput is a terminal's input processing: what is typed is echoed, and
// Enter's CR is a newline.
type ttyInput struct {
	r    io.Reader
	echo io.Writer
}

func (t *ttyInput) Read(p []byte) (int, error) {
	n, err := t.r.Read(p)
	for i := range p[:n] {
		if p[i] == '\r' {
			p[i] = '\n'
		}
	}
	if n > 0 {
		t.echo.Write(p[:n])
	}
	return n, err
}
