package sandbox

import (
	"bufio"
	"bytes"
	"encoding/base64"
	"fmt"
	"io"
	"path"
	"regexp"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"time"

	"mvdan.cc/sh/v3/expand"
	"mvdan.cc/sh/v3/syntax"
)

// writeOut writes a builtin's output, reporting a failed write (a full
// disk) as busybox does.
func (c *command) writeOut(s string) int {
	if _, err := io.WriteString(c.stdout, s); err != nil {
		c.errorf("write error: %s", errText(err))
		return 1
	}
	return 0
}

func cmdEcho(c *command, args []string) int {
	newline, escapes := true, false
options:
	for ; len(args) > 0; args = args[1:] {
		switch args[0] {
		case "-n":
			newline = false
		case "-e":
			escapes = true
		case "-E":
			escapes = false
		default:
			break options
		}
	}
	var b strings.Builder
	for i, arg := range args {
		if i > 0 {
			b.WriteByte(' ')
		}
		if escapes {
			arg, _, _ = expand.Format(&expand.Config{}, arg, nil)
		}
		b.WriteString(arg)
	}
	if newline {
		b.WriteByte('\n')
	}
	return c.writeOut(b.String())
}

func cmdPrintf(c *command, args []string) int {
	if len(args) == 0 {
		c.errorf("usage: printf format [arguments]")
		return 2
	}
	format, args := args[0], args[1:]
	var b strings.Builder
	for {
		s, n, err := expand.Format(&expand.Config{}, format, args)
		if err != nil {
			c.errorf("%v", err)
			return 1
		}
		b.WriteString(s)
		args = args[n:]
		if n == 0 || len(args) == 0 {
			break
		}
	}
	return c.writeOut(b.String())
}

func cmdEnv(c *command, args []string) int {
	env := exported(c.hc.Env)
	for len(args) > 0 && strings.HasPrefix(args[0], "-") && args[0] != "-" {
		switch args[0] {
		case "-i", "--ignore-environment":
			env = nil
		case "-u":
			if len(args) < 2 {
				c.errorf("option requires an argument -- 'u'")
				return 1
			}
			env = slices.DeleteFunc(env, func(kv string) bool { return strings.HasPrefix(kv, args[1]+"=") })
			args = args[1:]
		case "--":
			args = args[1:]
			goto assignments
		default:
			c.errorf("unrecognized option '%s'", args[0])
			return 1
		}
		args = args[1:]
	}
assignments:
	if len(args) > 0 && args[0] == "-" {
		env, args = nil, args[1:]
	}
	for len(args) > 0 && strings.Contains(args[0], "=") {
		name := args[0][:strings.IndexByte(args[0], '=')]
		env = slices.DeleteFunc(env, func(kv string) bool { return strings.HasPrefix(kv, name+"=") })
		env = append(env, args[0])
		args = args[1:]
	}
	if len(args) == 0 {
		for _, kv := range env {
			fmt.Fprintln(c.stdout, kv)
		}
		return 0
	}
	return c.proc.spawn(c, env, args)
}

// spawn runs argv as a child program with its own environment, as env does.
func (p *process) spawn(c *command, env []string, argv []string) int {
	child := p.child()
	r, err := child.newRunner(env, c.hc.Dir, nil, shellIO{c.stdin, c.stdout, c.stderr})
	if err != nil {
		c.errorf("%v", err)
		return 1
	}
	return child.runProgram(c.ctx, r, commandProgram(argv))
}

// commandProgram is a program running argv as one simple command.
func commandProgram(argv []string) *syntax.File {
	call := &syntax.CallExpr{}
	for _, arg := range argv {
		call.Args = append(call.Args, &syntax.Word{Parts: []syntax.WordPart{&syntax.SglQuoted{Value: arg}}})
	}
	return &syntax.File{Name: argv[0], Stmts: []*syntax.Stmt{{Cmd: call}}}
}

func cmdPrintenv(c *command, args []string) int {
	if len(args) == 0 {
		for _, kv := range exported(c.hc.Env) {
			fmt.Fprintln(c.stdout, kv)
		}
		return 0
	}
	code := 0
	for _, name := range args {
		vr := c.hc.Env.Get(name)
		if !vr.IsSet() || !vr.Exported {
			code = 1
			continue
		}
		fmt.Fprintln(c.stdout, vr.String())
	}
	return code
}

