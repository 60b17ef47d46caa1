package sandbox

import (
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path"
	"slices"
	"strconv"
	"strings"
	"sync"
	"syscall"

	"mvdan.cc/sh/v3/expand"
	"mvdan.cc/sh/v3/interp"
	"mvdan.cc/sh/v3/syntax"
)

// process is one interpreted process of a container: the main command, an
// exec session, or a probe. Every command and file access its shell makes
// goes through it, to builtins and the container's virtual filesystem; no
// host process, file or socket is ever used.
type process struct {
	pod *Pod
	fs  *FS
	// pid and ppid are $$ and $PPID: the container's command is PID 1.
	pid, ppid int

	mu    sync.Mutex
	traps map[string]string // signal (TERM, INT...) → trap command
	// loopGoesOn is what a stepped loop's condition last said.
	loopGoesOn bool
	// shell is the $0 of the shell this process runs ("/bin/sh" when
	// started as /bin/sh -c): busybox's sh begins its error lines with it.
	shell string
}

// shellName is what the process's error lines begin with.
func (p *process) shellName() string {
	if p.shell == "" {
		return "sh"
	}
	return p.shell
}

// takeLoopCondition returns what the last loop condition said.
func (p *process) takeLoopCondition() bool {
	p.mu.Lock()
	defer p.mu.Unlock()
	goOn := p.loopGoesOn
	p.loopGoesOn = false
	return goOn
}

func newProcess(pod *Pod, fsys *FS, pid, ppid int) *process {
	return &process{pod: pod, fs: fsys, pid: pid, ppid: ppid}
}

// child is a new process started by this one (a nested shell, env's
// command).
func (p *process) child() *process {
	return newProcess(p.pod, p.fs, p.pod.newPID(), p.pid)
}

// errUnsupported is what a program using process substitution gets: it
// would make a FIFO on the host.
var errUnsupported = errors.New("not supported in a simulated container")

// The variables that stand for $$ and $PPID.
const (
	pidVar  = "DEVPLANE_SHELL_PID"
	ppidVar = "DEVPLANE_SHELL_PPID"
)

// sanitize adapts a program to the sandbox before it runs: -O and -G
// (owned by me) become -e, as root owns every file here, so that the
// interpreter does not look up the host's users; $$ and $PPID read the
// process's own IDs; process substitution is refused.
func sanitize(node syntax.Node) error {
	var err error
	syntax.Walk(node, func(n syntax.Node) bool {
		switch n := n.(type) {
		case *syntax.ProcSubst:
			err = fmt.Errorf("process substitution: %w", errUnsupported)
		case *syntax.UnaryTest:
			if n.Op == syntax.TsUsrOwn || n.Op == syntax.TsGrpOwn {
				n.Op = syntax.TsExists
			}
		case *syntax.ParamExp:
			// The interpreter's $$ and $PPID are the host's process IDs:
			// read ours instead.
			if n.Param != nil && n.Param.Value == "$" {
				n.Param.Value = pidVar
			} else if n.Param != nil && n.Param.Value == "PPID" {
				n.Param.Value = ppidVar
			}
		}
		return err == nil
	})
	return err
}

// parse reads a whole script, sanitized.
func parse(src io.Reader, name string) (*syntax.File, error) {
	file, err := syntax.NewParser().Parse(src, name)
	if err != nil {
		return nil, err
	}
	if err := sanitize(file); err != nil {
		return nil, err
	}
	return file, nil
}

// sanitizedSource is src sanitized and printed back, for the builtins
// that parse their own strings (eval).
func sanitizedSource(src string) (string, error) {
	file, err := parse(strings.NewReader(src), "")
	if err != nil {
		return src, err
	}
	var b strings.Builder
	if err := syntax.NewPrinter().Print(&b, file); err != nil {
		return src, err
	}
	return b.String(), nil
}

// environ is a process's environment as the shell sees it: the exported
// variables given, and unexported ones the interpreter would otherwise
// take from the host: UID/EUID/GID (root), HOME (empty when unset, as
// after env -i), and the process IDs behind $$ and $PPID.
type environ struct {
	expand.Environ
	pid, ppid int
}

func (e environ) Get(name string) expand.Variable {
	value := func(s string) expand.Variable {
		return expand.Variable{Set: true, ReadOnly: true, Kind: expand.String, Str: s}
	}
	switch name {
	case "UID", "EUID", "GID":
		return value("0")
	case pidVar:
		return value(strconv.Itoa(e.pid))
	case ppidVar:
		return value(strconv.Itoa(e.ppid))
	case "HOME":
		if vr := e.Environ.Get(name); vr.IsSet() {
			return vr
		}
		return expand.Variable{Set: true, Kind: expand.String}
	}
	return e.Environ.Get(name)
}

