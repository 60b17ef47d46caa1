package sandbox

import (
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path"
	"strconv"
	"strings"
	"time"
)

// copyInput copies r to w until EOF, a write error, or the end of ctx (so
// that `cat /dev/zero` stops when the container is killed).
func copyInput(ctx context.Context, w io.Writer, r io.Reader) error {
	buf := make([]byte, 32<<10)
	for ctx.Err() == nil {
		n, err := r.Read(buf)
		if n > 0 {
			if _, werr := w.Write(buf[:n]); werr != nil {
				return werr
			}
		}
		if err == io.EOF {
			return nil
		}
		if err != nil {
			return err
		}
	}
	return ctx.Err()
}

// maxWholeInput bounds what the builtins that need an input whole (tail,
// base64, a script on stdin) read, so that /dev/zero cannot fill the heap.
const maxWholeInput = 8 << 20

// readAll reads an input whole, up to maxWholeInput.
func readAll(ctx context.Context, r io.Reader) ([]byte, error) {
	var b strings.Builder
	err := copyInput(ctx, &limitedBuilder{b: &b, left: maxWholeInput}, r)
	return []byte(b.String()), err
}

var errInputTooLarge = errors.New("input too large")

type limitedBuilder struct {
	b    *strings.Builder
	left int
}

func (l *limitedBuilder) Write(p []byte) (int, error) {
	if len(p) > l.left {
		return 0, errInputTooLarge
	}
	l.left -= len(p)
	return l.b.Write(p)
}

// describe words an operand's failure as busybox does ("can't remove
// 'x': No such file or directory"); nil stays nil.
func describe(err error, format, name string) error {
	if err == nil {
		return nil
	}
	return fmt.Errorf(format, name, errText(err))
}

// eachInput opens each file operand in turn ("-" or none: standard
// input) for use; one that does not open is reported as busybox does
// ("can't open 'x': ..."), and the status is then 1.
func (c *command) eachInput(files []string, use func(i int, name string, in io.Reader)) int {
	if len(files) == 0 {
		files = []string{"-"}
	}
	code := 0
	for i, name := range files {
		in, err := c.input(name)
		if err != nil {
			c.errorf("can't open '%s': %s", name, errText(err))
			code = 1
			continue
		}
		use(i, name, in)
	}
	return code
}

// header is the "==> name <==" line head and tail print between files.
func (c *command) header(i int, name string) {
	if i > 0 {
		fmt.Fprintln(c.stdout)
	}
	fmt.Fprintf(c.stdout, "==> %s <==\n", name)
}

// readInput reads a file operand ("-": standard input) whole.
func (c *command) readInput(name string) ([]byte, error) {
	in, err := c.input(name)
	if err != nil {
		return nil, err
	}
	return readAll(c.ctx, in)
}

func cmdSleep(c *command, args []string) int {
	if len(args) == 0 {
		c.errorf("missing operand")
		return 1
	}
	total, forever := time.Duration(0), false
	for _, arg := range args {
		d, inf, ok := parseDuration(arg)
		if !ok {
			c.errorf("invalid number '%s'", arg)
			return 1
		}
		total += d
		forever = forever || inf
	}
	c.proc.sleep(c.ctx, total, forever)
	return 0
}

// parseDuration reads sleep's operand: seconds, with an optional s/m/h/d
// suffix and fraction, or "infinity".
func parseDuration(arg string) (d time.Duration, forever, ok bool) {
	if arg == "infinity" || arg == "inf" {
		return 0, true, true
	}
	unit := time.Second
	switch {
	case strings.HasSuffix(arg, "s"):
		arg = strings.TrimSuffix(arg, "s")
	case strings.HasSuffix(arg, "m"):
		arg, unit = strings.TrimSuffix(arg, "m"), time.Minute
	case strings.HasSuffix(arg, "h"):
		arg, unit = strings.TrimSuffix(arg, "h"), time.Hour
	case strings.HasSuffix(arg, "d"):
		arg, unit = strings.TrimSuffix(arg, "d"), 24*time.Hour
	}
	f, err := strconv.ParseFloat(arg, 64)
	if err != nil || f < 0 || strings.ContainsAny(arg, "xXpPnN") {
		return 0, false, false
	}
	if f*float64(unit) > float64(1<<62) {
		return 0, true, true
	}
	return time.Duration(f * float64(unit)), false, true
}

