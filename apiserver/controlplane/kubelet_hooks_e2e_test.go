package controlplane_test

import (
	"context"
	"fmt"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/intstr"
	"k8s.io/client-go/kubernetes"
	utilptr "k8s.io/utils/ptr"
)

// waitForEvent waits for an event about the pod with reason and message.
func waitForEvent(t *testing.T, cs kubernetes.Interface, pod, reason, message string) {
	t.Helper()
	waitFor(t, 15*time.Second, fmt.Sprintf("a %s event %q about %s", reason, message, pod), func(ctx context.Context) (bool, error) {
		events, err := cs.CoreV1().Events("default").List(ctx, metav1.ListOptions{FieldSelector: "involvedObject.name=" + pod + ",reason=" + reason})
		if err != nil {
			return false, err
		}
		for _, e := range events.Items {
			if e.Message == message {
				return true, nil
			}
		}
		return false, nil
	})
}

// countEvents is how many events about the pod have reason.
func countEvents(t *testing.T, cs kubernetes.Interface, pod, reason string) int {
	t.Helper()
	events, err := cs.CoreV1().Events("default").List(context.Background(), metav1.ListOptions{FieldSelector: "involvedObject.name=" + pod + ",reason=" + reason})
	if err != nil {
		t.Fatal(err)
	}
	return len(events.Items)
}