// exported lists the exported variables of a shell's environment, as a
// child process receives them.
func exported(env expand.Environ) []string {
	var list []string
	for name, vr := range env.Each {
		if vr.Exported && vr.IsSet() {
			list = append(list, name+"="+vr.String())
		}
	}
	slices.Sort(list)
	return list
}

// shellIO is a shell's standard streams.
type shellIO struct {
	stdin          io.Reader
	stdout, stderr io.Writer
}

// newRunner makes an interpreter whose every command, file and directory
// access is the process's.
func (p *process) newRunner(env []string, dir string, params []string, sio shellIO) (*interp.Runner, error) {
	if dir == "" {
		dir = "/"
	}
	return interp.New(
		interp.Env(environ{Environ: expand.ListEnviron(env...), pid: p.pid, ppid: p.ppid}),
		// interp.Dir would stat the host's directory; ours is virtual.
		func(r *interp.Runner) error { r.Dir = path.Clean("/" + dir); return nil },
		interp.StdIO(sio.stdin, sio.stdout, sio.stderr),
		interp.Params(append([]string{"--"}, params...)...),
		interp.CallHandler(p.call),
		interp.ExecHandlers(func(interp.ExecHandlerFunc) interp.ExecHandlerFunc { return p.exec }),
		interp.OpenHandler(p.open),
		interp.ReadDirHandler2(func(ctx context.Context, name string) ([]fs.DirEntry, error) {
			return p.fs.ReadDir(absPath(interp.HandlerCtx(ctx).Dir, name))
		}),
		interp.StatHandler(func(ctx context.Context, name string, _ bool) (fs.FileInfo, error) {
			return p.fs.Stat(absPath(interp.HandlerCtx(ctx).Dir, name))
		}),
		interp.AccessHandler(p.access),
	)
}

func absPath(dir, name string) string {
	if !path.IsAbs(name) {
		name = path.Join(dir, name)
	}
	return path.Clean(name)
}

// open serves redirections and the interpreter's own file reads.
func (p *process) open(ctx context.Context, name string, flag int, perm os.FileMode) (io.ReadWriteCloser, error) {
	hc := interp.HandlerCtx(ctx)
	switch name {
	case "/dev/stdout", "/proc/self/fd/1":
		return nopCloser{w: hc.Stdout}, nil
	case "/dev/stderr", "/proc/self/fd/2":
		return nopCloser{w: hc.Stderr}, nil
	case "/dev/stdin", "/proc/self/fd/0":
		return nopCloser{r: stdinOf(hc)}, nil
	}
	f, err := p.fs.OpenFile(absPath(hc.Dir, name), flag, perm)
	if err != nil {
		// As busybox's sh reports a redirection it cannot make.
		if flag&(os.O_WRONLY|os.O_RDWR|os.O_APPEND|os.O_CREATE|os.O_TRUNC) != 0 {
			return nil, &os.PathError{Op: p.shellName() + ": can't create", Path: name, Err: errors.New(errText(err))}
		}
		return nil, &os.PathError{Op: p.shellName() + ": can't open", Path: "'" + name + "'", Err: errors.New(errText(err))}
	}
	return f, nil
}

// stdinOf is a handler's standard input, nil when there is none (the
// interpreter hands a nil *os.File then).
func stdinOf(hc interp.HandlerContext) io.Reader {
	if f, ok := hc.Stdin.(*os.File); ok && f == nil {
		return nil
	}
	return hc.Stdin
}

// access answers -r/-w/-x and cd: root may read and write everything but
// read-only mounts, and run what has an execute bit.
func (p *process) access(ctx context.Context, name string, mode interp.AccessMode) error {
	name = absPath(interp.HandlerCtx(ctx).Dir, name)
	info, err := p.fs.Stat(name)
	if err != nil {
		return err
	}
	if mode&interp.AccessWrite != 0 {
		if _, _, ro := p.fs.resolve(name); ro {
			return pathErr("access", name, syscall.EROFS)
		}
	}
	if mode&interp.AccessExec != 0 && !info.IsDir() && info.Mode().Perm()&0o111 == 0 {
		return pathErr("access", name, syscall.EACCES)
	}
	return nil
}

// nopCloser adapts a standard stream to the file the interpreter opens.
type nopCloser struct {
	r io.Reader
	w io.Writer
}