func cmdHostname(c *command, args []string) int {
	name := c.proc.pod.cfg.Hostname
	switch {
	case slices.Contains(args, "-s"):
		name, _, _ = strings.Cut(name, ".")
	case slices.Contains(args, "-i"):
		// The addresses /etc/hosts gives the hostname, as the kubelet
		// writes the pod's IPs there.
		var ips []string
		for _, line := range strings.Split(string(c.proc.pod.cfg.Hosts), "\n") {
			fields := strings.Fields(line)
			if len(fields) > 1 && !strings.HasPrefix(fields[0], "#") && slices.Contains(fields[1:], name) {
				ips = append(ips, fields[0])
			}
		}
		if len(ips) == 0 {
			c.errorf("%s: Unknown host", name)
			return 1
		}
		name = strings.Join(ips, " ")
	}
	fmt.Fprintln(c.stdout, name)
	return 0
}

// strftimeLayouts are the date(1) conversions that are a Go layout.
var strftimeLayouts = map[byte]string{
	'y': "06", 'm': "01", 'd': "02", 'e': "_2", 'H': "15", 'I': "03", 'M': "04", 'S': "05",
	'p': "PM", 'a': "Mon", 'A': "Monday", 'b': "Jan", 'h': "Jan", 'B': "January",
	'Z': "MST", 'z': "-0700", 'F': "2006-01-02", 'T': "15:04:05", 'D': "01/02/06", 'R': "15:04",
}

// strftime formats t with the conversions date(1) scripts use.
func strftime(t time.Time, format string) string {
	var b strings.Builder
	for i := 0; i < len(format); i++ {
		if format[i] != '%' || i+1 == len(format) {
			b.WriteByte(format[i])
			continue
		}
		i++
		if layout, ok := strftimeLayouts[format[i]]; ok {
			b.WriteString(t.Format(layout))
			continue
		}
		switch format[i] {
		case 'Y':
			b.WriteString(strconv.Itoa(t.Year()))
		case 'N':
			fmt.Fprintf(&b, "%09d", t.Nanosecond())
		case 's':
			b.WriteString(strconv.FormatInt(t.Unix(), 10))
		case 'j':
			fmt.Fprintf(&b, "%03d", t.YearDay())
		case 'n':
			b.WriteByte('\n')
		case 't':
			b.WriteByte('\t')
		case '%':
			b.WriteByte('%')
		default:
			b.WriteByte('%')
			b.WriteByte(format[i])
		}
	}
	return b.String()
}

func cmdDate(c *command, args []string) int {
	// Containers have no /etc/localtime unless the image brings one: UTC.
	now := c.proc.pod.cfg.Clock.Now().UTC()
	format := "%a %b %e %H:%M:%S %Z %Y"
	for i := 0; i < len(args); i++ {
		arg := args[i]
		switch {
		case strings.HasPrefix(arg, "+"):
			format = arg[1:]
		case arg == "-u" || arg == "--utc":
		case arg == "-R":
			format = "%a, %d %b %Y %H:%M:%S %z"
		case arg == "-I" || arg == "-Idate" || arg == "--iso-8601":
			format = "%F"
		case arg == "-Iseconds" || arg == "--iso-8601=seconds":
			format = "%FT%T%z"
		case arg == "-d" && i+1 < len(args) && strings.HasPrefix(args[i+1], "@"):
			secs, err := strconv.ParseInt(args[i+1][1:], 10, 64)
			if err != nil {
				c.errorf("invalid date '%s'", args[i+1])
				return 1
			}
			now = time.Unix(secs, 0).UTC()
			i++
		default:
			c.errorf("invalid date '%s'", arg)
			return 1
		}
	}
	fmt.Fprintln(c.stdout, strftime(now, format))
	return 0
}