// sleep waits on the pod's clock, or until the process is stopped.
func (p *process) sleep(ctx context.Context, d time.Duration, forever bool) {
	if forever {
		<-ctx.Done()
		return
	}
	if d <= 0 {
		return
	}
	wake := make(chan struct{})
	timer := p.pod.cfg.Clock.AfterFunc(d, func() { close(wake) })
	select {
	case <-wake:
	case <-ctx.Done():
		timer.Stop()
	}
}

func cmdCat(c *command, args []string) int {
	_, files, ok := c.options(args, "uenvtA", 0)
	if !ok {
		return 1
	}
	failed := false
	code := c.eachInput(files, func(_ int, _ string, in io.Reader) {
		if err := copyInput(c.ctx, c.stdout, in); err != nil {
			c.errorf("read error: %s", errText(err))
			failed = true
		}
	})
	if failed {
		return 1
	}
	return code
}

func cmdTouch(c *command, args []string) int {
	opts, files, ok := c.options(args, "acmhd:t:r:", 1)
	if !ok {
		return 1
	}
	return c.forEach(files, func(name string) error {
		return describe(c.proc.fs.Touch(c.abs(name), !hasFlag(opts, 'c')), "%s: %s", name)
	})
}

func cmdMkdir(c *command, args []string) int {
	opts, dirs, ok := c.options(args, "pvm:", 1)
	if !ok {
		return 1
	}
	return c.forEach(dirs, func(name string) error {
		return describe(c.proc.fs.Mkdir(c.abs(name), hasFlag(opts, 'p')), "can't create directory '%s': %s", name)
	})
}

func cmdRm(c *command, args []string) int {
	opts, files, ok := c.options(args, "fiRrv", 0)
	if !ok {
		return 1
	}
	force, recursive := hasFlag(opts, 'f'), hasFlag(opts, 'r') || hasFlag(opts, 'R')
	if len(files) == 0 && !force {
		c.errorf("missing operand")
		return 1
	}
	return c.forEach(files, func(name string) error {
		full := c.abs(name)
		info, err := c.proc.fs.Stat(full)
		switch {
		case err != nil && force:
			return nil
		case err == nil && info.IsDir() && !recursive:
			return fmt.Errorf("'%s' is a directory", name)
		case err == nil:
			err = c.proc.fs.Remove(full, recursive)
		}
		return describe(err, "can't remove '%s': %s", name)
	})
}

func cmdRmdir(c *command, args []string) int {
	_, dirs, ok := c.options(args, "p", 1)
	if !ok {
		return 1
	}
	return c.forEach(dirs, func(name string) error {
		info, err := c.proc.fs.Stat(c.abs(name))
		if err == nil && !info.IsDir() {
			return fmt.Errorf("'%s': Not a directory", name)
		}
		if err == nil {
			err = c.proc.fs.Remove(c.abs(name), false)
		}
		return describe(err, "'%s': %s", name)
	})
}

// modeString is a mode as ls -l shows it: "drwxr-xr-x", "crw-rw-rw-".
func modeString(m fs.FileMode) string {
	kind := "-"
	switch {
	case m.IsDir():
		kind = "d"
	case m&fs.ModeCharDevice != 0:
		kind = "c"
	case m&fs.ModeSymlink != 0:
		kind = "l"
	}
	return kind + m.Perm().String()[1:]
}

