package sandbox

import (
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"path"
	"slices"
	"strings"
	"syscall"

	"mvdan.cc/sh/v3/interp"
)

// command is one run of a builtin: its streams, directory and environment.
type command struct {
	ctx    context.Context
	proc   *process
	hc     interp.HandlerContext
	name   string
	stdin  io.Reader
	stdout io.Writer
	stderr io.Writer
	// builtinErr is what an interpreter builtin run for us returned.
	builtinErr error
}

// errorf writes a busybox-style "name: message" line to stderr.
func (c *command) errorf(format string, args ...any) {
	fmt.Fprintf(c.stderr, c.name+": "+format+"\n", args...)
}

// abs resolves a path against the shell's working directory.
func (c *command) abs(name string) string { return absPath(c.hc.Dir, name) }

// input opens a file operand ("-": standard input).
func (c *command) input(name string) (io.Reader, error) {
	if name == "-" {
		return c.stdinOrEmpty(), nil
	}
	return c.proc.openRead(c.hc, name)
}

func (c *command) stdinOrEmpty() io.Reader {
	if c.stdin == nil {
		return strings.NewReader("")
	}
	return c.stdin
}

// openRead opens a file for reading, with the standard streams' names.
func (p *process) openRead(hc interp.HandlerContext, name string) (io.Reader, error) {
	switch name {
	case "/dev/stdin", "/proc/self/fd/0":
		return nopCloser{r: stdinOf(hc)}, nil
	}
	f, err := p.fs.OpenFile(absPath(hc.Dir, name), 0, 0)
	if err != nil {
		return nil, err
	}
	if info, _ := p.fs.Stat(absPath(hc.Dir, name)); info != nil && info.IsDir() {
		return nil, pathErr("read", name, syscall.EISDIR)
	}
	return f, nil
}

// errText is an error's cause as busybox prints it: "No such file or directory".
func errText(err error) string {
	var errno syscall.Errno
	if errors.As(err, &errno) {
		s := errno.Error()
		return strings.ToUpper(s[:1]) + s[1:]
	}
	var pe *fs.PathError
	if errors.As(err, &pe) {
		return pe.Err.Error()
	}
	return err.Error()
}

type builtinFunc func(c *command, args []string) int

// builtins are the programs a simulated container has; everything else is
// "not found".
var builtins map[string]builtinFunc

func init() {
	builtins = map[string]builtinFunc{
		"sleep": cmdSleep, "cat": cmdCat, "touch": cmdTouch, "mkdir": cmdMkdir,
		"ls": cmdLs, "rm": cmdRm, "rmdir": cmdRmdir, "env": cmdEnv, "printenv": cmdPrintenv,
		"hostname": cmdHostname, "date": cmdDate, "wc": cmdWc, "grep": cmdGrep,
		"head": cmdHead, "tail": cmdTail, "cp": cmdCp, "mv": cmdMv, "tee": cmdTee,
		"seq": cmdSeq, "id": cmdID, "whoami": cmdWhoami, "basename": cmdBasename,
		"dirname": cmdDirname, "base64": cmdBase64, "uname": cmdUname, "chmod": cmdChmod,
		"which": cmdWhich, "expr": cmdExpr,
		"sync": func(*command, []string) int { return 0 },
		"sh":   cmdShell, "bash": cmdShell, "ash": cmdShell, "dash": cmdShell,
		"busybox": cmdBusybox,
		"echo":    cmdEcho, "printf": cmdPrintf,
		// nil: the interpreter's own, when run by path (/bin/true) or
		// through env or busybox.
		"test": nil, "[": nil, "true": nil, "false": nil, "pwd": nil, "kill": nil,
	}
}

// binDirs are where an image keeps the programs we offer.
var binDirs = []string{"/bin", "/usr/bin", "/sbin", "/usr/sbin", "/usr/local/bin", "/usr/local/sbin"}

// hasProgram reports whether a simulated container can run a program of
// that name (a shell, or one of our builtins).
func hasProgram(name string) bool {
	base := path.Base(name)
	if name != base && !slices.Contains(binDirs, path.Dir(name)) {
		return false
	}
	_, ok := builtins[base]
	return ok
}

// exec runs a command that is not a shell function or interpreter builtin:
// one of ours, or a script in the virtual filesystem.
func (p *process) exec(ctx context.Context, args []string) error {
	hc := interp.HandlerCtx(ctx)
	c := &command{ctx: ctx, proc: p, hc: hc, name: path.Base(args[0]), stdin: stdinOf(hc), stdout: hc.Stdout, stderr: hc.Stderr}
	code := p.dispatch(c, args)
	if err := ctx.Err(); err != nil {
		return err // killed: the shell stops here
	}
	if c.builtinErr != nil {
		return c.builtinErr
	}
	if code == 0 {
		return nil
	}
	return interp.NewExitStatus(uint8(code))
}