func cmdWc(c *command, args []string) int {
	opts, files, ok := c.options(args, "lcwmL", 0)
	if !ok {
		return 1
	}
	show := []byte{}
	for _, f := range []byte("lwc") {
		if hasFlag(opts, f) || f == 'c' && hasFlag(opts, 'm') {
			show = append(show, f)
		}
	}
	if len(show) == 0 {
		show = []byte("lwc")
	}
	named := len(files) > 0
	if !named {
		files = []string{"-"}
	}
	var total [3]int
	code := 0
	print := func(counts [3]int, name string) {
		var cols []string
		for _, f := range show {
			n := counts[strings.IndexByte("lwc", f)]
			if len(show) == 1 && !named {
				cols = append(cols, strconv.Itoa(n))
			} else {
				cols = append(cols, fmt.Sprintf("%7d", n))
			}
		}
		if named {
			cols = append(cols, name)
		}
		fmt.Fprintln(c.stdout, strings.Join(cols, " "))
	}
	for _, name := range files {
		var counts [3]int
		in, err := c.input(name)
		if err == nil {
			counts, err = c.count(in)
		}
		if err != nil {
			c.errorf("%s: %s", name, errText(err))
			code = 1
			continue
		}
		for i := range total {
			total[i] += counts[i]
		}
		print(counts, name)
	}
	if len(files) > 1 {
		print(total, "total")
	}
	return code
}

// count reads an input through, counting its lines, words and bytes.
func (c *command) count(in io.Reader) (counts [3]int, err error) {
	buf := make([]byte, 32<<10)
	inWord := false
	for c.ctx.Err() == nil {
		n, err := in.Read(buf)
		for _, b := range buf[:n] {
			if b == '\n' {
				counts[0]++
			}
			space := b == ' ' || b == '\n' || b == '\t' || b == '\r' || b == '\v' || b == '\f'
			if !space && !inWord {
				counts[1]++
			}
			inWord = !space
		}
		counts[2] += n
		if err == io.EOF {
			return counts, nil
		}
		if err != nil {
			return counts, err
		}
	}
	return counts, c.ctx.Err()
}

// breToRE2 turns a POSIX basic regular expression into Go's syntax: in a
// BRE, \( \) \{ \} \| \+ \? are operators and their bare forms literals.
func breToRE2(bre string) string {
	var b strings.Builder
	for i := 0; i < len(bre); i++ {
		ch := bre[i]
		switch {
		case ch == '\\' && i+1 < len(bre):
			i++
			if strings.IndexByte("(){}|+?", bre[i]) >= 0 {
				b.WriteByte(bre[i])
			} else {
				b.WriteByte('\\')
				b.WriteByte(bre[i])
			}
		case ch == '[':
			end := i + 1
			if end < len(bre) && bre[end] == '^' {
				end++
			}
			if end < len(bre) && bre[end] == ']' {
				end++
			}
			for end < len(bre) && bre[end] != ']' {
				if strings.HasPrefix(bre[end:], "[:") {
					if j := strings.Index(bre[end:], ":]"); j > 0 {
						end += j + 1
					}
				}
				end++
			}
			if end >= len(bre) {
				b.WriteString(regexp.QuoteMeta(bre[i:]))
				return b.String()
			}
			b.WriteString(bre[i : end+1])
			i = end
		case strings.IndexByte("(){}|+?", ch) >= 0:
			b.WriteByte('\\')
			b.WriteByte(ch)
		case ch == '*' && (i == 0 || bre[i-1] == '^' && i == 1):
			b.WriteString(`\*`)
		default:
			b.WriteByte(ch)
		}
	}
	return b.String()
}