// httpGet and sleep lifecycle hooks, and hooks of containers the sandbox
// does not run (nginx...), as the kubelet runs them: a postStart hook
// holds the container ContainerCreating until it is over; an httpGet hook
// reaches the simulated server of a declared port and fails on another
// (FailedPostStartHook, the container killed and restarted); a preStop
// sleep delays the end of a deleted pod within its grace period; an exec
// hook of an nginx container runs a shell command in a sandbox of its own
// (exit 3 fails) and takes the image's own programs (nginx -s quit) to
// succeed.
func TestKubeletLifecycleHooksHTTPSleepAndSimulated(t *testing.T) {
	_, cs := startWorkloads(t, 1)
	ctx := context.Background()
	pods := cs.CoreV1().Pods("default")
	httpGet := func(port int) *corev1.LifecycleHandler {
		return &corev1.LifecycleHandler{HTTPGet: &corev1.HTTPGetAction{Path: "/hook", Port: intstr.FromInt32(int32(port))}}
	}
	sleep := func(seconds int64) *corev1.LifecycleHandler {
		return &corev1.LifecycleHandler{Sleep: &corev1.SleepAction{Seconds: seconds}}
	}
	exec := func(argv ...string) *corev1.LifecycleHandler {
		return &corev1.LifecycleHandler{Exec: &corev1.ExecAction{Command: argv}}
	}
	web := func(name string, lifecycle *corev1.Lifecycle, grace int64, image string, command ...string) *corev1.Pod {
		return boundPod(name, func(p *corev1.Pod) {
			p.Spec.TerminationGracePeriodSeconds = utilptr.To(grace)
			p.Spec.Containers[0] = corev1.Container{Name: "app", Image: image, Command: command, Lifecycle: lifecycle,
				Ports: []corev1.ContainerPort{{Name: "http", ContainerPort: 80}}}
		})
	}
	for _, p := range []*corev1.Pod{
		web("http-ok", &corev1.Lifecycle{PostStart: httpGet(80)}, 30, "nginx:1.27"),
		web("http-refused", &corev1.Lifecycle{PostStart: httpGet(8080)}, 1, "busybox", "sleep", "3600"),
		web("slow-start", &corev1.Lifecycle{PostStart: sleep(3)}, 30, "nginx:1.27"),
		web("exec-fails", &corev1.Lifecycle{PostStart: exec("sh", "-c", "exit 3")}, 1, "nginx:1.27"),
		web("image-program", &corev1.Lifecycle{PostStart: exec("/usr/sbin/nginx", "-s", "reload"), PreStop: exec("/usr/sbin/nginx", "-s", "quit")}, 30, "nginx:1.27"),
	} {
		if _, err := pods.Create(ctx, p, metav1.CreateOptions{}); err != nil {
			t.Fatal(err)
		}
	}

	// A sleeping postStart hook holds the container ContainerCreating,
	// the pod Pending, for its seconds.
	created := time.Now()
	time.Sleep(time.Second)
	if p, err := pods.Get(ctx, "slow-start", metav1.GetOptions{}); err != nil {
		t.Fatal(err)
	} else if st := p.Status.ContainerStatuses; p.Status.Phase != corev1.PodPending || len(st) != 1 || st[0].State.Waiting == nil ||
		st[0].State.Waiting.Reason != "ContainerCreating" || st[0].ContainerID != "" {
		t.Errorf("slow-start during its postStart sleep: %s %+v, want Pending, ContainerCreating", p.Status.Phase, st)
	}
	p := waitPod(t, cs, "default", "slow-start", "Running", func(p *corev1.Pod) bool { return p.Status.Phase == corev1.PodRunning })
	if d := time.Since(created); d < 2500*time.Millisecond {
		t.Errorf("slow-start ran %s after its creation, before its 3 s postStart sleep was over", d)
	}
	if st := p.Status.ContainerStatuses[0]; st.State.Running == nil || st.ContainerID == "" || !st.Ready {
		t.Errorf("slow-start after its hook: %+v", st)
	}

	for _, name := range []string{"http-ok", "image-program"} {
		p := waitPod(t, cs, "default", name, "Running and Ready", func(p *corev1.Pod) bool {
			return p.Status.Phase == corev1.PodRunning && podCondition(p, corev1.PodReady) == corev1.ConditionTrue
		})
		if n := countEvents(t, cs, name, "FailedPostStartHook"); n != 0 || p.Status.ContainerStatuses[0].RestartCount != 0 {
			t.Errorf("%s: %d FailedPostStartHook events, %d restarts; want none", name, n, p.Status.ContainerStatuses[0].RestartCount)
		}
	}
	// Refused hooks (no container declares 8080; a shell's exit 3) fail:
	// kube's events, the container killed (after its grace period: sleep
	// ignores SIGTERM) and restarted.
	for _, name := range []string{"http-refused", "exec-fails"} {
		waitForEvent(t, cs, name, "FailedPostStartHook", "PostStartHook failed")
		waitForEvent(t, cs, name, "Killing", "FailedPostStartHook")
		waitPod(t, cs, "default", name, "restarted after the failed hook", func(p *corev1.Pod) bool {
			st := p.Status.ContainerStatuses
			return len(st) == 1 && st[0].RestartCount >= 1 && st[0].LastTerminationState.Terminated != nil &&
				st[0].LastTerminationState.Terminated.ExitCode == 137
		})
	}

	// A preStop sleep delays the deletion, within the grace period.
	// (A sleep longer than the pod's terminationGracePeriodSeconds is
	// invalid; a delete may shorten the grace period.)
	for _, tc := range []struct {
		name        string
		sleep       int64
		grace       *int64 // the delete's
		least, most time.Duration
	}{
		{"stop-after-sleep", 2, nil, 2 * time.Second, 8 * time.Second},
		{"stop-at-grace", 20, utilptr.To[int64](2), 2 * time.Second, 8 * time.Second},
	} {
		p := web(tc.name, &corev1.Lifecycle{PreStop: sleep(tc.sleep)}, 30, "nginx:1.27")
		if _, err := pods.Create(ctx, p, metav1.CreateOptions{}); err != nil {
			t.Fatal(err)
		}
		waitPod(t, cs, "default", tc.name, "Running", func(p *corev1.Pod) bool { return p.Status.Phase == corev1.PodRunning })
		deleted := time.Now()
		if err := pods.Delete(ctx, tc.name, metav1.DeleteOptions{GracePeriodSeconds: tc.grace}); err != nil {
			t.Fatal(err)
		}
		waitFor(t, 20*time.Second, tc.name+" gone", func(ctx context.Context) (bool, error) {
			_, err := pods.Get(ctx, tc.name, metav1.GetOptions{})
			return apierrors.IsNotFound(err), nil
		})
		if d := time.Since(deleted); d < tc.least || d > tc.most {
			t.Errorf("%s (preStop sleep %ds) took %s to go, want %s..%s", tc.name, tc.sleep, d, tc.least, tc.most)
		}
		if n := countEvents(t, cs, tc.name, "FailedPreStopHook"); n != 0 {
			t.Errorf("%s: %d FailedPreStopHook events", tc.name, n)
		}
	}
	// The image's own program as a preStop hook succeeds; a preStop
	// httpGet to an undeclared port fails.
	refusedStop := web("refused-stop", &corev1.Lifecycle{PreStop: httpGet(9090)}, 30, "nginx:1.27")
	if _, err := pods.Create(ctx, refusedStop, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	waitPod(t, cs, "default", "refused-stop", "Running", func(p *corev1.Pod) bool { return p.Status.Phase == corev1.PodRunning })
	for _, name := range []string{"image-program", "refused-stop"} {
		if err := pods.Delete(ctx, name, metav1.DeleteOptions{}); err != nil {
			t.Fatal(err)
		}
	}
	waitForEvent(t, cs, "refused-stop", "FailedPreStopHook", "PreStopHook failed")
	waitFor(t, 20*time.Second, "image-program gone", func(ctx context.Context) (bool, error) {
		_, err := pods.Get(ctx, "image-program", metav1.GetOptions{})
		return apierrors.IsNotFound(err), nil
	})
	if n := countEvents(t, cs, "image-program", "FailedPreStopHook"); n != 0 {
		t.Errorf("image-program: %d FailedPreStopHook events for nginx -s quit", n)
	}
}
