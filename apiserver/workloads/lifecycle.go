package workloads

// Lifecycle hooks, as the kubelet runs them, for every container: exec
// (in an interpreted container's sandbox; for another container, in a
// sandbox of its own when the sandbox interprets the command, else taken
// to be one of the image's programs, which succeed), httpGet (against
// the simulated servers on the ports pods declare, as probes) and sleep.
//
// postStart: the container's status waits (ContainerCreating) until its
// hook is over, as the kubelet's sync waits for it; a failure is told
// (FailedPostStartHook) and the container killed as the kubelet kills it
// (Killing, its preStop hook, SIGTERM, SIGKILL after the grace period),
// then restarted as its pod's restartPolicy says. preStop: a deleted
// pod's running containers run theirs, within the grace period, before
// SIGTERM (FailedPreStopHook on failure).

import (
	"bytes"
	"context"
	"fmt"
	"strings"
	"syscall"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"

	"github.com/devplane/devplane/apiserver/workloads/sandbox"
)

// runHook runs a lifecycle hook of container c (run: its sandbox run, nil
// for a container the sandbox does not run): "" when it succeeded, else
// the kubelet's message (which it logs, not in the event).
func (k *kubelet) runHook(ctx context.Context, pod *corev1.Pod, c *corev1.Container, run *sandbox.Container, hook *corev1.LifecycleHandler) string {
	podName := pod.Name + "_" + pod.Namespace + "(" + string(pod.UID) + ")"
	switch {
	case hook.Exec != nil:
		var out bytes.Buffer
		code, err := k.execHook(ctx, pod, c, run, hook.Exec.Command, &out)
		if err == nil && code == 0 {
			return ""
		}
		if err == nil {
			err = fmt.Errorf("command '%s' exited with %d: %s", strings.Join(hook.Exec.Command, " "), code, out.String())
		}
		return fmt.Sprintf("Exec lifecycle hook (%v) for Container %q in Pod %q failed - error: %v, message: %q",
			hook.Exec.Command, c.Name, podName, err, out.String())
	case hook.HTTPGet != nil:
		if failure := k.httpHook(pod, c, hook.HTTPGet); failure != "" {
			return fmt.Sprintf("HTTP lifecycle hook (%s) for Container %q in Pod %q failed - error: %s", hook.HTTPGet.Path, c.Name, podName, failure)
		}
		return ""
	case hook.Sleep != nil:
		t := time.NewTimer(time.Duration(hook.Sleep.Seconds) * time.Second)
		defer t.Stop()
		select {
		case <-t.C:
			return ""
		case <-ctx.Done():
			return fmt.Sprintf("Sleep lifecycle hook (%d) for Container %q in Pod %q failed - error: container terminated before sleep hook finished",
				hook.Sleep.Seconds, c.Name, podName)
		}
	}
	return fmt.Sprintf("Cannot run handler: invalid handler: %v", hook)
}

// execHook runs an exec hook's command: in the container's sandbox run,
// or, for a container the sandbox does not run, in a sandbox of its own
// with the container's environment when the command is one the sandbox
// interprets (sh -c '…'); another command is one of the image's own
// programs (nginx -s quit), taken to succeed.
func (k *kubelet) execHook(ctx context.Context, pod *corev1.Pod, c *corev1.Container, run *sandbox.Container, argv []string, out *bytes.Buffer) (int, error) {
	if run != nil {
		return run.Exec(ctx, argv, nil, out, out, false)
	}
	if !sandbox.Interpretable(argv) {
		return 0, nil
	}
	env, err := k.containerEnv(ctx, k.ours(pod), pod, c)
	if err != nil {
		return 0, err
	}
	world := sandbox.NewPod(sandbox.PodConfig{Hostname: pod.Name})
	return world.Exec(ctx, sandbox.ExecConfig{Argv: argv, Env: env, WorkingDir: c.WorkingDir, Stdout: out, Stderr: out})
}

// httpHook is an httpGet hook's outcome ("" when it succeeded) against
// the simulated servers: those of the pod whose address it names (its
// own when it names none); an address that is no pod's is taken to
// answer.
func (k *kubelet) httpHook(pod *corev1.Pod, c *corev1.Container, get *corev1.HTTPGetAction) string {
	target := pod
	if get.Host != "" && get.Host != pod.Status.PodIP {
		if target = k.podWithIP(get.Host); target == nil {
			return ""
		}
	}
	if ok, failure := networkProbe(target, c, &corev1.Probe{ProbeHandler: corev1.ProbeHandler{HTTPGet: get}}); !ok {
		return failure
	}
	return ""
}