func cmdGrep(c *command, args []string) int {
	opts, operands, ok := c.options(args, "qvicnlLhHFEGe:xwsoa", 0)
	if !ok {
		return 2
	}
	var patterns []string
	for _, o := range opts {
		if o.flag == 'e' {
			patterns = append(patterns, strings.Split(o.value, "\n")...)
		}
	}
	if patterns == nil {
		if len(operands) == 0 {
			c.errorf("missing pattern")
			return 2
		}
		patterns, operands = strings.Split(operands[0], "\n"), operands[1:]
	}
	var exprs []string
	for _, p := range patterns {
		switch {
		case hasFlag(opts, 'F'):
			p = regexp.QuoteMeta(p)
		case !hasFlag(opts, 'E'):
			p = breToRE2(p)
		}
		if hasFlag(opts, 'w') {
			p = `(?:^|\W)(?:` + p + `)(?:\W|$)`
		}
		if hasFlag(opts, 'x') {
			p = `^(?:` + p + `)$`
		}
		exprs = append(exprs, "(?:"+p+")")
	}
	expr := strings.Join(exprs, "|")
	if hasFlag(opts, 'i') {
		expr = "(?i)" + expr
	}
	re, err := regexp.Compile(expr)
	if err != nil {
		c.errorf("bad regex '%s': %v", strings.Join(patterns, "\n"), err)
		return 2
	}
	quiet, invert := hasFlag(opts, 'q'), hasFlag(opts, 'v')
	prefix := len(operands) > 1 && !hasFlag(opts, 'h') || hasFlag(opts, 'H')
	if len(operands) == 0 {
		operands = []string{"-"}
	}
	matched, code := false, 0
	for _, name := range operands {
		in, err := c.input(name)
		if err != nil {
			if !hasFlag(opts, 's') {
				c.errorf("%s: %s", name, errText(err))
			}
			code = 2
			continue
		}
		shown := name
		if name == "-" {
			shown = "(standard input)"
		}
		count := 0
		scanner := bufio.NewScanner(in)
		scanner.Buffer(make([]byte, 0, 64<<10), 1<<20)
		for n := 1; scanner.Scan() && c.ctx.Err() == nil; n++ {
			line := scanner.Text()
			if re.MatchString(line) == invert {
				continue
			}
			matched = true
			count++
			if quiet {
				return 0
			}
			if hasFlag(opts, 'c') || hasFlag(opts, 'l') || hasFlag(opts, 'L') {
				continue
			}
			var out strings.Builder
			if prefix {
				out.WriteString(shown + ":")
			}
			if hasFlag(opts, 'n') {
				out.WriteString(strconv.Itoa(n) + ":")
			}
			if hasFlag(opts, 'o') && !invert {
				for _, m := range re.FindAllString(line, -1) {
					fmt.Fprintln(c.stdout, out.String()+m)
				}
				continue
			}
			fmt.Fprintln(c.stdout, out.String()+line)
		}
		switch {
		case hasFlag(opts, 'c') && prefix:
			fmt.Fprintf(c.stdout, "%s:%d\n", shown, count)
		case hasFlag(opts, 'c'):
			fmt.Fprintln(c.stdout, count)
		case hasFlag(opts, 'l') && count > 0, hasFlag(opts, 'L') && count == 0:
			fmt.Fprintln(c.stdout, shown)
		}
	}
	if code != 0 && !(matched && hasFlag(opts, 's')) {
		return code
	}
	if !matched {
		return 1
	}
	return 0
}

// countOperand turns the old "-5" form into "-n 5".
func countOperand(args []string) []string {
	out := make([]string, 0, len(args))
	for _, a := range args {
		if len(a) > 1 && a[0] == '-' && strings.Trim(a[1:], "0123456789") == "" {
			out = append(out, "-n", a[1:])
			continue
		}
		out = append(out, a)
	}
	return out
}

func cmdHead(c *command, args []string) int {
	opts, files, ok := c.options(countOperand(args), "n:c:qv", 0)
	if !ok {
		return 1
	}
	lines, err1 := strconv.Atoi(flagValue(opts, 'n', "10"))
	chars, err2 := strconv.Atoi(flagValue(opts, 'c', "-1"))
	if err1 != nil || err2 != nil || lines < 0 {
		c.errorf("invalid number")
		return 1
	}
	return c.eachInput(files, func(i int, name string, in io.Reader) {
		if len(files) > 1 && !hasFlag(opts, 'q') || hasFlag(opts, 'v') {
			c.header(i, name)
		}
		if chars >= 0 {
			_ = copyInput(c.ctx, c.stdout, io.LimitReader(in, int64(chars)))
			return
		}
		reader := bufio.NewReader(in)
		for n := 0; n < lines && c.ctx.Err() == nil; n++ {
			line, err := reader.ReadString('\n')
			io.WriteString(c.stdout, line)
			if err != nil {
				break
			}
		}
	})
}

