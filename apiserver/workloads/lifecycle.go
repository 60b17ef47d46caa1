package workloads

// Lifecycle hooks of interpreted containers, as the kubelet runs them: an
// exec postStart hook runs in the container's sandbox once it started (a
// failure kills the container), an exec preStop hook before the
// container gets SIGTERM on deletion, within the grace period. Other
// hooks (httpGet, sleep) and other containers' hooks are not run.

import (
	"bytes"
	"context"
	"fmt"
	"strings"
	"syscall"
	"time"

	corev1 "k8s.io/api/core/v1"

	"github.com/devplane/devplane/apiserver/workloads/sandbox"
)

// runHook runs an exec hook in the container's sandbox: "" when it
// succeeded, else the kubelet's message.
func runHook(ctx context.Context, pod *corev1.Pod, c *corev1.Container, run *sandbox.Container, hook *corev1.LifecycleHandler) string {
	var out bytes.Buffer
	code, err := run.Exec(ctx, hook.Exec.Command, nil, &out, &out, false)
	if err == nil && code == 0 {
		return ""
	}
	if err == nil {
		err = fmt.Errorf("command '%s' exited with %d: %s", strings.Join(hook.Exec.Command, " "), code, out.String())
	}
	return fmt.Sprintf("Exec lifecycle hook (%v) for Container %q in Pod %q failed - error: %v, message: %q",
		hook.Exec.Command, c.Name, pod.Name+"_"+pod.Namespace+"("+string(pod.UID)+")", err, out.String())
}

// postStart runs the container's exec postStart hook, if any, in the
// background; a failure kills the run, as the kubelet does.
func (k *kubelet) postStart(pod *corev1.Pod, c *corev1.Container, path string, run *sandbox.Container) {
	if c.Lifecycle == nil || c.Lifecycle.PostStart == nil || c.Lifecycle.PostStart.Exec == nil {
		return
	}
	node := k.ours(pod)
	go func() {
		ctx, cancel := context.WithCancel(context.Background())
		defer cancel()
		go func() { // the hook ends with its container
			select {
			case <-run.Done():
				cancel()
			case <-ctx.Done():
			}
		}()
		if msg := runHook(ctx, pod, c, run, c.Lifecycle.PostStart); msg != "" {
			node.emit(pod, []podEvent{{warning: true, path: path, reason: "FailedPostStartHook", message: msg}})
			run.Kill()
		}
	}()
}

// stop ends a deleted pod's interpreted containers: each runs its exec
// preStop hook (bounded by the grace period) and then gets SIGTERM.
func (k *kubelet) stop(pod *corev1.Pod, p *podRuntime, grace time.Duration) {
	node := k.ours(pod)
	for path, run := range p.current() {
		c := containerSpec(pod, path)
		if c == nil || c.Lifecycle == nil || c.Lifecycle.PreStop == nil || c.Lifecycle.PreStop.Exec == nil {
			run.Signal(syscall.SIGTERM)
			continue
		}
		go func() {
			ctx, cancel := context.WithTimeout(context.Background(), grace)
			defer cancel()
			if msg := runHook(ctx, pod, c, run, c.Lifecycle.PreStop); msg != "" {
				node.emit(pod, []podEvent{{warning: true, path: path, reason: "FailedPreStopHook", message: msg}})
			}
			run.Signal(syscall.SIGTERM)
		}()
	}
}