// podWithIP is the running pod that has ip, if any.
func (k *kubelet) podWithIP(ip string) *corev1.Pod {
	for _, obj := range k.pods.GetStore().List() {
		if p, ok := obj.(*corev1.Pod); ok && p.Status.PodIP == ip && !p.Spec.HostNetwork && !isTerminal(p) {
			return p
		}
	}
	return nil
}

// hookRun is a container run's postStart hook, while and after it runs.
type hookRun struct {
	done        chan struct{}
	startedAt   time.Time
	containerID string
}

// postStart runs the container's postStart hook, if any, for the run
// that start just began (cs running): in the background, its status held
// waiting meanwhile (postStartHolds); a failure kills the run.
func (k *kubelet) postStart(pod *corev1.Pod, cs *corev1.ContainerStatus, path string) {
	c := containerSpec(pod, path)
	if c == nil || c.Lifecycle == nil || c.Lifecycle.PostStart == nil {
		return
	}
	key := startKey(pod, cs)
	h := &hookRun{done: make(chan struct{}), startedAt: cs.State.Running.StartedAt.Time, containerID: cs.ContainerID}
	k.mu.Lock()
	if k.postStarts == nil {
		k.postStarts = map[string]*hookRun{}
	}
	k.postStarts[key] = h
	k.mu.Unlock()
	var run *sandbox.Container
	if p := k.runtimes.get(pod.UID); p != nil {
		run = p.run(path, cs.RestartCount)
	}
	node := k.ours(pod)
	go func() {
		defer k.queue.Add(pod.Namespace + "/" + pod.Name)
		defer close(h.done)
		ctx, cancel := context.WithCancel(context.Background())
		defer cancel()
		if run != nil {
			go func() { // the hook ends with its container
				select {
				case <-run.Done():
					cancel()
				case <-ctx.Done():
				}
			}()
		}
		msg := k.runHook(ctx, pod, c, run, c.Lifecycle.PostStart)
		if msg == "" {
			return
		}
		k.m.logger.Debug("simulated kubelet: postStart hook failed", "pod", pod.Namespace+"/"+pod.Name, "message", msg)
		// As kube's: the event does not carry the message (it may hold secrets).
		node.emit(pod, []podEvent{
			{warning: true, path: path, reason: "FailedPostStartHook", message: "PostStartHook failed"},
			{path: path, reason: "Killing", message: "FailedPostStartHook"}})
		grace := 30 * time.Second
		if g := pod.Spec.TerminationGracePeriodSeconds; g != nil {
			grace = time.Duration(*g) * time.Second
		}
		if run == nil {
			k.markKilled(key, time.Now())
			return
		}
		deadline := time.Now().Add(grace)
		if hook := k.preStop(pod, c, run, path, grace); hook != nil {
			<-hook
		}
		time.AfterFunc(time.Until(deadline), run.Kill)
	}()
}

// postStartHolds reports whether the container's postStart hook still
// runs: its status then waits (ContainerCreating), without the run's
// container ID, as the status a kubelet blocked in the hook last wrote;
// once the hook is over, the status is the run's again.
func (k *kubelet) postStartHolds(pod *corev1.Pod, c *corev1.Container, cs *corev1.ContainerStatus, path string, events *[]podEvent) bool {
	if c.Lifecycle == nil || c.Lifecycle.PostStart == nil {
		return false
	}
	if cs.State.Running == nil && (cs.State.Waiting == nil || cs.State.Waiting.Reason != "ContainerCreating") {
		return false // ended, or waiting to restart
	}
	k.mu.Lock()
	h := k.postStarts[startKey(pod, cs)]
	k.mu.Unlock()
	if h == nil {
		return false
	}
	select {
	case <-h.done:
		if cs.State.Waiting != nil && cs.State.Waiting.Reason == "ContainerCreating" {
			cs.State = corev1.ContainerState{Running: &corev1.ContainerStateRunning{StartedAt: metav1.NewTime(h.startedAt)}}
			cs.ContainerID = h.containerID
		}
		return false
	default:
	}
	cs.State = corev1.ContainerState{Waiting: &corev1.ContainerStateWaiting{Reason: "ContainerCreating"}}
	cs.ContainerID = ""
	cs.Started = new(bool)
	cs.Ready = false
	// The run's Created and Started events are told now: the status
	// they would go with does not change.
	for i := range *events {
		if (*events)[i].path == path {
			(*events)[i].anew = true
		}
	}
	return true
}