// dispatch finds what args[0] names and runs it.
func (p *process) dispatch(c *command, args []string) int {
	name := args[0]
	switch name {
	case typeCommand:
		return p.cmdType(c, args[1:])
	case commandV:
		return p.cmdCommandV(c, args[1:])
	case sourceCommand:
		return p.cmdSource(c, args[1:])
	case loopCondCommand:
		p.mu.Lock()
		p.loopGoesOn = len(args) > 1 && args[1] == "1"
		p.mu.Unlock()
		return 0
	case echoCommand:
		c.name = "echo"
		return cmdEcho(c, args[1:])
	case printfCommand:
		c.name = "printf"
		return cmdPrintf(c, args[1:])
	case refusedCommand:
		fmt.Fprintf(c.stderr, c.proc.shellName()+": %s: %s\n", args[1], args[2])
		return 2
	}
	if strings.Contains(name, "/") {
		full := c.abs(name)
		if _, err := p.fs.Stat(full); err == nil {
			return p.runFile(c, full, args)
		}
		if !hasProgram(full) {
			fmt.Fprintf(c.stderr, c.proc.shellName()+": %s: not found\n", name)
			return 127
		}
		name = path.Base(full)
	} else if script := p.lookPath(c, name); script != "" {
		return p.runFile(c, script, args)
	}
	fn, ok := builtins[name]
	if !ok {
		fmt.Fprintf(c.stderr, c.proc.shellName()+": %s: not found\n", name)
		return 127
	}
	args = append([]string{name}, args[1:]...)
	c.name = name
	if fn == nil {
		// The interpreter's status (and control flow) goes back as is.
		c.builtinErr = c.hc.Builtin(c.ctx, args)
		return 0
	}
	return fn(c, args[1:])
}

// lookPath finds an executable file of the virtual filesystem in $PATH
// (a script a volume put in /usr/local/bin, say).
func (p *process) lookPath(c *command, name string) string {
	for _, dir := range strings.Split(c.hc.Env.Get("PATH").String(), ":") {
		if dir == "" {
			continue
		}
		full := path.Join(dir, name)
		if info, err := p.fs.Stat(full); err == nil && info.Mode().IsRegular() && info.Mode().Perm()&0o111 != 0 {
			return full
		}
	}
	return ""
}

// runFile runs a file of the virtual filesystem as a program: a shell
// script if it is executable and has no other interpreter.
func (p *process) runFile(c *command, full string, args []string) int {
	info, err := p.fs.Stat(full)
	if err != nil {
		fmt.Fprintf(c.stderr, c.proc.shellName()+": %s: not found\n", args[0])
		return 127
	}
	if info.IsDir() || info.Mode().Perm()&0o111 == 0 {
		fmt.Fprintf(c.stderr, c.proc.shellName()+": %s: Permission denied\n", args[0])
		return 126
	}
	data, err := p.fs.ReadFile(full)
	if err != nil {
		fmt.Fprintf(c.stderr, c.proc.shellName()+": %s: %s\n", args[0], errText(err))
		return 126
	}
	if first, _, _ := strings.Cut(string(data), "\n"); strings.HasPrefix(first, "#!") {
		fields := strings.Fields(strings.TrimPrefix(first, "#!"))
		if len(fields) > 1 && path.Base(fields[0]) == "env" {
			fields = fields[1:]
		}
		if len(fields) == 0 || !isShell(path.Base(fields[0])) {
			interpName := ""
			if len(fields) > 0 {
				interpName = fields[0]
			}
			fmt.Fprintf(c.stderr, c.proc.shellName()+": %s: not found\n", interpName)
			return 127
		}
	}
	c.name = "sh"
	return cmdShell(c, append([]string{full}, args[1:]...))
}

func isShell(name string) bool {
	switch name {
	case "sh", "bash", "ash", "dash":
		return true
	}
	return false
}

// cmdType is `type`, answering from our world rather than the host's PATH.
func (p *process) cmdType(c *command, args []string) int {
	code := 0
	for _, name := range args {
		if strings.HasPrefix(name, "-") {
			continue
		}
		switch found := p.programPath(c, name); {
		case interp.IsBuiltin(name):
			fmt.Fprintf(c.stdout, "%s is a shell builtin\n", name)
		case found != "":
			fmt.Fprintf(c.stdout, "%s is %s\n", name, found)
		default:
			fmt.Fprintf(c.stderr, "type: %s: not found\n", name)
			code = 1
		}
	}
	return code
}

// programPath is where a program is found: an executable file of $PATH,
// or one of ours, which an image keeps in /bin ("" when there is none).
func (p *process) programPath(c *command, name string) string {
	switch {
	case !strings.Contains(name, "/") && p.lookPath(c, name) != "":
		return p.lookPath(c, name)
	case hasProgram(name) && strings.Contains(name, "/"):
		return name
	case hasProgram(name):
		return "/bin/" + name
	}
	return ""
}

