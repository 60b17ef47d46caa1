package sandbox

import (
	"testing"
)

// TestBuiltins runs each builtin through `sh -c` in a fresh container
// filesystem and checks what it prints and returns.
func TestBuiltins(t *testing.T) {
	cases := []struct {
		name, script, stdin string
		code                int
		stdout, stderr      string
	}{
		{name: "true", script: "true", code: 0},
		{name: "false", script: "false", code: 1},
		{name: "exit", script: "exit 3", code: 3},
		{name: "exit from a path", script: "/bin/false", code: 1},
		{name: "expr arithmetic", script: "expr 7 % 2; expr 2 + 3 \\* 4; expr \\( 2 + 3 \\) \\* 4; expr 10 / 3 - 1", stdout: "1\n14\n20\n2\n"},
		{name: "expr in a test", script: "i=3; if [ $(expr ${i} % 2) -ne 0 ]; then echo odd; fi", stdout: "odd\n"},
		{name: "expr comparisons", script: "expr 10 \\> 9; expr abc = abc; expr b \\< a; expr length hello; expr 0 \\| 5 \\& 2", code: 0, stdout: "1\n1\n0\n5\n5\n"},
		{name: "expr zero is false", script: "expr 2 - 2", code: 1, stdout: "0\n"},
		{name: "expr errors", script: "expr 1 / 0; echo $?; expr a + 1", code: 2, stdout: "2\n", stderr: "expr: division by zero\nexpr: non-numeric argument\n"},
		{name: "echo", script: "echo a b; echo -n c; /bin/echo d", stdout: "a b\ncd\n"},
		{name: "printf", script: `printf '%s=%d\n' x 4`, stdout: "x=4\n"},
		{name: "test and [", script: `[ 1 -lt 2 ] && test -d /tmp && [ ! -f /nope ] && echo ok`, stdout: "ok\n"},
		{name: "root owns every file", script: `[ -O /etc/passwd ] && [[ -G /tmp ]] && eval '[[ -O /etc ]]' && echo ok`, stdout: "ok\n"},
		{name: "test on a file", script: `touch /tmp/f; [ -f /tmp/f ] && [ -e /tmp/f ] && [ ! -s /tmp/f ] && echo ok`, stdout: "ok\n"},
		{name: "cat files and stdin", script: "echo one > /tmp/a; cat /tmp/a - /tmp/a", stdin: "two\n", stdout: "one\ntwo\none\n"},
		{name: "cat a missing file", script: "cat /nope", code: 1, stderr: "cat: can't open '/nope': No such file or directory\n"},
		{name: "redirections that fail", script: "cat < /nope; echo x > /no/dir", code: 1,
			stderr: "sh: can't open '/nope': No such file or directory\nsh: can't create /no/dir: No such file or directory\n"},
		{name: "touch and ls", script: "mkdir /d; touch /d/b /d/a; ls /d", stdout: "a\nb\n"},
		{name: "ls -a", script: "mkdir /d; touch /d/.h /d/x; ls -a /d", stdout: ".\n..\n.h\nx\n"},
		{name: "ls -l", script: "mkdir /d; echo hi > /d/f; ls -l /d", stdout: "total 1\n-rw-r--r--    1 root     root             3 Nov 27 09:00 f\n"},
		{name: "ls a missing path", script: "ls /nope", code: 1, stderr: "ls: /nope: No such file or directory\n"},
		{name: "mkdir -p", script: "mkdir -p /a/b/c && [ -d /a/b/c ] && echo ok", stdout: "ok\n"},
		{name: "mkdir existing", script: "mkdir /tmp", code: 1, stderr: "mkdir: can't create directory '/tmp': File exists\n"},
		{name: "mkdir without parent", script: "mkdir /x/y", code: 1, stderr: "mkdir: can't create directory '/x/y': No such file or directory\n"},
		{name: "rm", script: "touch /tmp/f; rm /tmp/f; [ -e /tmp/f ] || echo gone", stdout: "gone\n"},
		{name: "rm -f missing", script: "rm -f /nope && echo ok", stdout: "ok\n"},
		{name: "rm missing", script: "rm /nope", code: 1, stderr: "rm: can't remove '/nope': No such file or directory\n"},
		{name: "rm a directory", script: "mkdir /d; rm /d", code: 1, stderr: "rm: '/d' is a directory\n"},
		{name: "rm -rf", script: "mkdir -p /d/e; touch /d/e/f; rm -rf /d; ls /d", code: 1, stderr: "ls: /d: No such file or directory\n"},
		{name: "env", script: "env", stdout: "HOME=/root\nHOSTNAME=web-0\nPATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin\n"},
		{name: "env only exports", script: "A=1; export B=2; env | grep -e A= -e B=", stdout: "B=2\n"},
		{name: "env runs a command", script: "env -i X=1 sh -c 'echo $X; env'", stdout: "1\nX=1\n"},
		{name: "hostname", script: "hostname; cat /etc/hostname; hostname -i", code: 1, stdout: "web-0\nweb-0\n", stderr: "hostname: web-0: Unknown host\n"},
		{name: "date", script: "date; date +%Y-%m-%dT%H:%M:%S; date -u +%s", stdout: "Fri Nov 27 09:00:00 UTC 2026\n2026-11-27T09:00:00\n1795770000\n"},
		{name: "wc", script: "printf 'a b\\nc\\n' > /f; wc -l /f; wc -c < /f; wc -l < /f", stdout: "      2 /f\n6\n2\n"},
		{name: "grep", script: "printf 'alpha\\nbeta\\ngamma\\n' > /f; grep a /f | head -n 1; grep -v ph /f; grep -c a /f; grep -q beta /f && echo yes", stdout: "alpha\nbeta\ngamma\n3\nyes\n"},
		{name: "grep regexps", script: `printf 'ab\nabab\nx+y\n' > /f; grep '^\(ab\)\{2\}$' /f; grep -E '^(ab)+$' /f | wc -l; grep -F 'x+y' /f; grep -i AB -n /f | head -n1`, stdout: "abab\n2\nx+y\n1:ab\n"},
		{name: "grep no match", script: "echo a | grep b", code: 1},
		{name: "head and tail", script: "seq 10 > /f; head -n 2 /f; tail -n 2 /f; head -3 /f | tail -1; tail -n +9 /f", stdout: "1\n2\n9\n10\n3\n9\n10\n"},
		{name: "cp and mv", script: "echo x > /a; cp /a /b; mv /b /c; cat /c; [ -e /b ] || echo moved; mkdir /d; cp /a /c /d; ls /d", stdout: "x\nmoved\na\nc\n"},
		{name: "cp -r", script: "mkdir -p /s/t; echo y > /s/t/f; cp -r /s /u; cat /u/t/f", stdout: "y\n"},
		{name: "tee", script: "echo hi | tee /a /b; cat /a /b; echo more | tee -a /a >/dev/null; cat /a", stdout: "hi\nhi\nhi\nhi\nmore\n"},
		{name: "seq", script: "seq 3; seq 2 4; seq 10 -5 1; seq -s , 3", stdout: "1\n2\n3\n2\n3\n4\n10\n5\n1,2,3\n"},
		{name: "id and whoami", script: "id; id -u; id -un; whoami", stdout: "uid=0(root) gid=0(root) groups=0(root),10(wheel)\n0\nroot\nroot\n"},
		{name: "pwd and cd", script: "pwd; cd /tmp && pwd; cd /nope", code: 1, stdout: "/\n/tmp\n", stderr: "cd: no such file or directory: \"/nope\"\n"},
		{name: "basename and dirname", script: "basename /a/b/c.txt .txt; basename /a/b/; dirname /a/b/c; dirname c", stdout: "c\nb\n/a/b\n.\n"},
		{name: "base64", script: "echo -n hello | base64; echo aGVsbG8= | base64 -d", stdout: "aGVsbG8=\nhello"},
		{name: "nested sh", script: `sh -c 'echo "$0 $1"; exit 4' name one; echo $?; bash -c 'echo bash'`, stdout: "name one\n4\nbash\n"},
		{name: "sh script file", script: "printf 'echo from file $1\\n' > /s.sh; sh /s.sh x", stdout: "from file x\n"},
		{name: "executable script", script: "printf '#!/bin/sh\\necho run\\n' > /s; chmod +x /s; /s; chmod 644 /s; /s", code: 126, stdout: "run\n", stderr: "sh: /s: Permission denied\n"},
		{name: "script with a foreign interpreter", script: "printf '#!/usr/bin/python3\\n' > /p; chmod 755 /p; /p", code: 127, stderr: "sh: /usr/bin/python3: not found\n"},
		{name: "busybox applets", script: "busybox echo hi; busybox sh -c 'echo nested'", stdout: "hi\nnested\n"},
		{name: "until and while", script: "i=0; until [ $i -ge 3 ]; do i=$((i+1)); done; while [ $i -gt 0 ]; do i=$((i-1)); echo $i; done", stdout: "2\n1\n0\n"},
		{name: "pipes and subshells", script: "echo $(echo a | cat) $( (echo b) )", stdout: "a b\n"},
		{name: "here-document", script: "cat <<EOF\nline $((1+1))\nEOF", stdout: "line 2\n"},
		{name: "redirect to stderr", script: "echo err >&2; echo err2 > /dev/stderr", stderr: "err\nerr2\n"},
		{name: "/dev/null", script: "echo x > /dev/null; cat /dev/null; echo ok", stdout: "ok\n"},
		{name: "type and command -v", script: "type echo; type sleep; command -v sleep; command -v nginx || echo none", stdout: "echo is a shell builtin\nsleep is /bin/sleep\n/bin/sleep\nnone\n"},
		{name: "which", script: "which sh sleep; which nginx; echo $?; printf 'echo mine\\n' > /usr/local/bin/tool; chmod +x /usr/local/bin/tool; which tool; tool", stdout: "/bin/sh\n/bin/sleep\n1\n/usr/local/bin/tool\nmine\n"},
		{name: "source", script: "echo 'X=sourced' > /lib.sh; . /lib.sh; echo $X", stdout: "sourced\n"},
		{name: "interpreter builtins by path", script: "/usr/bin/[ 1 -eq 1 ] && /bin/test x = y; echo $?; busybox false; echo $?; env true && echo t", stdout: "1\n1\nt\n"},
		{name: "a sourced exit", script: "echo 'exit 4' > /l.sh; . /l.sh; echo no", code: 4},
		{name: "process IDs", script: `echo "$$ $PPID ${$}"; sh -c 'echo $$ $PPID'; env -i sh -c 'echo "[$HOME]"'`, stdout: "7 0 7\n8 7\n[]\n"},
		{name: "devices", script: "head -c 5 /dev/zero | wc -c; head -c 12 /dev/urandom | base64 | wc -c; wc -w < /etc/group", stdout: "5\n17\n2\n"},
		{name: "endless input", script: "base64 /dev/zero", code: 1, stderr: "base64: /dev/zero: input too large\n"},
		{name: "uname", script: "uname; uname -n", stdout: "Linux\nweb-0\n"},
		{name: "printenv", script: "export A=1; printenv A; printenv NOPE", code: 1, stdout: "1\n"},
		{name: "not found", script: "nginx -g 'daemon off;'", code: 127, stderr: "sh: nginx: not found\n"},
		{name: "unknown path", script: "/usr/sbin/nginx", code: 127, stderr: "sh: /usr/sbin/nginx: not found\n"},
		{name: "set -e", script: "set -e; echo a; false; echo b", code: 1, stdout: "a\n"},
		{name: "sh -e", script: "sh -ec 'echo a; false; echo b'", code: 1, stdout: "a\n"},
		{name: "exit trap", script: "trap 'echo bye' EXIT; echo hi; exit 5", code: 5, stdout: "hi\nbye\n"},
		{name: "sleep zero", script: "sleep 0; echo ok", stdout: "ok\n"},
		{name: "sleep invalid", script: "sleep x", code: 1, stderr: "sleep: invalid number 'x'\n"},
		{name: "globbing", script: "mkdir /g; touch /g/a.txt /g/b.txt /g/c.log; echo /g/*.txt", stdout: "/g/a.txt /g/b.txt\n"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			pod, _ := newTestPod(t)
			code, stdout, stderr := execIn(t, pod, pod.NewFS(), tc.stdin, "sh", "-c", tc.script)
			if code != tc.code || stdout != tc.stdout || stderr != tc.stderr {
				t.Errorf("sh -c %q:\n got code %d, stdout %q, stderr %q\nwant code %d, stdout %q, stderr %q",
					tc.script, code, stdout, stderr, tc.code, tc.stdout, tc.stderr)
			}
		})
	}
}