// markKilled records that a container run the sandbox does not run was
// killed at: it ends then (137).
func (k *kubelet) markKilled(key string, at time.Time) {
	k.mu.Lock()
	defer k.mu.Unlock()
	if k.killed == nil {
		k.killed = map[string]time.Time{}
	}
	if _, done := k.killed[key]; !done {
		k.killed[key] = at
	}
}

// preStop runs the container's preStop hook, if any, and then sends an
// interpreted run SIGTERM. The channel (nil: no hook) is closed once the
// hook is over or the grace period has passed (the kubelet stops waiting
// for it then; a sleep hook cut short there is no failure, as the
// kubelet's goes on unwatched).
func (k *kubelet) preStop(pod *corev1.Pod, c *corev1.Container, run *sandbox.Container, path string, grace time.Duration) <-chan struct{} {
	if c == nil || c.Lifecycle == nil || c.Lifecycle.PreStop == nil || grace <= 0 {
		if run != nil {
			run.Signal(syscall.SIGTERM)
		}
		return nil
	}
	done := make(chan struct{})
	hook := c.Lifecycle.PreStop
	node := k.ours(pod)
	go func() {
		ctx, cancel := context.WithTimeout(context.Background(), grace)
		defer cancel()
		msg := k.runHook(ctx, pod, c, run, hook)
		if msg != "" && (hook.Sleep == nil || ctx.Err() == nil) {
			k.m.logger.Debug("simulated kubelet: preStop hook failed", "pod", pod.Namespace+"/"+pod.Name, "message", msg)
			node.emit(pod, []podEvent{{warning: true, path: path, reason: "FailedPreStopHook", message: "PreStopHook failed"}})
		}
		if run != nil {
			run.Signal(syscall.SIGTERM)
		}
		close(done)
	}()
	return done
}

// stopping is a deleted pod's preStop hooks: done once all are over, at
// the time they ended.
type stopping struct {
	done chan struct{}
	at   time.Time
}

// stop ends a deleted pod's running containers as the kubelet does: each
// runs its preStop hook (within the grace period), then an interpreted
// one gets SIGTERM; a pod with hooks is looked at again once every hook
// is over.
func (k *kubelet) stop(pod *corev1.Pod, p *podRuntime, grace time.Duration) {
	var hooks []<-chan struct{}
	signalled := map[*sandbox.Container]bool{}
	for _, list := range [][]corev1.ContainerStatus{pod.Status.InitContainerStatuses, pod.Status.ContainerStatuses, pod.Status.EphemeralContainerStatuses} {
		for _, cs := range list {
			if cs.State.Running == nil {
				continue
			}
			path := fieldPathOf(pod, cs.Name)
			var run *sandbox.Container
			if p != nil {
				run = p.run(path, cs.RestartCount)
			}
			if hook := k.preStop(pod, containerSpec(pod, path), run, path, grace); hook != nil {
				hooks = append(hooks, hook)
			}
			signalled[run] = true
		}
	}
	if p != nil { // runs started since the status was read
		for _, run := range p.current() {
			if !signalled[run] {
				run.Signal(syscall.SIGTERM)
			}
		}
	}
	if len(hooks) == 0 {
		return
	}
	s := &stopping{done: make(chan struct{})}
	k.mu.Lock()
	if k.stopping == nil {
		k.stopping = map[types.UID]*stopping{}
	}
	k.stopping[pod.UID] = s
	k.mu.Unlock()
	go func() {
		for _, h := range hooks {
			<-h
		}
		k.mu.Lock()
		s.at = time.Now()
		k.mu.Unlock()
		close(s.done)
		k.queue.Add(pod.Namespace + "/" + pod.Name)
	}()
}

// stopped reports whether a deleted pod's preStop hooks are over, and
// when they ended.
func (k *kubelet) stopped(uid types.UID) (bool, time.Time) {
	k.mu.Lock()
	s := k.stopping[uid]
	k.mu.Unlock()
	if s == nil {
		return true, time.Time{}
	}
	select {
	case <-s.done:
		k.mu.Lock()
		defer k.mu.Unlock()
		return true, s.at
	default:
		return false, time.Time{}
	}
}