func cmdLs(c *command, args []string) int {
	opts, operands, ok := c.options(args, "laA1dhFCrtSR", 0)
	if !ok {
		return 1
	}
	long, all, almostAll, dirOnly := hasFlag(opts, 'l'), hasFlag(opts, 'a'), hasFlag(opts, 'A'), hasFlag(opts, 'd')
	if len(operands) == 0 {
		operands = []string{"."}
	}
	line := func(name string, info fs.FileInfo) {
		if !long {
			fmt.Fprintln(c.stdout, name)
			return
		}
		links := 1
		if info.IsDir() {
			links = 2
		}
		fmt.Fprintf(c.stdout, "%s %4d %-8s %-8s %9d %s %s\n", modeString(info.Mode()), links, "root", "root",
			info.Size(), info.ModTime().UTC().Format("Jan _2 15:04"), name)
	}
	code := 0
	var dirs []string
	for _, name := range operands {
		info, err := c.proc.fs.Stat(c.abs(name))
		if err != nil {
			c.errorf("%s: %s", name, errText(err))
			code = 1
			continue
		}
		if info.IsDir() && !dirOnly {
			dirs = append(dirs, name)
			continue
		}
		line(name, info)
	}
	for i, name := range dirs {
		if len(operands) > 1 {
			if i > 0 || len(dirs) < len(operands) {
				fmt.Fprintln(c.stdout)
			}
			fmt.Fprintf(c.stdout, "%s:\n", name)
		}
		entries, err := c.proc.fs.ReadDir(c.abs(name))
		if err != nil {
			c.errorf("%s: %s", name, errText(err))
			code = 1
			continue
		}
		if long {
			fmt.Fprintf(c.stdout, "total %d\n", len(entries))
		}
		if all {
			for _, dot := range []string{".", ".."} {
				info, _ := c.proc.fs.Stat(c.abs(path.Join(name, dot)))
				line(dot, info)
			}
		}
		for _, e := range entries {
			if strings.HasPrefix(e.Name(), ".") && !all && !almostAll {
				continue
			}
			info, err := e.Info()
			if err == nil {
				line(e.Name(), info)
			}
		}
	}
	return code
}

// copyPath copies a file or (recursively) a directory within the sandbox.
func (c *command) copyPath(src, dst string, recursive bool) error {
	info, err := c.proc.fs.Stat(src)
	if err != nil {
		return err
	}
	if !info.IsDir() {
		data, err := c.proc.fs.ReadFile(src)
		if err != nil {
			return err
		}
		return c.proc.fs.WriteFile(dst, data, info.Mode().Perm())
	}
	if !recursive {
		return fmt.Errorf("omitting directory '%s'", src)
	}
	if err := c.proc.fs.Mkdir(dst, false); err != nil && !os.IsExist(err) {
		return err
	}
	entries, err := c.proc.fs.ReadDir(src)
	if err != nil {
		return err
	}
	for _, e := range entries {
		if err := c.copyPath(path.Join(src, e.Name()), path.Join(dst, e.Name()), true); err != nil {
			return err
		}
	}
	return nil
}

// targets pairs each source with its destination, into dst when it is a
// directory.
func (c *command) targets(operands []string) ([][2]string, error) {
	if len(operands) < 2 {
		return nil, fmt.Errorf("missing operand")
	}
	srcs, dst := operands[:len(operands)-1], c.abs(operands[len(operands)-1])
	info, err := c.proc.fs.Stat(dst)
	intoDir := err == nil && info.IsDir()
	if len(srcs) > 1 && !intoDir {
		return nil, fmt.Errorf("'%s' is not a directory", operands[len(operands)-1])
	}
	var pairs [][2]string
	for _, src := range srcs {
		to := dst
		if intoDir {
			to = path.Join(dst, path.Base(c.abs(src)))
		}
		pairs = append(pairs, [2]string{c.abs(src), to})
	}
	return pairs, nil
}

func cmdCp(c *command, args []string) int { return c.transfer(args, "rRapfidvLPnH", false) }

