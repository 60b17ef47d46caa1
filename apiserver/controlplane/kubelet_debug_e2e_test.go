package controlplane_test

import (
	"bytes"
	"context"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes/scheme"
	"k8s.io/client-go/tools/remotecommand"
	utilptr "k8s.io/utils/ptr"
)

// ephemeralStatus is the named ephemeral container's status, if any.
func ephemeralStatus(p *corev1.Pod, name string) (corev1.ContainerStatus, bool) {
	for _, s := range p.Status.EphemeralContainerStatuses {
		if s.Name == name {
			return s, true
		}
	}
	return corev1.ContainerStatus{}, false
}

// kubectl debug's ephemeral containers run in the pod's sandbox: one with
// a command runs it (its exit code in its status, its output in kubectl
// logs -c), one with an open stdin (kubectl debug -it) keeps its shell
// running, kubectl exec reaches it and attach sessions type into it; the
// pod's own containers and readiness are untouched.
func TestKubeletEphemeralContainers(t *testing.T) {
	s, cs := startWorkloads(t, 1)
	ctx := context.Background()
	pods := cs.CoreV1().Pods("default")
	target := boundPod("target", func(p *corev1.Pod) {
		p.Spec.Containers[0] = corev1.Container{Name: "app", Image: "busybox", Command: []string{"sleep", "3600"}}
		p.Spec.Volumes = []corev1.Volume{{Name: "scratch", VolumeSource: corev1.VolumeSource{EmptyDir: &corev1.EmptyDirVolumeSource{}}}}
	})
	if _, err := pods.Create(ctx, target, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	waitPod(t, cs, "default", "target", "Running", func(p *corev1.Pod) bool { return p.Status.Phase == corev1.PodRunning })

	// kubectl debug without -i: the container runs its command and ends.
	s.mustKubectl(t, "debug", "target", "--image=busybox", "--container=once", "--profile=general", "--",
		"sh", "-c", "echo hi from $HOSTNAME; echo oops >&2; exit 5")
	p := waitPod(t, cs, "default", "target", "the ephemeral container ended", func(p *corev1.Pod) bool {
		e, ok := ephemeralStatus(p, "once")
		return ok && e.State.Terminated != nil
	})
	e, _ := ephemeralStatus(p, "once")
	if term := e.State.Terminated; term.ExitCode != 5 || term.Reason != "Error" || e.Ready || utilptr.Deref(e.Started, true) || e.RestartCount != 0 {
		t.Errorf("ephemeral container once: %+v, want terminated with 5, not started or ready", e)
	}
	if p.Status.Phase != corev1.PodRunning || podCondition(p, corev1.PodReady) != corev1.ConditionTrue || p.Status.ContainerStatuses[0].RestartCount != 0 {
		t.Errorf("pod %s Ready=%s after its ephemeral container failed; containers %+v", p.Status.Phase, podCondition(p, corev1.PodReady), p.Status.ContainerStatuses)
	}
	if out := s.mustKubectl(t, "logs", "target", "-c", "once"); out != "hi from target\noops\n" {
		t.Errorf("kubectl logs -c once = %q", out)
	}
	if r := s.kubectl(t, nil, "", "exec", "target", "-c", "once", "--", "true"); r.Code == 0 || !strings.Contains(r.Stderr, "container not found") {
		t.Errorf("exec into an ended ephemeral container: exit %d, %s", r.Code, r.Stderr)
	}

	// kubectl debug -it's container (stdin and tty open, as kubectl makes
	// it; through client-go here): its shell waits for input, so it runs,
	// with the pod's volumes when it mounts them, and kubectl exec reaches
	// it over websockets and SPDY.
	p.Spec.EphemeralContainers = append(p.Spec.EphemeralContainers, corev1.EphemeralContainer{
		EphemeralContainerCommon: corev1.EphemeralContainerCommon{Name: "shell", Image: "busybox", Stdin: true, TTY: true,
			VolumeMounts: []corev1.VolumeMount{{Name: "scratch", MountPath: "/scratch"}}},
		TargetContainerName: "app"})
	if _, err := pods.UpdateEphemeralContainers(ctx, "target", p, metav1.UpdateOptions{}); err != nil {
		t.Fatal(err)
	}
	p = waitPod(t, cs, "default", "target", "the debug shell running", func(p *corev1.Pod) bool {
		e, ok := ephemeralStatus(p, "shell")
		return ok && e.State.Running != nil
	})
	if e, _ := ephemeralStatus(p, "shell"); !utilptr.Deref(e.Started, false) || e.Ready {
		t.Errorf("debug shell status %+v: want started, not ready", e)
	}
	for _, env := range [][]string{nil, {"KUBECTL_REMOTE_COMMAND_WEBSOCKETS=false"}} {
		r := s.kubectl(t, env, "", "exec", "target", "-c", "shell", "--", "sh", "-c", "echo mark > /scratch/m; cat /scratch/m; hostname")
		if r.Code != 0 || r.Stdout != "mark\ntarget\n" {
			t.Errorf("%v exec into the debug shell: exit %d, %q, %s", env, r.Code, r.Stdout, r.Stderr)
		}
	}
	// Its log is served (the prompt waits in a partial line).
	s.mustKubectl(t, "logs", "target", "-c", "shell")

	// Attached with a terminal (kubectl debug -it / kubectl attach -it;
	// through client-go, as kubectl needs a real terminal for -t), a
	// session types into the shell and sees its echo, output and prompt;
	// without stdinOnce the shell outlives the session, and a second one
	// ends it.
	attach := func(websocket bool, input string) (string, error) {
		cfg := s.restConfig(false)
		url := cs.CoreV1().RESTClient().Post().Resource("pods").Namespace("default").Name("target").SubResource("attach").
			VersionedParams(&corev1.PodAttachOptions{Container: "shell", Stdin: true, Stdout: true, TTY: true}, scheme.ParameterCodec).URL()
		exec, err := remotecommand.NewSPDYExecutor(cfg, "POST", url)
		if websocket {
			exec, err = remotecommand.NewWebSocketExecutor(cfg, "GET", url.String())
		}
		if err != nil {
			return "", err
		}
		var out syncBuffer
		streamCtx, cancel := context.WithTimeout(ctx, 3*time.Second)
		defer cancel()
		err = exec.StreamWithContext(streamCtx, remotecommand.StreamOptions{Stdin: strings.NewReader(input), Stdout: &out, Tty: true})
		return out.String(), err
	}
	// The first session's stdin ends; the session lasts until its client
	// goes (here, its context's end).
	if out, _ := attach(true, "echo hi\n"); out != "echo hi\r\nhi\r\n/ # " {
		t.Errorf("attach -it over websockets: %q, want the echo, hi and the prompt", out)
	}
	if _, err := pods.Get(ctx, "target", metav1.GetOptions{}); err != nil {
		t.Fatal(err)
	}
	if out, err := attach(false, "echo bye\nexit 4\n"); err != nil || !strings.Contains(out, "bye\r\n") {
		t.Errorf("attach -it over SPDY: %v, %q", err, out)
	}
	p = waitPod(t, cs, "default", "target", "the debug shell ended", func(p *corev1.Pod) bool {
		e, ok := ephemeralStatus(p, "shell")
		return ok && e.State.Terminated != nil
	})
	if e, _ := ephemeralStatus(p, "shell"); e.State.Terminated.ExitCode != 4 {
		t.Errorf("debug shell ended %+v, want exit 4", e.State.Terminated)
	}

	// kubectl debug -i: kubectl attaches to the new container's stdin, over
	// websockets and SPDY.
	for i, env := range [][]string{nil, {"KUBECTL_REMOTE_COMMAND_WEBSOCKETS=false"}} {
		name := fmt.Sprintf("interactive%d", i)
		r := s.kubectl(t, env, "echo typed in $HOSTNAME\nexit 3\n", "debug", "target", "-i", "--image=busybox", "--container="+name, "--profile=general")
		if r.Code != 0 || !strings.Contains(r.Stdout, "typed in target\n") {
			t.Errorf("%v kubectl debug -i: exit %d, %q, %s", env, r.Code, r.Stdout, r.Stderr)
		}
		waitPod(t, cs, "default", "target", name+" ended with 3", func(p *corev1.Pod) bool {
			e, ok := ephemeralStatus(p, name)
			return ok && e.State.Terminated != nil && e.State.Terminated.ExitCode == 3
		})
	}

	// kubectl run -i --rm: the pod's stdin is open once (stdinOnce), kubectl
	// attaches, and the container's exit code is kubectl's.
	r := s.kubectl(t, nil, "echo from the runner\nexit 2\n", "run", "runner", "-i", "--rm", "--restart=Never", "--image=busybox", "--", "sh")
	if r.Code != 2 || !strings.Contains(r.Stdout, "from the runner\n") {
		t.Errorf("kubectl run -i --rm: exit %d, %q, %s", r.Code, r.Stdout, r.Stderr)
	}

	// The debug shell stops with the pod.
	if err := pods.Delete(ctx, "target", metav1.DeleteOptions{GracePeriodSeconds: utilptr.To[int64](1)}); err != nil {
		t.Fatal(err)
	}
	waitFor(t, 30*time.Second, "the pod gone", func(ctx context.Context) (bool, error) {
		_, err := pods.Get(ctx, "target", metav1.GetOptions{})
		if apierrors.IsNotFound(err) {
			return true, nil
		}
		return false, err
	})
}

// syncBuffer is a bytes.Buffer that a stream's goroutines may still write
// while the test reads it.
type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (b *syncBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.b.Write(p)
}

func (b *syncBuffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.b.String()
}
