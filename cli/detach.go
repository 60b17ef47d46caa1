package cli

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"time"

	"github.com/urfave/cli/v2"
)

// detachedEnv is set in the background `devplane up` that --detach starts,
// so it can tell (e.g. to log once, not to both the log and stderr).
const detachedEnv = "DEVPLANE_DETACHED"

// withDetach adds --detach to `devplane up`: the same command re-executed
// in the background, with output to <data-dir>/devplane.log.
func withDetach(up *cli.Command) *cli.Command {
	var detach bool
	var timeout time.Duration
	up.Flags = append(up.Flags,
		&cli.BoolFlag{Name: "detach", Aliases: []string{"d"}, Category: catGeneric, Destination: &detach,
			Usage: "run in the background: wait until ready, print the kubeconfig path and exit (\"devplane down\" stops it)"},
		&cli.DurationFlag{Name: "detach-timeout", Value: 60 * time.Second, Category: catGeneric, Destination: &timeout,
			Usage: "with --detach: how long to wait for readiness before giving up"},
	)
	run := up.Action
	up.Action = func(c *cli.Context) error {
		if !detach {
			return run(c)
		}
		return runDetached(c, timeout)
	}
	return up
}

func runDetached(c *cli.Context, timeout time.Duration) error {
	dir, err := resolveDataDir(c.String("name"), c.String("data-dir"))
	if err != nil {
		return exitf(1, "error: %v", err)
	}
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return exitf(1, "error: --data-dir %s: %v", dir, unwrapPathError(err))
	}
	if st, running, _ := readState(dir); running {
		return exitf(1, "error: devplane %q is already running from %s (pid %d, %s): stop it with `devplane down` first", st.Name, dir, st.PID, st.URL)
	}
	exe, err := os.Executable()
	if err != nil {
		return exitf(1, "error: cannot find devplane's own executable: %v", err)
	}
	logPath := filepath.Join(dir, logFileName)
	logFile, err := os.OpenFile(logPath, os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o600)
	if err != nil {
		return exitf(1, "error: %v", err)
	}
	defer logFile.Close()
	// Only this run's lines are shown on failure.
	logStart, _ := logFile.Seek(0, 2)

	cmd := exec.Command(exe, withoutDetachFlags(os.Args[1:])...)
	cmd.Stdout, cmd.Stderr = logFile, logFile
	cmd.Env = append(os.Environ(), detachedEnv+"=1")
	cmd.SysProcAttr = detachAttrs()
	if err := cmd.Start(); err != nil {
		return exitf(1, "error: starting devplane in the background: %v", err)
	}
	exited := make(chan error, 1)
	go func() { exited <- cmd.Wait() }()

	ctx, cancel := context.WithTimeout(c.Context, timeout)
	defer cancel()
	tick := time.NewTicker(25 * time.Millisecond)
	defer tick.Stop()
	for {
		if st, running, _ := readState(dir); running && st.PID == cmd.Process.Pid {
			if report, err := probe(ctx, dir, st); err == nil && report.Ready {
				fmt.Fprintln(c.App.Writer, st.Kubeconfig)
				return nil
			}
		}
		select {
		case err := <-exited:
			return exitf(1, "error: devplane exited before it was ready (%v); last lines of %s:\n%s", err, logPath, lastLines(logPath, logStart, 20))
		case <-ctx.Done():
			_ = requestStop(dir, cmd.Process)
			return exitf(1, "error: devplane was not ready within %s (stopped it); last lines of %s:\n%s", timeout, logPath, lastLines(logPath, logStart, 20))
		case <-tick.C:
		}
	}
}

// withoutDetachFlags drops --detach (and -d, --detach=..., and
// --detach-timeout with its value) from up's arguments.
func withoutDetachFlags(args []string) []string {
	var out []string
	for i := 0; i < len(args); i++ {
		a := args[i]
		name, _, hasValue := strings.Cut(strings.TrimLeft(a, "-"), "=")
		if !strings.HasPrefix(a, "-") || a == "--" {
			out = append(out, a)
			continue
		}
		switch name {
		case "detach", "d":
			continue
		case "detach-timeout":
			if !hasValue {
				i++ // the value is the next argument
			}
			continue
		}
		out = append(out, a)
	}
	return out
}