func cmdMv(c *command, args []string) int { return c.transfer(args, "finvT", true) }

// transfer copies (cp) or moves (mv) its sources to its last operand.
func (c *command) transfer(args []string, spec string, move bool) int {
	opts, operands, ok := c.options(args, spec, 0)
	if !ok {
		return 1
	}
	pairs, err := c.targets(operands)
	if err != nil {
		c.errorf("%v", err)
		return 1
	}
	recursive := move || hasFlag(opts, 'r') || hasFlag(opts, 'R') || hasFlag(opts, 'a')
	code := 0
	for _, pair := range pairs {
		if move && pair[0] == pair[1] {
			continue
		}
		err := c.copyPath(pair[0], pair[1], recursive)
		if err == nil && move {
			err = c.proc.fs.Remove(pair[0], true)
		}
		switch {
		case err != nil && move:
			c.errorf("can't rename '%s': %s", pair[0], errText(err))
			code = 1
		case err != nil:
			c.errorf("%s", errText(err))
			code = 1
		}
	}
	return code
}

func cmdTee(c *command, args []string) int {
	opts, files, ok := c.options(args, "ai", 0)
	if !ok {
		return 1
	}
	flag := os.O_WRONLY | os.O_CREATE | os.O_TRUNC
	if hasFlag(opts, 'a') {
		flag = os.O_WRONLY | os.O_CREATE | os.O_APPEND
	}
	writers := []io.Writer{c.stdout}
	code := 0
	for _, name := range files {
		f, err := c.proc.fs.OpenFile(c.abs(name), flag, 0o644)
		if err != nil {
			c.errorf("%s: %s", name, errText(err))
			code = 1
			continue
		}
		writers = append(writers, f)
	}
	if err := copyInput(c.ctx, io.MultiWriter(writers...), c.stdinOrEmpty()); err != nil {
		c.errorf("%s", errText(err))
		code = 1
	}
	return code
}

func cmdChmod(c *command, args []string) int {
	recursive := len(args) > 0 && args[0] == "-R"
	if recursive {
		args = args[1:]
	}
	if len(args) < 2 {
		c.errorf("missing operand")
		return 1
	}
	code := 0
	for _, name := range args[1:] {
		info, err := c.proc.fs.Stat(c.abs(name))
		if err == nil {
			mode, ok := applyMode(info.Mode().Perm(), args[0])
			if !ok {
				c.errorf("invalid mode '%s'", args[0])
				return 1
			}
			err = c.proc.fs.Chmod(c.abs(name), mode)
		}
		if err != nil {
			c.errorf("%s: %s", name, errText(err))
			code = 1
		}
	}
	return code
}

// applyMode applies an octal ("755") or symbolic ("u+x,go-w") mode.
func applyMode(cur fs.FileMode, spec string) (fs.FileMode, bool) {
	if n, err := strconv.ParseUint(spec, 8, 32); err == nil {
		return fs.FileMode(n) & fs.ModePerm, true
	}
	for _, clause := range strings.Split(spec, ",") {
		i := strings.IndexAny(clause, "+-=")
		if i < 0 {
			return cur, false
		}
		who, op, perms := clause[:i], clause[i], clause[i+1:]
		var mask, whoMask fs.FileMode
		if who == "" || strings.Contains(who, "a") {
			who = "ugo"
		}
		for _, w := range who {
			shift := map[rune]uint{'u': 6, 'g': 3, 'o': 0}[w]
			whoMask |= 7 << shift
			for _, p := range perms {
				bit, ok := map[rune]fs.FileMode{'r': 4, 'w': 2, 'x': 1}[p]
				if !ok {
					return cur, false
				}
				mask |= bit << shift
			}
		}
		switch op {
		case '+':
			cur |= mask
		case '-':
			cur &^= mask
		case '=':
			cur = cur&^whoMask | mask
		}
	}
	return cur, true
}
