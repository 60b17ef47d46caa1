// Package sandbox runs the commands of simulated containers in a shell
// interpreter (mvdan.cc/sh) inside devplane, in a world of their own: a
// virtual filesystem per container with the pod's volumes mounted, a clock
// the caller controls, and builtins for the usual programs (sleep, cat,
// grep, ...). Nothing a script does reaches the host: every command, file
// and directory access goes to our handlers; host programs, files and
// sockets are out of reach.
//
// The kubelet uses it like this:
//
//	pod := sandbox.NewPod(sandbox.PodConfig{Hostname: "web-0", Hosts: hosts, Clock: clk})
//	fsys := pod.NewFS(
//		sandbox.Mount{Path: "/cache", Tree: pod.EmptyDir("cache")},
//		sandbox.Mount{Path: "/etc/config", Tree: sandbox.ReadOnlyFiles(items), ReadOnly: true},
//	)
//	env, err := sandbox.Environment(container, sources)
//	command, args := sandbox.ExpandCommand(container, env)
//	argv := sandbox.Argv(imageEntrypoint, imageCmd, command, args)
//	c, err := pod.Start(sandbox.ContainerConfig{Argv: argv, Env: env, FS: fsys, OnExit: report})
//	if errors.Is(err, sandbox.ErrNotInterpretable) {
//		// nginx, pause...: the kubelet's own rules
//	}
//	...
//	c.Signal(syscall.SIGTERM) // deletion; c.Kill() after the grace period
//	logs := sandbox.Format(c.Log().Lines(), sandbox.LogOptions{TailLines: -1})
//	code, err := c.Exec(ctx, []string{"sh"}, stdin, stdout, stderr, true)
//
// A container whose program is sleeping at its top level (sleep 3600,
// sleep infinity, tail -f /dev/null, a while/until loop around a sleep)
// holds a timer and no goroutine.
package sandbox