// lastLines is the end of the log written since offset.
func lastLines(path string, offset int64, n int) string {
	data, err := os.ReadFile(path)
	if err != nil {
		return fmt.Sprintf("(cannot read the log: %v)", err)
	}
	if offset > 0 && offset <= int64(len(data)) {
		data = data[offset:]
	}
	lines := bytes.Split(bytes.TrimRight(data, "\n"), []byte("\n"))
	if len(lines) > n {
		lines = lines[len(lines)-n:]
	}
	return "  " + string(bytes.Join(lines, []byte("\n  ")))
}

func downCommand() *cli.Command {
	var inst instanceFlags
	var timeout time.Duration
	return &cli.Command{
		Name:  "down",
		Usage: "stop a running instance (SIGTERM, then wait for it to exit); nothing running is not an error",
		Flags: inst.flags(
			&cli.DurationFlag{Name: "timeout", Value: 30 * time.Second, Destination: &timeout, Usage: "how long to wait for it to exit"},
		),
		Action: func(c *cli.Context) error {
			dir, err := inst.dir()
			if err != nil {
				return err
			}
			st, running, err := readState(dir)
			if err != nil {
				return exitf(1, "error: %v", err)
			}
			if !running || !alive(st.PID) {
				fmt.Fprintf(c.App.Writer, "devplane %q is not running (data dir %s)\n", inst.name, dir)
				return nil
			}
			p, err := os.FindProcess(st.PID)
			if err != nil {
				return exitf(1, "error: %v", err)
			}
			if err := requestStop(dir, p); err != nil && !errors.Is(err, os.ErrProcessDone) {
				return exitf(1, "error: stopping pid %d: %v", st.PID, err)
			}
			deadline := time.Now().Add(timeout)
			for alive(st.PID) {
				if time.Now().After(deadline) {
					return exitf(1, "error: devplane %q (pid %d) did not exit within %s; see %s", inst.name, st.PID, timeout, filepath.Join(dir, logFileName))
				}
				time.Sleep(20 * time.Millisecond)
			}
			fmt.Fprintf(c.App.Writer, "devplane %q stopped\n", st.Name)
			return nil
		},
	}
}

// alive is processAlive, except that an exited process nobody has reaped
// yet (a zombie) counts as gone.
func alive(pid int) bool {
	if !processAlive(pid) {
		return false
	}
	stat, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return !errors.Is(err, os.ErrNotExist) // no /proc: trust the signal
	}
	// The state follows the command name in parentheses: "pid (comm) S ...".
	if i := bytes.LastIndexByte(stat, ')'); i >= 0 && i+2 < len(stat) {
		return stat[i+2] != 'Z'
	}
	return true
}

func waitCommand() *cli.Command {
	var inst instanceFlags
	var timeout time.Duration
	return &cli.Command{
		Name:  "wait",
		Usage: "wait until an instance is ready (it may still be starting); exit 1 on timeout",
		Flags: inst.flags(
			&cli.DurationFlag{Name: "timeout", Value: 30 * time.Second, Destination: &timeout, Usage: "how long to wait"},
		),
		Action: func(c *cli.Context) error {
			dir, err := inst.dir()
			if err != nil {
				return err
			}
			ctx, cancel := context.WithTimeout(c.Context, timeout)
			defer cancel()
			tick := time.NewTicker(50 * time.Millisecond)
			defer tick.Stop()
			why := "it is not running"
			for {
				if st, running, err := readState(dir); err != nil {
					why = err.Error()
				} else if running {
					report, err := probe(ctx, dir, st)
					switch {
					case err != nil:
						why = fmt.Sprintf("it does not answer at %s: %v", st.URL, err)
					case report.Ready:
						fmt.Fprintf(c.App.Writer, "devplane %q is ready at %s\n", inst.name, st.URL)
						return nil
					default:
						why = "readyz is failing (see `devplane status`)"
					}
				}
				select {
				case <-ctx.Done():
					return exitf(1, "error: devplane %q not ready after %s: %s", inst.name, timeout, why)
				case <-tick.C:
				}
			}
		},
	}
}