func cmdTail(c *command, args []string) int {
	opts, files, ok := c.options(countOperand(args), "n:c:fFqvs:", 0)
	if !ok {
		return 1
	}
	spec := flagValue(opts, 'n', "10")
	fromStart := strings.HasPrefix(spec, "+")
	lines, err := strconv.Atoi(strings.TrimPrefix(spec, "+"))
	chars, err2 := strconv.Atoi(strings.TrimPrefix(flagValue(opts, 'c', "-1"), "+"))
	if err != nil || err2 != nil {
		c.errorf("invalid number '%s'", spec)
		return 1
	}
	follow := hasFlag(opts, 'f') || hasFlag(opts, 'F')
	if len(files) == 0 {
		files, follow = []string{"-"}, false // a pipe is not followed
	}
	var last io.Reader
	code := c.eachInput(files, func(i int, name string, in io.Reader) {
		if len(files) > 1 {
			c.header(i, name)
		}
		data, _ := readAll(c.ctx, in)
		switch {
		case chars >= 0:
			c.stdout.Write(data[max(0, len(data)-chars):])
		case fromStart:
			parts := bytes.SplitAfter(data, []byte("\n"))
			c.stdout.Write(bytes.Join(parts[min(len(parts), max(0, lines-1)):], nil))
		default:
			parts := bytes.SplitAfter(data, []byte("\n"))
			if len(parts) > 0 && len(parts[len(parts)-1]) == 0 {
				parts = parts[:len(parts)-1]
			}
			c.stdout.Write(bytes.Join(parts[max(0, len(parts)-lines):], nil))
		}
		last = in
	})
	if follow && last != nil {
		// Follow the last file: what is appended shows up once a second.
		for c.ctx.Err() == nil {
			c.proc.sleep(c.ctx, time.Second, false)
			_ = copyInput(c.ctx, c.stdout, last)
		}
	}
	return code
}

func cmdSeq(c *command, args []string) int {
	sep, width := "\n", false
	for len(args) > 0 {
		switch {
		case args[0] == "-s" && len(args) > 1:
			sep, args = args[1], args[2:]
			continue
		case strings.HasPrefix(args[0], "-s") && len(args[0]) > 2:
			sep, args = args[0][2:], args[1:]
			continue
		case args[0] == "-w":
			width, args = true, args[1:]
			continue
		}
		break
	}
	if len(args) < 1 || len(args) > 3 {
		c.errorf("missing operand")
		return 1
	}
	nums := make([]float64, len(args))
	integers := true
	for i, a := range args {
		f, err := strconv.ParseFloat(a, 64)
		if err != nil {
			c.errorf("invalid number '%s'", a)
			return 1
		}
		nums[i] = f
		integers = integers && !strings.ContainsAny(a, ".eE")
	}
	first, step, last := 1.0, 1.0, nums[len(nums)-1]
	switch len(nums) {
	case 2:
		first = nums[0]
	case 3:
		first, step = nums[0], nums[1]
	}
	if step == 0 {
		c.errorf("invalid increment")
		return 1
	}
	format := func(f float64) string {
		if integers {
			return strconv.FormatInt(int64(f), 10)
		}
		return strconv.FormatFloat(f, 'g', -1, 64)
	}
	pad := 0
	if width {
		pad = max(len(format(first)), len(format(last)))
	}
	var out []string
	for i := 0; ; i++ {
		v := first + float64(i)*step
		if step > 0 && v > last || step < 0 && v < last || c.ctx.Err() != nil {
			break
		}
		s := format(v)
		for len(s) < pad {
			s = "0" + s
		}
		out = append(out, s)
		if len(out) >= 4096 {
			io.WriteString(c.stdout, strings.Join(out, sep)+sep)
			out = out[:0]
		}
	}
	if len(out) > 0 {
		io.WriteString(c.stdout, strings.Join(out, sep)+"\n")
	}
	return 0
}

func cmdID(c *command, args []string) int {
	opts, _, ok := c.options(args, "ugGnr", 0)
	if !ok {
		return 1
	}
	uid, gid := c.proc.fs.uid, c.proc.fs.gid
	name := hasFlag(opts, 'n')
	switch {
	case hasFlag(opts, 'u'):
		fmt.Fprintln(c.stdout, idName(uid, userNames, name))
	case hasFlag(opts, 'g'), hasFlag(opts, 'G'):
		fmt.Fprintln(c.stdout, idName(gid, groupNames, name))
	default:
		groups := fmt.Sprintf("%d(%s)", gid, groupNames[gid])
		if gid == 0 {
			groups += ",10(wheel)"
		}
		if groupNames[gid] == "" {
			groups = fmt.Sprint(gid)
		}
		fmt.Fprintf(c.stdout, "uid=%s gid=%s groups=%s\n", idWithName(uid, userNames), idWithName(gid, groupNames), groups)
	}
	return 0
}

// userNames and groupNames are busybox's /etc/passwd and /etc/group.
var (
	userNames  = map[int64]string{0: "root", 65534: "nobody"}
	groupNames = map[int64]string{0: "root", 65534: "nogroup"}
)