// cmdWhich is `which`: the path of each program (not of shell builtins).
func cmdWhich(c *command, args []string) int {
	code := 0
	for _, name := range args {
		found := c.proc.programPath(c, name)
		if found == "" {
			code = 1
			continue
		}
		fmt.Fprintln(c.stdout, found)
	}
	return code
}

// cmdCommandV is `command -v` and `command -V`.
func (p *process) cmdCommandV(c *command, args []string) int {
	verbose := args[0] == "-V"
	code := 0
	for _, name := range args[1:] {
		found := p.programPath(c, name)
		if interp.IsBuiltin(name) {
			found = name
		}
		switch {
		case found == "":
			code = 1
			if verbose {
				fmt.Fprintf(c.stderr, "%s: not found\n", name)
			}
		case verbose && found == name:
			fmt.Fprintf(c.stdout, "%s is a shell builtin\n", name)
		case verbose:
			fmt.Fprintf(c.stdout, "%s is %s\n", name, found)
		default:
			fmt.Fprintln(c.stdout, found)
		}
	}
	return code
}

// cmdSource is `source`/`.`: the file is read from the virtual filesystem
// and run in the current shell.
func (p *process) cmdSource(c *command, args []string) int {
	if len(args) == 0 {
		fmt.Fprintln(c.stderr, "sh: .: filename argument required")
		return 2
	}
	full := c.abs(args[0])
	if !strings.Contains(args[0], "/") {
		if found := p.lookPathAny(c, args[0]); found != "" {
			full = found
		}
	}
	data, err := p.fs.ReadFile(full)
	if err != nil {
		fmt.Fprintf(c.stderr, c.proc.shellName()+": .: can't open '%s': %s\n", args[0], errText(err))
		return 2
	}
	src, err := sanitizedSource(string(data))
	if err != nil {
		fmt.Fprintf(c.stderr, c.proc.shellName()+": %s: %v\n", args[0], err)
		return 2
	}
	c.builtinErr = c.hc.Builtin(c.ctx, []string{"eval", src})
	return 0
}

// lookPathAny finds a readable file in $PATH, as `.` does.
func (p *process) lookPathAny(c *command, name string) string {
	for _, dir := range strings.Split(c.hc.Env.Get("PATH").String(), ":") {
		full := path.Join(c.abs(dir), name)
		if info, err := p.fs.Stat(full); err == nil && info.Mode().IsRegular() {
			return full
		}
	}
	return ""
}

// option is one parsed command-line flag.
type option struct {
	flag  byte
	value string
}

// getopt parses flags as GNU utilities do: clustered ("-rf"), values
// after a flag that spec marks with ':' ("n:" takes "-n 5" and "-n5"),
// anywhere among the operands until "--".
func getopt(args []string, spec string) ([]option, []string, error) {
	var opts []option
	var operands []string
	for len(args) > 0 {
		arg := args[0]
		if arg == "--" {
			return opts, append(operands, args[1:]...), nil
		}
		if len(arg) < 2 || arg[0] != '-' {
			operands = append(operands, arg)
			args = args[1:]
			continue
		}
		args = args[1:]
		for i := 1; i < len(arg); i++ {
			j := strings.IndexByte(spec, arg[i])
			if j < 0 || arg[i] == ':' {
				return nil, nil, fmt.Errorf("unrecognized option '%c'", arg[i])
			}
			if j+1 < len(spec) && spec[j+1] == ':' {
				value := arg[i+1:]
				if value == "" {
					if len(args) == 0 {
						return nil, nil, fmt.Errorf("option requires an argument -- '%c'", arg[i])
					}
					value, args = args[0], args[1:]
				}
				opts = append(opts, option{arg[i], value})
				break
			}
			opts = append(opts, option{flag: arg[i]})
		}
	}
	return opts, operands, nil
}

// options parses a builtin's flags (see getopt), reporting a bad flag or
// fewer than minOperands operands; ok is false then.
func (c *command) options(args []string, spec string, minOperands int) (opts []option, operands []string, ok bool) {
	opts, operands, err := getopt(args, spec)
	switch {
	case err != nil:
		c.errorf("%v", err)
		return nil, nil, false
	case len(operands) < minOperands:
		c.errorf("missing operand")
		return nil, nil, false
	}
	return opts, operands, true
}

// forEach applies op to each operand, reporting each failure; the status
// is 1 if any failed.
func (c *command) forEach(operands []string, op func(name string) error) int {
	code := 0
	for _, name := range operands {
		if err := op(name); err != nil {
			c.errorf("%v", err)
			code = 1
		}
	}
	return code
}

func hasFlag(opts []option, flag byte) bool {
	return slices.ContainsFunc(opts, func(o option) bool { return o.flag == flag })
}

// flagValue is the last value given to a flag.
func flagValue(opts []option, flag byte, def string) string {
	for _, o := range slices.Backward(opts) {
		if o.flag == flag {
			return o.value
		}
	}
	return def
}