func (n nopCloser) Read(b []byte) (int, error) {
	if n.r == nil {
		return 0, io.EOF
	}
	return n.r.Read(b)
}

func (n nopCloser) Write(b []byte) (int, error) {
	if n.w == nil {
		return len(b), nil
	}
	return n.w.Write(b)
}

func (nopCloser) Close() error { return nil }

// Names under which the call handler hands the interpreter's builtins that
// would look at the host to our own versions.
const (
	typeCommand    = "devplane:type"
	commandV       = "devplane:command-v"
	sourceCommand  = "devplane:source"
	refusedCommand = "devplane:refused"
	echoCommand    = "devplane:echo"
	// loopCondCommand reports a stepped loop's condition.
	loopCondCommand = "devplane:loop-condition"
	printfCommand   = "devplane:printf"
)

// call rewrites, before they run, the interpreter builtins that would look
// at the host (PATH lookups, pwd -P, source) or cannot be offered (traps on
// signals other than EXIT and ERR are recorded here).
func (p *process) call(ctx context.Context, args []string) ([]string, error) {
	switch args[0] {
	case "type":
		return append([]string{typeCommand}, args[1:]...), nil
	case "command":
		if len(args) > 1 && (args[1] == "-v" || args[1] == "-V") {
			return append([]string{commandV}, args[1:]...), nil
		}
	case "source", ".":
		return append([]string{sourceCommand}, args[1:]...), nil
	case "pwd":
		return []string{"pwd"}, nil // no symlinks here: -P is -L
	case "echo":
		// Ours report write errors (a full disk), so that a loop writing
		// until it fails ends.
		return append([]string{echoCommand}, args[1:]...), nil
	case "printf":
		return append([]string{printfCommand}, args[1:]...), nil
	case "eval":
		src, err := sanitizedSource(strings.Join(args[1:], " "))
		if errors.Is(err, errUnsupported) {
			return []string{refusedCommand, "eval", err.Error()}, nil
		}
		if err == nil {
			return []string{"eval", src}, nil
		}
	case "test", "[":
		// Root owns every file here: -O and -G are -e.
		if slices.Contains(args, "-O") || slices.Contains(args, "-G") {
			out := slices.Clone(args)
			for i, a := range out {
				if a == "-O" || a == "-G" {
					out[i] = "-e"
				}
			}
			return out, nil
		}
	case "alias":
		for _, a := range args[1:] {
			if strings.Contains(a, "<(") || strings.Contains(a, ">(") {
				return []string{refusedCommand, "alias", "process substitution: " + errUnsupported.Error()}, nil
			}
		}
	case "trap":
		return p.trap(args), nil
	}
	return args, nil
}

// signalName normalises a trap's signal: "SIGTERM", "term", "15" → "TERM".
func signalName(s string) string {
	s = strings.TrimPrefix(strings.ToUpper(s), "SIG")
	numbers := map[string]string{"0": "EXIT", "1": "HUP", "2": "INT", "3": "QUIT", "9": "KILL", "10": "USR1", "12": "USR2", "13": "PIPE", "14": "ALRM", "15": "TERM", "17": "CHLD"}
	if name, ok := numbers[s]; ok {
		return name
	}
	return s
}

// trap records handlers for signals (the interpreter only knows EXIT and
// ERR) and passes the rest on.
func (p *process) trap(args []string) []string {
	rest := args[1:]
	if len(rest) > 0 && rest[0] == "--" {
		rest = rest[1:]
	}
	if len(rest) == 0 || strings.HasPrefix(rest[0], "-") && rest[0] != "-" {
		return args
	}
	callback, signals := rest[0], rest[1:]
	if len(rest) == 1 { // "trap SIG": back to the default
		callback, signals = "-", rest
	}
	keep := []string{"trap", callback}
	p.mu.Lock()
	defer p.mu.Unlock()
	for _, s := range signals {
		switch name := signalName(s); name {
		case "ERR":
			keep = append(keep, name)
		default:
			if p.traps == nil {
				p.traps = map[string]string{}
			}
			if callback == "-" {
				delete(p.traps, name)
			} else {
				p.traps[name] = callback
			}
		}
	}
	if _, err := parse(strings.NewReader(callback), "trap"); errors.Is(err, errUnsupported) {
		return []string{refusedCommand, "trap", err.Error()}
	}
	if len(keep) == 2 {
		return []string{":"}
	}
	return keep
}

// trapFor returns the command trapped for a signal, if any.
func (p *process) trapFor(signal string) (string, bool) {
	p.mu.Lock()
	defer p.mu.Unlock()
	cb, ok := p.traps[signal]
	return cb, ok
}
