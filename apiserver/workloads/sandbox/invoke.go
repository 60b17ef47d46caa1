package sandbox

import (
	"context"
	"errors"
	"fmt"
	"io"
	"path"
	"strings"

	"mvdan.cc/sh/v3/interp"
	"mvdan.cc/sh/v3/syntax"
)

// shellInvocation is what a shell's command line asks for.
type shellInvocation struct {
	// name is $0.
	name string
	// options are set options ("-e", "-o", "pipefail"...), then "--" and
	// the positional parameters.
	options []string
	params  []string
	// program is the script to run; nil means read it from standard input.
	program *syntax.File
	// interactive is -i.
	interactive bool
}

// parseInvocation reads `sh [options] [-c script [name [args]] | file [args]]`.
// A non-zero code means the shell fails at once, its message written.
func (p *process) parseInvocation(dir string, args []string, stderr io.Writer) (*shellInvocation, int) {
	shell := path.Base(args[0])
	inv := &shellInvocation{name: args[0]}
	fromCommand, fromStdin := false, false
	rest := args[1:]
options:
	for len(rest) > 0 {
		arg := rest[0]
		switch {
		case arg == "--" || arg == "-":
			rest = rest[1:]
			break options
		case strings.HasPrefix(arg, "--"):
			rest = rest[1:] // --login, --norc, --posix...
			continue
		case len(arg) < 2 || arg[0] != '-' && arg[0] != '+':
			break options
		}
		rest = rest[1:]
		for _, flag := range arg[1:] {
			switch flag {
			case 'c':
				fromCommand = true
			case 's':
				fromStdin = true
			case 'i':
				inv.interactive = true
			case 'l':
			case 'o':
				if len(rest) == 0 {
					fmt.Fprintf(stderr, "%s: -o: option requires an argument\n", shell)
					return nil, 2
				}
				inv.options = append(inv.options, arg[:1]+"o", rest[0])
				rest = rest[1:]
			default:
				inv.options = append(inv.options, arg[:1]+string(flag))
			}
		}
	}
	var src io.Reader
	switch {
	case fromCommand:
		if len(rest) == 0 {
			fmt.Fprintf(stderr, "%s: -c: option requires an argument\n", shell)
			return nil, 2
		}
		src = strings.NewReader(rest[0])
		rest = rest[1:]
		if len(rest) > 0 {
			inv.name, rest = rest[0], rest[1:]
		}
	case len(rest) > 0 && !fromStdin:
		data, err := p.fs.ReadFile(absPath(dir, rest[0]))
		if err != nil {
			fmt.Fprintf(stderr, "%s: can't open '%s': %s\n", shell, rest[0], errText(err))
			return nil, 127
		}
		src = strings.NewReader(string(data))
		inv.name, rest = rest[0], rest[1:]
	}
	inv.params = rest
	if src != nil {
		file, err := parse(src, inv.name)
		if err != nil {
			fmt.Fprintf(stderr, "%s: %v\n", shell, err)
			return nil, 2
		}
		inv.program = file
	}
	return inv, 0
}

// runnerParams are the interpreter's Params for an invocation.
func (inv *shellInvocation) runnerParams() []string {
	return append(append(append([]string(nil), inv.options...), "--"), inv.params...)
}

// cmdShell runs a nested shell (sh -c ..., a script) as a child process:
// it sees the exported variables only, and its own traps.
func cmdShell(c *command, args []string) int {
	args = append([]string{c.name}, args...)
	inv, code := c.proc.parseInvocation(c.hc.Dir, args, c.stderr)
	if inv == nil {
		return code
	}
	child := c.proc.child()
	sio := shellIO{c.stdin, c.stdout, c.stderr}
	program := inv.program
	if program == nil {
		// The script is standard input, read to its end.
		data, err := readAll(c.ctx, c.stdinOrEmpty())
		if err != nil {
			return 2
		}
		program, err = parse(strings.NewReader(string(data)), inv.name)
		if err != nil {
			fmt.Fprintf(c.stderr, "%s: %v\n", path.Base(args[0]), err)
			return 2
		}
		sio.stdin = nil
	}
	program.Name = inv.name
	child.shell = inv.name
	r, err := child.newRunner(exported(c.hc.Env), c.hc.Dir, nil, sio)
	if err == nil {
		err = interp.Params(inv.runnerParams()...)(r)
	}
	if err != nil {
		fmt.Fprintf(c.stderr, "%s: %v\n", path.Base(args[0]), err)
		return 2
	}
	return child.runProgram(c.ctx, r, program)
}

// runProgram runs a whole program, then its EXIT trap, and returns the
// shell's exit status.
func (p *process) runProgram(ctx context.Context, r *interp.Runner, program *syntax.File) int {
	code := exitCode(runSafely(ctx, r, program))
	if ctx.Err() != nil {
		return code
	}
	return p.runExitTrap(ctx, r, program.Name, code)
}

// runExitTrap runs the EXIT trap, if any: its own `exit N` wins over the
// status the shell was leaving with.
func (p *process) runExitTrap(ctx context.Context, r *interp.Runner, name string, code int) int {
	callback, ok := p.trapFor("EXIT")
	if !ok || callback == "" {
		return code
	}
	p.mu.Lock()
	delete(p.traps, "EXIT")
	p.mu.Unlock()
	file, err := parse(strings.NewReader(callback), name)
	if err != nil {
		return code
	}
	err = runSafely(ctx, r, file)
	if r.Exited() {
		return exitCode(err)
	}
	return code
}

// exitCode is the status a Run error stands for.
func exitCode(err error) int {
	if err == nil {
		return 0
	}
	if status, ok := errors.AsType[interp.ExitStatus](err); ok {
		return int(status)
	}
	return 1
}

// errInterpreterFailure is a panic while interpreting.
var errInterpreterFailure = errors.New("interpreter failure")

// runSafely runs a node, turning a panic of the interpreter into an error
// (status 1): a script must not bring the control plane down.
func runSafely(ctx context.Context, r *interp.Runner, node syntax.Node) (err error) {
	defer func() {
		if p := recover(); p != nil {
			err = fmt.Errorf("%w: %v", errInterpreterFailure, p)
		}
	}()
	return r.Run(ctx, node)
}