// idName is id's -u or -g answer: the number, or with -n the name (the
// number when it has none).
func idName(id int64, names map[int64]string, name bool) string {
	if n := names[id]; name && n != "" {
		return n
	}
	return fmt.Sprint(id)
}

// idWithName is "65534(nobody)", or the bare number for an unknown id.
func idWithName(id int64, names map[int64]string) string {
	if n := names[id]; n != "" {
		return fmt.Sprintf("%d(%s)", id, n)
	}
	return fmt.Sprint(id)
}

func cmdWhoami(c *command, _ []string) int {
	uid := c.proc.fs.uid
	if n := userNames[uid]; n != "" {
		fmt.Fprintln(c.stdout, n)
		return 0
	}
	c.errorf("unknown uid %d", uid)
	return 1
}

func cmdBasename(c *command, args []string) int {
	if len(args) == 0 {
		c.errorf("missing operand")
		return 1
	}
	name := strings.TrimRight(args[0], "/")
	if name == "" && args[0] != "" {
		name = "/"
	} else {
		name = path.Base(name)
	}
	if len(args) > 1 && name != args[1] {
		name = strings.TrimSuffix(name, args[1])
	}
	fmt.Fprintln(c.stdout, name)
	return 0
}

func cmdDirname(c *command, args []string) int {
	if len(args) == 0 {
		c.errorf("missing operand")
		return 1
	}
	for _, a := range args {
		trimmed := strings.TrimRight(a, "/")
		if trimmed == "" && a != "" {
			fmt.Fprintln(c.stdout, "/")
			continue
		}
		fmt.Fprintln(c.stdout, path.Dir(trimmed))
	}
	return 0
}

func cmdBase64(c *command, args []string) int {
	opts, files, ok := c.options(args, "diw:", 0)
	if !ok {
		return 1
	}
	name := "-"
	if len(files) > 0 {
		name = files[0]
	}
	data, err := c.readInput(name)
	if err != nil {
		c.errorf("%s: %s", name, errText(err))
		return 1
	}
	if hasFlag(opts, 'd') {
		clean := strings.Join(strings.Fields(string(data)), "")
		out, err := base64.StdEncoding.DecodeString(clean)
		c.stdout.Write(out)
		if err != nil {
			c.errorf("invalid input")
			return 1
		}
		return 0
	}
	wrap, err := strconv.Atoi(flagValue(opts, 'w', "76"))
	if err != nil {
		c.errorf("invalid wrap size")
		return 1
	}
	enc := base64.StdEncoding.EncodeToString(data)
	for wrap > 0 && len(enc) > wrap {
		fmt.Fprintln(c.stdout, enc[:wrap])
		enc = enc[wrap:]
	}
	if enc != "" || len(data) == 0 {
		fmt.Fprintln(c.stdout, enc)
	}
	return 0
}

func cmdUname(c *command, args []string) int {
	opts, _, ok := c.options(args, "asnrvmpio", 0)
	if !ok {
		return 1
	}
	machine := map[string]string{"amd64": "x86_64", "arm64": "aarch64"}[runtime.GOARCH]
	if machine == "" {
		machine = runtime.GOARCH
	}
	fields := map[byte]string{'s': "Linux", 'n': c.proc.pod.cfg.Hostname, 'r': "6.8.0", 'v': "#1 SMP", 'm': machine, 'o': "GNU/Linux"}
	var out []string
	for _, f := range []byte("snrvmo") {
		if hasFlag(opts, 'a') && f != 'o' || hasFlag(opts, f) {
			out = append(out, fields[f])
		}
	}
	if hasFlag(opts, 'a') {
		out = append(out, "GNU/Linux")
	}
	if len(out) == 0 {
		out = []string{"Linux"}
	}
	fmt.Fprintln(c.stdout, strings.Join(out, " "))
	return 0
}

// cmdBusybox runs an applet: `busybox sh -c ...`, `busybox sleep 5`.
func cmdBusybox(c *command, args []string) int {
	if len(args) == 0 {
		fmt.Fprintln(c.stdout, "BusyBox v1.37.0 multi-call binary.")
		return 0
	}
	if _, ok := builtins[args[0]]; !ok || args[0] == "busybox" {
		fmt.Fprintf(c.stderr, "%s: applet not found\n", args[0])
		return 127
	}
	c.name = args[0]
	return c.proc.dispatch(c, args)
}
