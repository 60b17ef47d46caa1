package controlplane_test

import (
	"bytes"
	"context"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"errors"
	"fmt"
	"io"
	"math/big"
	"net/url"
	"regexp"
	"strings"
	"testing"
	"time"

	"golang.org/x/net/websocket"
	batchv1 "k8s.io/api/batch/v1"
	certificatesv1 "k8s.io/api/certificates/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/intstr"
	"k8s.io/client-go/kubernetes/scheme"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/remotecommand"
	utilexec "k8s.io/utils/exec"
	utilptr "k8s.io/utils/ptr"

	"github.com/devplane/devplane/apiserver/controlplane"
	"github.com/devplane/devplane/apiserver/workloads"
)

// terminated is the container's terminated state, nil while it runs.
func terminated(p *corev1.Pod, container string) *corev1.ContainerStateTerminated {
	for _, s := range append(append([]corev1.ContainerStatus(nil), p.Status.InitContainerStatuses...), p.Status.ContainerStatuses...) {
		if s.Name == container {
			return s.State.Terminated
		}
	}
	return nil
}

// A container whose command the sandbox interprets runs it: its state
// follows the script, exit code and all.
func TestKubeletRunsInterpretedCommands(t *testing.T) {
	s, cs := startWorkloads(t, 1)
	ctx := context.Background()
	pods := cs.CoreV1().Pods("default")

	s.mustKubectl(t, "run", "t", "--image=busybox", "--restart=Never", "--", "sh", "-c", "echo hello; sleep 2; exit 3")
	p := waitPod(t, cs, "default", "t", "Failed", func(p *corev1.Pod) bool { return p.Status.Phase == corev1.PodFailed })
	term := terminated(p, "t")
	if term == nil || term.ExitCode != 3 || term.Reason != "Error" {
		t.Fatalf("terminated state %+v, want exit code 3, reason Error", term)
	}
	if d := term.FinishedAt.Sub(term.StartedAt.Time); d < time.Second || d > 4*time.Second {
		t.Errorf("ran %s, want about 2s (the script's sleep)", d)
	}
	if out := s.mustKubectl(t, "logs", "t"); out != "hello\n" {
		t.Errorf("kubectl logs t = %q, want hello", out)
	}

	// The environment and mounted volumes are the pod's: a configMap as
	// files and variables, an emptyDir shared with an init container
	// that ran first.
	if _, err := cs.CoreV1().ConfigMaps("default").Create(ctx, &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "cfg"},
		Data: map[string]string{"color": "blue"}}, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	check := boundPod("check", func(p *corev1.Pod) {
		p.Spec.RestartPolicy = corev1.RestartPolicyNever
		p.Spec.Volumes = []corev1.Volume{
			{Name: "cfg", VolumeSource: corev1.VolumeSource{ConfigMap: &corev1.ConfigMapVolumeSource{LocalObjectReference: corev1.LocalObjectReference{Name: "cfg"}}}},
			{Name: "shared", VolumeSource: corev1.VolumeSource{EmptyDir: &corev1.EmptyDirVolumeSource{}}},
		}
		p.Spec.InitContainers = []corev1.Container{{Name: "init", Image: "busybox", Command: []string{"sh", "-c", "echo ready > /shared/mark"},
			VolumeMounts: []corev1.VolumeMount{{Name: "shared", MountPath: "/shared"}}}}
		p.Spec.Containers[0] = corev1.Container{Name: "app", Image: "busybox",
			Command: []string{"sh", "-c", `test "$(cat /etc/cfg/color)" = blue && test "$COLOR" = blue && test "$(cat /shared/mark)" = ready && test -s /var/run/secrets/kubernetes.io/serviceaccount/token`},
			Env: []corev1.EnvVar{{Name: "COLOR", ValueFrom: &corev1.EnvVarSource{ConfigMapKeyRef: &corev1.ConfigMapKeySelector{
				LocalObjectReference: corev1.LocalObjectReference{Name: "cfg"}, Key: "color"}}}},
			VolumeMounts: []corev1.VolumeMount{{Name: "cfg", MountPath: "/etc/cfg"}, {Name: "shared", MountPath: "/shared"}}}
	})
	if _, err := pods.Create(ctx, check, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	p = waitPod(t, cs, "default", "check", "finished", func(p *corev1.Pod) bool {
		return p.Status.Phase == corev1.PodSucceeded || p.Status.Phase == corev1.PodFailed
	})
	if p.Status.Phase != corev1.PodSucceeded {
		t.Errorf("check pod %s: %+v", p.Status.Phase, p.Status.ContainerStatuses)
	}

	// A failing init container fails a pod that does not restart.
	initFails := boundPod("init-fails", func(p *corev1.Pod) {
		p.Spec.RestartPolicy = corev1.RestartPolicyNever
		p.Spec.InitContainers = []corev1.Container{{Name: "init", Image: "busybox", Command: []string{"sh", "-c", "exit 7"}}}
	})
	if _, err := pods.Create(ctx, initFails, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	p = waitPod(t, cs, "default", "init-fails", "Failed", func(p *corev1.Pod) bool { return p.Status.Phase == corev1.PodFailed })
	if term := terminated(p, "init"); term == nil || term.ExitCode != 7 || p.Status.ContainerStatuses[0].State.Running != nil {
		t.Errorf("init container %+v, app %+v", p.Status.InitContainerStatuses, p.Status.ContainerStatuses)
	}

	// Deletion sends SIGTERM: a script that traps it ends at once, not
	// after the grace period.
	s.mustKubectl(t, "run", "trapper", "--image=busybox", "--", "sh", "-c", "trap 'exit 0' TERM; while true; do sleep 1; done")
	waitPod(t, cs, "default", "trapper", "Running", func(p *corev1.Pod) bool { return p.Status.Phase == corev1.PodRunning })
	start := time.Now()
	if err := pods.Delete(ctx, "trapper", metav1.DeleteOptions{GracePeriodSeconds: utilptr.To[int64](20)}); err != nil {
		t.Fatal(err)
	}
	waitFor(t, 15*time.Second, "trapper to be deleted", func(ctx context.Context) (bool, error) {
		_, err := pods.Get(ctx, "trapper", metav1.GetOptions{})
		return apierrors.IsNotFound(err), nil
	})
	if d := time.Since(start); d > 10*time.Second {
		t.Errorf("deletion took %s: SIGTERM's trap did not end the container", d)
	}
}

// Jobs succeed and fail as their pods' scripts say.
func TestKubeletIndexedJobFailsOddIndexes(t *testing.T) {
	_, cs := startWorkloads(t, 1)
	ctx := context.Background()
	job := &batchv1.Job{ObjectMeta: metav1.ObjectMeta{Name: "odd"}, Spec: batchv1.JobSpec{
		Completions: utilptr.To[int32](4), Parallelism: utilptr.To[int32](4),
		CompletionMode:       utilptr.To(batchv1.IndexedCompletion),
		BackoffLimitPerIndex: utilptr.To[int32](0), MaxFailedIndexes: utilptr.To[int32](4),
		Template: corev1.PodTemplateSpec{Spec: corev1.PodSpec{RestartPolicy: corev1.RestartPolicyNever,
			Containers: []corev1.Container{{Name: "work", Image: "busybox",
				Command: []string{"sh", "-c", "exit $((JOB_COMPLETION_INDEX % 2))"}}}}},
	}}
	if _, err := cs.BatchV1().Jobs("default").Create(ctx, job, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	var last *batchv1.Job
	waitFor(t, 60*time.Second, "the job to fail", func(ctx context.Context) (bool, error) {
		j, err := cs.BatchV1().Jobs("default").Get(ctx, "odd", metav1.GetOptions{})
		last = j
		if err != nil {
			return false, err
		}
		for _, c := range j.Status.Conditions {
			if c.Type == batchv1.JobFailed && c.Status == corev1.ConditionTrue {
				return true, nil
			}
		}
		return false, nil
	})
	if last.Status.CompletedIndexes != "0,2" || utilptr.Deref(last.Status.FailedIndexes, "") != "1,3" {
		t.Errorf("completed %q failed %q, want 0,2 and 1,3", last.Status.CompletedIndexes, utilptr.Deref(last.Status.FailedIndexes, ""))
	}
}

// kubectl logs reads what an interpreted container wrote, with the
// kubelet's options and errors.
func TestKubeletContainerLogs(t *testing.T) {
	s, cs := startWorkloads(t, 1)
	ctx := context.Background()
	pods := cs.CoreV1().Pods("default")
	s.mustKubectl(t, "run", "lines", "--image=busybox", "--restart=Never", "--",
		"sh", "-c", "for i in 1 2 3 4 5; do echo line $i; done; sleep 2; echo end >&2")
	waitPod(t, cs, "default", "lines", "Running", func(p *corev1.Pod) bool { return p.Status.Phase == corev1.PodRunning })
	waitFor(t, 10*time.Second, "five lines", func(context.Context) (bool, error) {
		return strings.Count(s.mustKubectl(t, "logs", "lines"), "\n") == 5, nil
	})
	if out := s.mustKubectl(t, "logs", "lines", "--tail=2"); out != "line 4\nline 5\n" {
		t.Errorf("--tail=2: %q", out)
	}
	if out := s.mustKubectl(t, "logs", "lines", "--limit-bytes=6"); out != "line 1" {
		t.Errorf("--limit-bytes=6: %q", out)
	}
	if out := s.mustKubectl(t, "logs", "lines", "--tail=1", "--timestamps"); !regexp.MustCompile(`^\d{4}-\d\d-\d\dT[0-9:.]+Z line 5\n$`).MatchString(out) {
		t.Errorf("--timestamps: %q", out)
	}
	// -f follows until the container ends, stderr included.
	if out := s.mustKubectl(t, "logs", "-f", "lines"); !strings.HasSuffix(out, "line 5\nend\n") {
		t.Errorf("-f: %q", out)
	}
	// Over a websocket (binary.k8s.io), as kube-apiserver streams logs to
	// such clients (the websocket logs conformance spec).
	if out := websocketLog(t, s, "/api/v1/namespaces/default/pods/lines/log?container=lines"); out != "line 1\nline 2\nline 3\nline 4\nline 5\nend\n" {
		t.Errorf("over a websocket: %q", out)
	}
	if r := s.kubectl(t, nil, "", "logs", "lines", "--previous"); r.Code == 0 ||
		!strings.Contains(r.Stderr, `previous terminated container "lines" in pod "lines" not found`) {
		t.Errorf("--previous without a restart: exit %d, %s", r.Code, r.Stderr)
	}

	// --previous after a restart is the run before.
	s.mustKubectl(t, "run", "again", "--image=busybox", "--restart=OnFailure", "--", "sh", "-c", "echo run; exit 1")
	waitPod(t, cs, "default", "again", "restarted", func(p *corev1.Pod) bool {
		return len(p.Status.ContainerStatuses) == 1 && p.Status.ContainerStatuses[0].RestartCount >= 1
	})
	if out := s.mustKubectl(t, "logs", "again", "--previous"); out != "run\n" {
		t.Errorf("--previous: %q", out)
	}

	// kube's errors: no container named among several, one waiting for
	// its configuration, one that is not interpreted.
	two := boundPod("two", func(p *corev1.Pod) {
		p.Spec.Containers = append(p.Spec.Containers, corev1.Container{Name: "side", Image: "busybox", Command: []string{"sleep", "3600"},
			Env: []corev1.EnvVar{{Name: "X", ValueFrom: &corev1.EnvVarSource{ConfigMapKeyRef: &corev1.ConfigMapKeySelector{
				LocalObjectReference: corev1.LocalObjectReference{Name: "missing"}, Key: "x"}}}}})
	})
	if _, err := pods.Create(ctx, two, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	waitPod(t, cs, "default", "two", "with statuses", func(p *corev1.Pod) bool { return len(p.Status.ContainerStatuses) == 2 })
	// (kubectl picks the first container itself; the API does not.)
	if raw, err := pods.GetLogs("two", &corev1.PodLogOptions{}).Do(ctx).Raw(); err == nil ||
		!strings.Contains(string(raw), "a container name must be specified for pod two, choose one of: [app side]") {
		t.Errorf("logs without a container name: %v, %q", err, raw)
	}
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"logs", "two", "-c", "side"}, `container "side" in pod "two" is waiting to start: CreateContainerConfigError`},
		{[]string{"logs", "two", "-c", "app"}, `container "app" in pod "two" does not run in devplane's sandbox`},
	} {
		if r := s.kubectl(t, nil, "", tc.args...); r.Code == 0 || !strings.Contains(r.Stderr, tc.want) {
			t.Errorf("kubectl %v: exit %d, %q; want %q", tc.args, r.Code, r.Stderr, tc.want)
		}
	}
}

// kubectl exec runs commands in an interpreted container's sandbox, over
// websockets and, falling back, SPDY.
func TestKubeletExec(t *testing.T) {
	s, cs := startWorkloads(t, 1)
	ctx := context.Background()
	if _, err := cs.CoreV1().ConfigMaps("default").Create(ctx, &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "cfg"},
		Data: map[string]string{"key": "the value"}}, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	pod := boundPod("box", func(p *corev1.Pod) {
		p.Spec.Volumes = []corev1.Volume{{Name: "cfg", VolumeSource: corev1.VolumeSource{ConfigMap: &corev1.ConfigMapVolumeSource{
			LocalObjectReference: corev1.LocalObjectReference{Name: "cfg"}}}}}
		p.Spec.Containers[0] = corev1.Container{Name: "app", Image: "busybox", Command: []string{"sleep", "3600"},
			VolumeMounts: []corev1.VolumeMount{{Name: "cfg", MountPath: "/etc/cfg"}}}
	})
	if _, err := cs.CoreV1().Pods("default").Create(ctx, pod, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	waitPod(t, cs, "default", "box", "Running", func(p *corev1.Pod) bool { return p.Status.Phase == corev1.PodRunning })
	for _, env := range [][]string{nil, {"KUBECTL_REMOTE_COMMAND_WEBSOCKETS=false"}} {
		r := s.kubectl(t, env, "", "exec", "box", "--", "cat", "/etc/cfg/key")
		if r.Code != 0 || r.Stdout != "the value" {
			t.Errorf("%v exec cat: exit %d, %q, %s", env, r.Code, r.Stdout, r.Stderr)
		}
		if r := s.kubectl(t, env, "", "exec", "box", "--", "sh", "-c", "exit 3"); r.Code != 3 {
			t.Errorf("%v exec exit 3: exit %d, %s", env, r.Code, r.Stderr)
		}
		r = s.kubectl(t, env, "echo one > /tmp/f\ncat /tmp/f\nhostname\n", "exec", "-i", "box", "--", "sh")
		if r.Code != 0 || r.Stdout != "one\nbox\n" {
			t.Errorf("%v exec -i sh: exit %d, %q, %s", env, r.Code, r.Stdout, r.Stderr)
		}
	}
	// With a terminal (kubectl exec -it), sh prompts and echoes busybox's way.
	for _, websocket := range []bool{true, false} {
		cfg := s.restConfig(false)
		url := cs.CoreV1().RESTClient().Post().Resource("pods").Namespace("default").Name("box").SubResource("exec").
			VersionedParams(&corev1.PodExecOptions{Container: "app", Command: []string{"sh"}, Stdin: true, Stdout: true, TTY: true}, scheme.ParameterCodec).URL()
		exec, err := remotecommand.NewSPDYExecutor(cfg, "POST", url)
		if websocket {
			exec, err = remotecommand.NewWebSocketExecutor(cfg, "GET", url.String())
		}
		if err != nil {
			t.Fatal(err)
		}
		var out bytes.Buffer
		streamCtx, cancel := context.WithTimeout(ctx, 20*time.Second)
		err = exec.StreamWithContext(streamCtx, remotecommand.StreamOptions{Stdin: strings.NewReader("echo hi\nexit 4\n"), Stdout: &out, Tty: true})
		cancel()
		var exitErr utilexec.ExitError
		if !errors.As(err, &exitErr) || exitErr.ExitStatus() != 4 || !strings.HasPrefix(out.String(), "/ # ") || !strings.Contains(out.String(), "hi\r\n/ # ") {
			t.Errorf("websocket %v: exec -it sh: %v, %q", websocket, err, out.String())
		}
	}

	// A container that is not interpreted says so.
	if _, err := cs.CoreV1().Pods("default").Create(ctx, boundPod("web", nil), metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	waitPod(t, cs, "default", "web", "Running", func(p *corev1.Pod) bool { return p.Status.Phase == corev1.PodRunning })
	if r := s.kubectl(t, nil, "", "exec", "web", "--", "true"); r.Code == 0 || !strings.Contains(r.Stderr, "does not run in devplane's sandbox") {
		t.Errorf("exec into nginx: exit %d, %s", r.Code, r.Stderr)
	}
}

// Exec probes run in the container's sandbox: a failing readiness probe
// keeps the pod unready until it passes; a failing liveness probe
// restarts the container.
func TestKubeletExecProbes(t *testing.T) {
	s, cs := startWorkloads(t, 1)
	ctx := context.Background()
	probe := func(cmd string) *corev1.Probe {
		return &corev1.Probe{PeriodSeconds: 1, FailureThreshold: 1,
			ProbeHandler: corev1.ProbeHandler{Exec: &corev1.ExecAction{Command: []string{"sh", "-c", cmd}}}}
	}
	pod := boundPod("probed", func(p *corev1.Pod) {
		p.Spec.Containers[0] = corev1.Container{Name: "app", Image: "busybox",
			Command:        []string{"sh", "-c", "touch /tmp/alive; sleep 3600"},
			ReadinessProbe: probe("test -f /tmp/ready"),
			LivenessProbe:  probe("test -f /tmp/alive")}
		// The command's touch runs as the container starts; under load a
		// probe at once could come first (as it could on a node).
		p.Spec.Containers[0].LivenessProbe.InitialDelaySeconds = 1
	})
	if _, err := cs.CoreV1().Pods("default").Create(ctx, pod, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	waitPod(t, cs, "default", "probed", "Running", func(p *corev1.Pod) bool { return p.Status.Phase == corev1.PodRunning })
	// Several probe periods pass: still unready.
	time.Sleep(2500 * time.Millisecond)
	p, err := cs.CoreV1().Pods("default").Get(ctx, "probed", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if podCondition(p, corev1.PodReady) != corev1.ConditionFalse || p.Status.ContainerStatuses[0].RestartCount != 0 {
		t.Fatalf("before /tmp/ready: Ready=%s, restarts %d", podCondition(p, corev1.PodReady), p.Status.ContainerStatuses[0].RestartCount)
	}
	s.mustKubectl(t, "exec", "probed", "--", "touch", "/tmp/ready")
	waitPod(t, cs, "default", "probed", "Ready", func(p *corev1.Pod) bool { return podCondition(p, corev1.PodReady) == corev1.ConditionTrue })

	s.mustKubectl(t, "exec", "probed", "--", "rm", "/tmp/alive")
	p = waitPod(t, cs, "default", "probed", "restarted", func(p *corev1.Pod) bool { return p.Status.ContainerStatuses[0].RestartCount == 1 })
	if last := p.Status.ContainerStatuses[0].LastTerminationState.Terminated; last == nil || last.ExitCode != 137 {
		t.Errorf("last termination %+v, want exit code 137", last)
	}
	waitFor(t, 10*time.Second, "the kubelet's liveness events", func(ctx context.Context) (bool, error) {
		events, err := cs.CoreV1().Events("default").List(ctx, metav1.ListOptions{FieldSelector: "involvedObject.name=probed,reason=Killing"})
		return err == nil && len(events.Items) == 1 && events.Items[0].Message == "Container app failed liveness probe, will be restarted", err
	})
}

// The rest of the kubelet's status as kube 1.37 writes it: init
// containers that completed are ready, observedGeneration, the active
// deadline, and a missing configMap volume keeping the pod creating.
func TestKubeletPodStatusDetails(t *testing.T) {
	_, cs := startWorkloads(t, 1)
	ctx := context.Background()
	pods := cs.CoreV1().Pods("default")
	inited := boundPod("inited", func(p *corev1.Pod) {
		p.Spec.InitContainers = []corev1.Container{{Name: "init", Image: "busybox", Command: []string{"true"}}}
	})
	if _, err := pods.Create(ctx, inited, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	p := waitPod(t, cs, "default", "inited", "Running", func(p *corev1.Pod) bool { return p.Status.Phase == corev1.PodRunning })
	if init := p.Status.InitContainerStatuses[0]; init.State.Terminated == nil || !init.Ready {
		t.Errorf("completed init container: %+v, want ready", init)
	}
	if p.Generation == 0 || p.Status.ObservedGeneration != p.Generation {
		t.Errorf("status.observedGeneration %d, generation %d", p.Status.ObservedGeneration, p.Generation)
	}
	for _, c := range p.Status.Conditions {
		if c.Type == corev1.PodReady && c.ObservedGeneration != p.Generation {
			t.Errorf("Ready condition observedGeneration %d, generation %d", c.ObservedGeneration, p.Generation)
		}
	}

	deadline := boundPod("deadline", func(p *corev1.Pod) {
		p.Spec.ActiveDeadlineSeconds = utilptr.To[int64](1)
		p.Spec.Containers[0] = corev1.Container{Name: "app", Image: "busybox", Command: []string{"sleep", "3600"}}
	})
	if _, err := pods.Create(ctx, deadline, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	p = waitPod(t, cs, "default", "deadline", "Failed", func(p *corev1.Pod) bool { return p.Status.Phase == corev1.PodFailed })
	if term := terminated(p, "app"); p.Status.Reason != "DeadlineExceeded" || term == nil || term.ExitCode != 137 {
		t.Errorf("past its deadline: reason %q, container %+v", p.Status.Reason, term)
	}

	waiting := boundPod("waiting", func(p *corev1.Pod) {
		p.Spec.Volumes = []corev1.Volume{{Name: "cfg", VolumeSource: corev1.VolumeSource{ConfigMap: &corev1.ConfigMapVolumeSource{
			LocalObjectReference: corev1.LocalObjectReference{Name: "later"}}}}}
		p.Spec.Containers[0] = corev1.Container{Name: "app", Image: "busybox", Command: []string{"sleep", "3600"},
			VolumeMounts: []corev1.VolumeMount{{Name: "cfg", MountPath: "/cfg"}}}
	})
	if _, err := pods.Create(ctx, waiting, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	waitFor(t, 20*time.Second, "the FailedMount event", func(ctx context.Context) (bool, error) {
		events, err := cs.CoreV1().Events("default").List(ctx, metav1.ListOptions{FieldSelector: "involvedObject.name=waiting,reason=FailedMount"})
		return err == nil && len(events.Items) > 0 && events.Items[0].Message == `MountVolume.SetUp failed for volume "cfg" : configmap "later" not found`, err
	})
	p, err := pods.Get(ctx, "waiting", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if w := p.Status.ContainerStatuses[0].State.Waiting; p.Status.Phase != corev1.PodPending || w == nil || w.Reason != "ContainerCreating" {
		t.Errorf("without its configMap: %s, %+v", p.Status.Phase, p.Status.ContainerStatuses[0].State)
	}
	if _, err := cs.CoreV1().ConfigMaps("default").Create(ctx, &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "later"}}, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	waitPod(t, cs, "default", "waiting", "Running once its configMap exists", func(p *corev1.Pod) bool { return p.Status.Phase == corev1.PodRunning })

	// A claim: missing, then not bound yet (as for any pod bound to its
	// node directly), then bound by the default class's provisioner.
	claimed := boundPod("claimed", func(p *corev1.Pod) {
		p.Spec.Volumes = []corev1.Volume{{Name: "data", VolumeSource: corev1.VolumeSource{
			PersistentVolumeClaim: &corev1.PersistentVolumeClaimVolumeSource{ClaimName: "data-later"}}}}
	})
	if _, err := pods.Create(ctx, claimed, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	waitFor(t, 20*time.Second, "the FailedMount event of a missing claim", func(ctx context.Context) (bool, error) {
		events, err := cs.CoreV1().Events("default").List(ctx, metav1.ListOptions{FieldSelector: "involvedObject.name=claimed,reason=FailedMount"})
		return err == nil && len(events.Items) > 0 && events.Items[0].Message == `Unable to attach or mount volumes: unmounted volumes=[data]: `+
			`error processing PVC default/data-later: failed to fetch PVC from API server: persistentvolumeclaims "data-later" not found`, err
	})
	if p, err := pods.Get(ctx, "claimed", metav1.GetOptions{}); err != nil || p.Status.Phase != corev1.PodPending {
		t.Errorf("without its claim: %v %+v", err, p.Status)
	}
	if _, err := cs.CoreV1().PersistentVolumeClaims("default").Create(ctx, &corev1.PersistentVolumeClaim{ObjectMeta: metav1.ObjectMeta{Name: "data-later"},
		Spec: corev1.PersistentVolumeClaimSpec{AccessModes: []corev1.PersistentVolumeAccessMode{corev1.ReadWriteOnce},
			Resources: corev1.VolumeResourceRequirements{Requests: corev1.ResourceList{corev1.ResourceStorage: resource.MustParse("1Gi")}}}},
		metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	waitPod(t, cs, "default", "claimed", "Running once its claim is bound", func(p *corev1.Pod) bool { return p.Status.Phase == corev1.PodRunning })
}

// A kubelet admits a pod only if the host ports it asks for are free on
// its node: one bound there by spec.nodeName (no scheduler) whose port is
// taken fails at once, with kube's reason; another protocol is free.
func TestKubeletRefusesTakenHostPorts(t *testing.T) {
	_, cs := startWorkloads(t, 1)
	ctx := context.Background()
	pods := cs.CoreV1().Pods("default")
	withPort := func(name string, proto corev1.Protocol) *corev1.Pod {
		return boundPod(name, func(p *corev1.Pod) {
			p.Spec.Containers[0].Ports = []corev1.ContainerPort{{ContainerPort: 80, HostPort: 8080, Protocol: proto}}
		})
	}
	for _, p := range []*corev1.Pod{withPort("first", corev1.ProtocolTCP)} {
		if _, err := pods.Create(ctx, p, metav1.CreateOptions{}); err != nil {
			t.Fatal(err)
		}
	}
	waitPod(t, cs, "default", "first", "Running", func(p *corev1.Pod) bool { return p.Status.Phase == corev1.PodRunning })
	for _, p := range []*corev1.Pod{withPort("second", corev1.ProtocolTCP), withPort("udp", corev1.ProtocolUDP)} {
		if _, err := pods.Create(ctx, p, metav1.CreateOptions{}); err != nil {
			t.Fatal(err)
		}
	}
	p := waitPod(t, cs, "default", "second", "Failed", func(p *corev1.Pod) bool { return p.Status.Phase == corev1.PodFailed })
	const msg = "Predicate NodePorts failed: node(s) didn't have free ports for the requested pod ports"
	if p.Status.Reason != "NodePorts" || p.Status.Message != "Pod was rejected: "+msg || len(p.Status.ContainerStatuses) != 0 {
		t.Errorf("refused pod: reason %q, message %q, containers %+v", p.Status.Reason, p.Status.Message, p.Status.ContainerStatuses)
	}
	waitFor(t, 10*time.Second, "the kubelet's NodePorts event", func(ctx context.Context) (bool, error) {
		events, err := cs.CoreV1().Events("default").List(ctx, metav1.ListOptions{FieldSelector: "involvedObject.name=second,reason=NodePorts"})
		return err == nil && len(events.Items) == 1 && events.Items[0].Type == corev1.EventTypeWarning && events.Items[0].Message == msg, err
	})
	waitPod(t, cs, "default", "udp", "Running", func(p *corev1.Pod) bool { return p.Status.Phase == corev1.PodRunning })

	// Once the first pod is gone its port is free again.
	if err := pods.Delete(ctx, "first", metav1.DeleteOptions{GracePeriodSeconds: utilptr.To[int64](0)}); err != nil {
		t.Fatal(err)
	}
	waitFor(t, 15*time.Second, "first to be deleted", func(ctx context.Context) (bool, error) {
		_, err := pods.Get(ctx, "first", metav1.GetOptions{})
		return apierrors.IsNotFound(err), nil
	})
	if _, err := pods.Create(ctx, withPort("third", corev1.ProtocolTCP), metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	waitPod(t, cs, "default", "third", "Running", func(p *corev1.Pod) bool { return p.Status.Phase == corev1.PodRunning })
}

// Image pulls: a reference that does not parse is InvalidImageName; an
// image at a reserved registry name, or one --unpullable-images names,
// fails its pull (ErrImagePull) and backs off (ImagePullBackOff) with
// kube's events, and its pod is never ready; a Deployment rolling out to
// it stalls with the old pods serving.
func TestKubeletImagePulls(t *testing.T) {
	s, cs := startWorkloadsWith(t, controlplane.Options{Nodes: 1, UnpullableImages: []string{"webserver:404"}})
	ctx := context.Background()
	pods := cs.CoreV1().Pods("default")
	for name, image := range map[string]string{"invalid": "Not_A/Valid:Image!", "reserved": "registry.invalid/app:1", "listed": "webserver:404"} {
		if _, err := pods.Create(ctx, boundPod(name, func(p *corev1.Pod) { p.Spec.Containers[0].Image = image }), metav1.CreateOptions{}); err != nil {
			t.Fatal(err)
		}
	}
	waiting := func(p *corev1.Pod) *corev1.ContainerStateWaiting {
		if len(p.Status.ContainerStatuses) == 0 {
			return nil
		}
		return p.Status.ContainerStatuses[0].State.Waiting
	}
	p := waitPod(t, cs, "default", "invalid", "InvalidImageName", func(p *corev1.Pod) bool {
		w := waiting(p)
		return w != nil && w.Reason == "InvalidImageName"
	})
	if w := waiting(p); !strings.Contains(w.Message, `couldn't parse image name "Not_A/Valid:Image!": invalid reference format`) {
		t.Errorf("InvalidImageName message %q", w.Message)
	}
	for _, name := range []string{"reserved", "listed"} {
		// (ErrImagePull lasts until the kubelet looks again: the events
		// below show it was there.)
		p = waitPod(t, cs, "default", name, "ImagePullBackOff", func(p *corev1.Pod) bool {
			w := waiting(p)
			return w != nil && w.Reason == "ImagePullBackOff"
		})
		if w := waiting(p); !strings.HasPrefix(w.Message, `Back-off pulling image "`) || !strings.Contains(w.Message, "ErrImagePull: failed to pull and unpack image") {
			t.Errorf("%s: ImagePullBackOff message %q", name, w.Message)
		}
		if p.Status.Phase != corev1.PodPending || podCondition(p, corev1.PodReady) != corev1.ConditionFalse {
			t.Errorf("%s: phase %s, Ready %s", name, p.Status.Phase, podCondition(p, corev1.PodReady))
		}
	}
	waitFor(t, 60*time.Second, "the kubelet's pull events", func(ctx context.Context) (bool, error) {
		events, err := cs.CoreV1().Events("default").List(ctx, metav1.ListOptions{FieldSelector: "involvedObject.name=listed"})
		if err != nil {
			return false, err
		}
		seen := map[string]bool{}
		for _, e := range events.Items {
			seen[e.Reason+": "+e.Message] = true
		}
		return seen[`Pulling: Pulling image "webserver:404"`] && seen["Failed: Error: ErrImagePull"] &&
			seen[`BackOff: Back-off pulling image "webserver:404"`] && seen["Failed: Error: ImagePullBackOff"], nil
	})

	// A rollout to an image that cannot be pulled stalls: the old pods
	// keep serving, the new one never becomes available.
	s.mustKubectl(t, "create", "deployment", "web", "--image=nginx:1.27", "--replicas=2")
	s.mustKubectl(t, "rollout", "status", "deployment/web", "--timeout=60s")
	s.mustKubectl(t, "set", "image", "deployment/web", "nginx=webserver:404")
	if r := s.kubectl(t, nil, "", "rollout", "status", "deployment/web", "--timeout=5s"); r.Code == 0 {
		t.Fatalf("rollout to an unpullable image finished: %s", r.Stdout)
	}
	d, err := cs.AppsV1().Deployments("default").Get(ctx, "web", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if d.Status.AvailableReplicas != 2 || d.Status.UpdatedReplicas != 1 {
		t.Errorf("stalled rollout: available %d, updated %d; want 2 and 1", d.Status.AvailableReplicas, d.Status.UpdatedReplicas)
	}
}

// testCA is a self-signed CA for tests that sign certificates.
func testCA(t *testing.T, cn string) (*x509.Certificate, *ecdsa.PrivateKey, string) {
	t.Helper()
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	tmpl := &x509.Certificate{SerialNumber: big.NewInt(1), Subject: pkix.Name{CommonName: cn}, IsCA: true, BasicConstraintsValid: true,
		KeyUsage: x509.KeyUsageCertSign, NotBefore: time.Now().Add(-time.Hour), NotAfter: time.Now().Add(time.Hour)}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &key.PublicKey, key)
	if err != nil {
		t.Fatal(err)
	}
	cert, _ := x509.ParseCertificate(der)
	return cert, key, string(pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der}))
}

// Projected ClusterTrustBundle and podCertificate sources: a pod whose
// non-optional bundle is missing stays ContainerCreating with a
// FailedMount event until it exists; a podCertificate source makes the
// kubelet request a certificate and wait until a signer issues it, then
// the pod reads its key and chain.
func TestKubeletCertificateVolumes(t *testing.T) {
	s, cs := startWorkloads(t, 1)
	ctx := context.Background()
	pods := cs.CoreV1().Pods("default")
	const signer = "example.com/test-signer"
	_, _, bundleA := testCA(t, "a")
	_, _, bundleB := testCA(t, "b")

	ctbPod := boundPod("ctb", func(p *corev1.Pod) {
		p.Spec.Volumes = []corev1.Volume{{Name: "bundles", VolumeSource: corev1.VolumeSource{Projected: &corev1.ProjectedVolumeSource{Sources: []corev1.VolumeProjection{
			{ClusterTrustBundle: &corev1.ClusterTrustBundleProjection{Name: utilptr.To("named"), Path: "named.pem"}},
			{ClusterTrustBundle: &corev1.ClusterTrustBundleProjection{SignerName: utilptr.To(signer), Path: "signer.pem",
				LabelSelector: &metav1.LabelSelector{MatchLabels: map[string]string{"trust": "yes"}}}},
		}}}}}
		p.Spec.Containers[0] = corev1.Container{Name: "app", Image: "busybox", Command: []string{"sleep", "3600"},
			VolumeMounts: []corev1.VolumeMount{{Name: "bundles", MountPath: "/bundles"}}}
	})
	// The same, in a container the sandbox does not run.
	ctbWeb := boundPod("ctb-web", func(p *corev1.Pod) {
		p.Spec.Volumes = ctbPod.Spec.Volumes
		p.Spec.Containers[0].VolumeMounts = ctbPod.Spec.Containers[0].VolumeMounts
	})
	for _, p := range []*corev1.Pod{ctbPod, ctbWeb} {
		if _, err := pods.Create(ctx, p, metav1.CreateOptions{}); err != nil {
			t.Fatal(err)
		}
	}
	for _, name := range []string{"ctb", "ctb-web"} {
		waitFor(t, 20*time.Second, name+"'s FailedMount event", func(ctx context.Context) (bool, error) {
			events, err := cs.CoreV1().Events("default").List(ctx, metav1.ListOptions{FieldSelector: "involvedObject.name=" + name + ",reason=FailedMount"})
			return err == nil && len(events.Items) > 0 && strings.Contains(events.Items[0].Message,
				`MountVolume.SetUp failed for volume "bundles" : while getting ClusterTrustBundle: clustertrustbundles.certificates.k8s.io "named" not found`), err
		})
	}
	ctbs := cs.CertificatesV1().ClusterTrustBundles()
	if _, err := ctbs.Create(ctx, &certificatesv1.ClusterTrustBundle{ObjectMeta: metav1.ObjectMeta{Name: "named"},
		Spec: certificatesv1.ClusterTrustBundleSpec{TrustBundle: bundleA}}, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	waitFor(t, 20*time.Second, "the signer's FailedMount event", func(ctx context.Context) (bool, error) {
		events, err := cs.CoreV1().Events("default").List(ctx, metav1.ListOptions{FieldSelector: "involvedObject.name=ctb,reason=FailedMount"})
		if err != nil {
			return false, err
		}
		for _, e := range events.Items {
			if strings.HasSuffix(e.Message, ": combination of signerName and labelSelector matched zero ClusterTrustBundles") {
				return true, nil
			}
		}
		return false, nil
	})
	p, err := pods.Get(ctx, "ctb", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if w := p.Status.ContainerStatuses[0].State.Waiting; p.Status.Phase != corev1.PodPending || w == nil || w.Reason != "ContainerCreating" {
		t.Errorf("without its bundles: %s, %+v", p.Status.Phase, p.Status.ContainerStatuses[0].State)
	}
	for i, b := range []string{bundleB, bundleA} { // bundleA twice: once in the file
		if _, err := ctbs.Create(ctx, &certificatesv1.ClusterTrustBundle{ObjectMeta: metav1.ObjectMeta{Name: fmt.Sprintf("example.com:test-signer:%d", i), Labels: map[string]string{"trust": "yes"}},
			Spec: certificatesv1.ClusterTrustBundleSpec{SignerName: signer, TrustBundle: b}}, metav1.CreateOptions{}); err != nil {
			t.Fatal(err)
		}
	}
	for _, name := range []string{"ctb", "ctb-web"} {
		waitPod(t, cs, "default", name, "Running once its bundles exist", func(p *corev1.Pod) bool { return p.Status.Phase == corev1.PodRunning })
	}
	if out := s.mustKubectl(t, "exec", "ctb", "--", "cat", "/bundles/named.pem"); out != bundleA {
		t.Errorf("named.pem = %q, want bundle a", out)
	}
	if out := s.mustKubectl(t, "exec", "ctb", "--", "cat", "/bundles/signer.pem"); strings.Count(out, "BEGIN CERTIFICATE") != 2 ||
		!strings.Contains(out, bundleA) || !strings.Contains(out, bundleB) {
		t.Errorf("signer.pem = %q, want bundles a and b once each", out)
	}

	// A pod certificate: the kubelet's request, signed here.
	certPod := boundPod("cert", func(p *corev1.Pod) {
		p.Spec.Volumes = []corev1.Volume{{Name: "tls", VolumeSource: corev1.VolumeSource{Projected: &corev1.ProjectedVolumeSource{Sources: []corev1.VolumeProjection{
			{PodCertificate: &corev1.PodCertificateProjection{SignerName: signer, KeyType: "ECDSAP256", CredentialBundlePath: "bundle.pem", KeyPath: "key.pem"}},
		}}}}}
		p.Spec.RestartPolicy = corev1.RestartPolicyNever
		p.Spec.Containers[0] = corev1.Container{Name: "app", Image: "busybox", Command: []string{"sh", "-c", "cat /tls/bundle.pem && sleep infinity"},
			VolumeMounts: []corev1.VolumeMount{{Name: "tls", MountPath: "/tls"}}}
	})
	if _, err := pods.Create(ctx, certPod, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	var pcr *certificatesv1.PodCertificateRequest
	waitFor(t, 20*time.Second, "the kubelet's PodCertificateRequest", func(ctx context.Context) (bool, error) {
		list, err := cs.CertificatesV1().PodCertificateRequests("default").List(ctx, metav1.ListOptions{})
		if err != nil || len(list.Items) == 0 {
			return false, err
		}
		pcr = &list.Items[0]
		return true, nil
	})
	if pcr.Spec.PodName != "cert" || pcr.Spec.NodeName != types.NodeName(workloads.NodeName(1)) || pcr.Spec.NodeUID == "" || pcr.Spec.ServiceAccountName != "default" || pcr.Spec.ServiceAccountUID == "" ||
		len(pcr.OwnerReferences) != 1 || pcr.OwnerReferences[0].Name != "cert" {
		t.Errorf("request %+v", pcr)
	}
	if p, err := pods.Get(ctx, "cert", metav1.GetOptions{}); err != nil || p.Status.Phase != corev1.PodPending {
		t.Errorf("before issuance: %v, %v", err, p.Status.Phase)
	}
	csr, err := x509.ParseCertificateRequest(pcr.Spec.StubPKCS10Request)
	if err != nil {
		t.Fatal(err)
	}
	ca, caKey, _ := testCA(t, "signer")
	notBefore := time.Now().Truncate(time.Second)
	der, err := x509.CreateCertificate(rand.Reader, &x509.Certificate{SerialNumber: big.NewInt(2), Subject: pkix.Name{CommonName: "cert"},
		NotBefore: notBefore, NotAfter: notBefore.Add(time.Hour)}, ca, csr.PublicKey, caKey)
	if err != nil {
		t.Fatal(err)
	}
	// The chain as issued, the leaf first, then two CAs in an order that
	// is not sorted: the kubelet keeps the chain's order.
	_, _, ca1 := testCA(t, "one")
	_, _, ca2 := testCA(t, "two")
	if b1, _ := pem.Decode([]byte(ca1)); b1 != nil {
		if b2, _ := pem.Decode([]byte(ca2)); b2 != nil && string(b1.Bytes) < string(b2.Bytes) {
			ca1, ca2 = ca2, ca1
		}
	}
	leaf := string(pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der})) + ca1 + ca2
	pcr.Status = certificatesv1.PodCertificateRequestStatus{CertificateChain: leaf,
		NotBefore: &metav1.Time{Time: notBefore}, NotAfter: &metav1.Time{Time: notBefore.Add(time.Hour)}, BeginRefreshAt: &metav1.Time{Time: notBefore.Add(30 * time.Minute)},
		Conditions: []metav1.Condition{{Type: certificatesv1.PodCertificateRequestConditionTypeIssued, Status: metav1.ConditionTrue, Reason: "Issued", LastTransitionTime: metav1.Now()}}}
	if _, err := cs.CertificatesV1().PodCertificateRequests("default").UpdateStatus(ctx, pcr, metav1.UpdateOptions{}); err != nil {
		t.Fatal(err)
	}
	waitPod(t, cs, "default", "cert", "Running once issued", func(p *corev1.Pod) bool { return p.Status.Phase == corev1.PodRunning })
	out := s.mustKubectl(t, "logs", "cert")
	block, rest := pem.Decode([]byte(out))
	if block == nil || block.Type != "PRIVATE KEY" || string(rest) != leaf {
		t.Fatalf("bundle.pem = %q, want the key then the issued certificate", out)
	}
	key, err := x509.ParsePKCS8PrivateKey(block.Bytes)
	if err != nil {
		t.Fatal(err)
	}
	if pub, ok := key.(*ecdsa.PrivateKey); !ok || !pub.PublicKey.Equal(csr.PublicKey) {
		t.Errorf("the key in the bundle is not the one requested for")
	}
	if out := s.mustKubectl(t, "exec", "cert", "--", "cat", "/tls/key.pem"); out != string(pem.EncodeToMemory(block)) {
		t.Errorf("key.pem = %q", out)
	}
}

// subPathExpr as the kubelet resolves it: expanded from the container's
// environment into the volume; absolute, "..", or a variable without a
// value is a CreateContainerConfigError, for interpreted containers and
// the others alike, until the pod is mended.
func TestKubeletSubPathExpr(t *testing.T) {
	_, cs := startWorkloads(t, 1)
	ctx := context.Background()
	pods := cs.CoreV1().Pods("default")
	fieldEnv := func(name, field string) corev1.EnvVar {
		return corev1.EnvVar{Name: name, ValueFrom: &corev1.EnvVarSource{FieldRef: &corev1.ObjectFieldSelector{FieldPath: field}}}
	}
	withSub := func(name, image string, env corev1.EnvVar, command ...string) *corev1.Pod {
		return boundPod(name, func(p *corev1.Pod) {
			p.Spec.RestartPolicy = corev1.RestartPolicyNever
			p.Spec.Volumes = []corev1.Volume{{Name: "work", VolumeSource: corev1.VolumeSource{EmptyDir: &corev1.EmptyDirVolumeSource{}}}}
			p.Spec.Containers[0] = corev1.Container{Name: "app", Image: image, Command: command, Env: []corev1.EnvVar{env},
				VolumeMounts: []corev1.VolumeMount{{Name: "work", MountPath: "/sub", SubPathExpr: "$(" + env.Name + ")"}, {Name: "work", MountPath: "/all"}}}
		})
	}
	for _, p := range []*corev1.Pod{
		withSub("ok", "busybox", fieldEnv("POD", "metadata.name"), "sh", "-c", `echo hi > /sub/f && test "$(cat /all/ok/f)" = hi`),
		withSub("absolute", "busybox", corev1.EnvVar{Name: "P", Value: "/tmp"}, "sh", "-c", "true"),
		withSub("backsteps", "busybox", corev1.EnvVar{Name: "P", Value: ".."}, "sh", "-c", "true"),
		withSub("absolute-web", "nginx:1.27", corev1.EnvVar{Name: "P", Value: "/tmp"}),
		withSub("annotated", "busybox", fieldEnv("A", "metadata.annotations['mysubpath']"), "sh", "-c", "test -d /all/foo"),
	} {
		if _, err := pods.Create(ctx, p, metav1.CreateOptions{}); err != nil {
			t.Fatal(err)
		}
	}
	p := waitPod(t, cs, "default", "ok", "finished", func(p *corev1.Pod) bool {
		return p.Status.Phase == corev1.PodSucceeded || p.Status.Phase == corev1.PodFailed
	})
	if p.Status.Phase != corev1.PodSucceeded {
		t.Errorf("subPathExpr $(POD): %s, %+v", p.Status.Phase, p.Status.ContainerStatuses)
	}
	for name, want := range map[string]string{
		"absolute":     "error SubPath `/tmp` must not be an absolute path",
		"absolute-web": "error SubPath `/tmp` must not be an absolute path",
		"backsteps":    "unable to provision SubPath `..`: must not contain '..'",
		"annotated":    "missing value for A",
	} {
		p := waitPod(t, cs, "default", name, "CreateContainerConfigError", func(p *corev1.Pod) bool {
			return len(p.Status.ContainerStatuses) == 1 && p.Status.ContainerStatuses[0].State.Waiting != nil &&
				p.Status.ContainerStatuses[0].State.Waiting.Reason == "CreateContainerConfigError"
		})
		if msg := p.Status.ContainerStatuses[0].State.Waiting.Message; msg != want {
			t.Errorf("%s: message %q, want %q", name, msg, want)
		}
	}
	// The annotation arrives: the container starts and sees its subPath.
	if _, err := pods.Patch(ctx, "annotated", types.MergePatchType, []byte(`{"metadata":{"annotations":{"mysubpath":"foo"}}}`), metav1.PatchOptions{}); err != nil {
		t.Fatal(err)
	}
	p = waitPod(t, cs, "default", "annotated", "finished", func(p *corev1.Pod) bool {
		return p.Status.Phase == corev1.PodSucceeded || p.Status.Phase == corev1.PodFailed
	})
	if p.Status.Phase != corev1.PodSucceeded {
		t.Errorf("once annotated: %s, %+v", p.Status.Phase, p.Status.ContainerStatuses)
	}
}

// Status rules: a failing command fails its pod (a write to a read-only
// root filesystem too); a run-to-completion pod
// whose image serves (no command) keeps running; httpGet, tcpSocket and
// grpc probes pass on a port the pod declares and fail on another (a
// failing readiness probe keeps the pod unready, a failing liveness or
// startup probe restarts the container).
func TestKubeletProbesAndRunRules(t *testing.T) {
	s, cs := startWorkloads(t, 1)
	ctx := context.Background()
	pods := cs.CoreV1().Pods("default")
	web := func(name string, mutate func(c *corev1.Container)) *corev1.Pod {
		return boundPod(name, func(p *corev1.Pod) {
			p.Spec.Containers[0].Ports = []corev1.ContainerPort{{ContainerPort: 80}}
			mutate(&p.Spec.Containers[0])
		})
	}
	httpProbe := func(port int) *corev1.Probe {
		return &corev1.Probe{PeriodSeconds: 1, FailureThreshold: 1,
			ProbeHandler: corev1.ProbeHandler{HTTPGet: &corev1.HTTPGetAction{Path: "/", Port: intstr.FromInt(port)}}}
	}
	for _, p := range []*corev1.Pod{
		boundPod("false", func(p *corev1.Pod) {
			p.Spec.RestartPolicy = corev1.RestartPolicyNever
			p.Spec.Containers[0] = corev1.Container{Name: "app", Image: "busybox", Command: []string{"/bin/false"}}
		}),
		boundPod("serves", func(p *corev1.Pod) { p.Spec.RestartPolicy = corev1.RestartPolicyNever }),
		boundPod("read-only", func(p *corev1.Pod) {
			p.Spec.RestartPolicy = corev1.RestartPolicyNever
			p.Spec.Containers[0] = corev1.Container{Name: "app", Image: "busybox", Command: []string{"sh", "-c", "echo test > /file"},
				SecurityContext: &corev1.SecurityContext{ReadOnlyRootFilesystem: utilptr.To(true)}}
		}),
		web("ready", func(c *corev1.Container) { c.ReadinessProbe = httpProbe(80) }),
		web("unready", func(c *corev1.Container) { c.ReadinessProbe = httpProbe(81) }),
		web("tcp-ready", func(c *corev1.Container) {
			c.Ports[0].Name = "http"
			c.ReadinessProbe = &corev1.Probe{ProbeHandler: corev1.ProbeHandler{TCPSocket: &corev1.TCPSocketAction{Port: intstr.FromString("http")}}}
		}),
		web("grpc-dead", func(c *corev1.Container) {
			c.LivenessProbe = &corev1.Probe{PeriodSeconds: 1, FailureThreshold: 1, ProbeHandler: corev1.ProbeHandler{GRPC: &corev1.GRPCAction{Port: 2333}}}
		}),
		boundPod("never-starts", func(p *corev1.Pod) {
			p.Spec.Containers[0] = corev1.Container{Name: "app", Image: "busybox", Command: []string{"sleep", "3600"},
				StartupProbe: &corev1.Probe{PeriodSeconds: 1, FailureThreshold: 2, ProbeHandler: corev1.ProbeHandler{Exec: &corev1.ExecAction{Command: []string{"false"}}}}}
		}),
	} {
		if _, err := pods.Create(ctx, p, metav1.CreateOptions{}); err != nil {
			t.Fatal(err)
		}
	}
	p := waitPod(t, cs, "default", "false", "Failed", func(p *corev1.Pod) bool { return p.Status.Phase == corev1.PodFailed })
	if term := terminated(p, "app"); term == nil || term.ExitCode != 1 {
		t.Errorf("/bin/false: %+v", term)
	}
	p = waitPod(t, cs, "default", "read-only", "Failed", func(p *corev1.Pod) bool { return p.Status.Phase == corev1.PodFailed })
	if out := s.mustKubectl(t, "logs", "read-only"); out != "sh: can't create /file: Read-only file system\n" {
		t.Errorf("a write to a read-only root filesystem: %q", out)
	}
	waitPod(t, cs, "default", "ready", "Ready", func(p *corev1.Pod) bool { return podCondition(p, corev1.PodReady) == corev1.ConditionTrue })
	waitPod(t, cs, "default", "tcp-ready", "Ready", func(p *corev1.Pod) bool { return podCondition(p, corev1.PodReady) == corev1.ConditionTrue })
	for _, name := range []string{"grpc-dead", "never-starts"} {
		waitPod(t, cs, "default", name, "restarted", func(p *corev1.Pod) bool {
			return len(p.Status.ContainerStatuses) == 1 && p.Status.ContainerStatuses[0].RestartCount >= 1
		})
	}
	// Well past DefaultRunTime and the probes' thresholds.
	time.Sleep(3 * time.Second)
	for name, want := range map[string]corev1.ConditionStatus{"serves": corev1.ConditionTrue, "unready": corev1.ConditionFalse} {
		p, err := pods.Get(ctx, name, metav1.GetOptions{})
		if err != nil {
			t.Fatal(err)
		}
		if p.Status.Phase != corev1.PodRunning || podCondition(p, corev1.PodReady) != want || p.Status.ContainerStatuses[0].RestartCount != 0 {
			t.Errorf("%s: %s, Ready %s (want %s), restarts %d", name, p.Status.Phase, podCondition(p, corev1.PodReady), want, p.Status.ContainerStatuses[0].RestartCount)
		}
	}
	for name, want := range map[string]string{
		"unready":      `Readiness probe failed: Get "http://10.244.0.`,
		"grpc-dead":    "Liveness probe failed: failed to connect service",
		"never-starts": "",
	} {
		events, err := cs.CoreV1().Events("default").List(ctx, metav1.ListOptions{FieldSelector: "involvedObject.name=" + name})
		if err != nil {
			t.Fatal(err)
		}
		var seen []string
		for _, e := range events.Items {
			seen = append(seen, e.Reason+": "+e.Message)
		}
		all := strings.Join(seen, "\n")
		if want != "" && !strings.Contains(all, "Unhealthy: "+want) {
			t.Errorf("%s: events\n%s\nwant Unhealthy: %s", name, all, want)
		}
		kind := map[string]string{"grpc-dead": "liveness", "never-starts": "startup"}[name]
		if kind != "" && !strings.Contains(all, "Killing: Container app failed "+kind+" probe, will be restarted") {
			t.Errorf("%s: events\n%s\nwant the kubelet's Killing", name, all)
		}
	}
}

// Exec lifecycle hooks of interpreted containers: postStart runs once the
// container started (a failing one kills it, which then restarts),
// preStop runs on deletion before SIGTERM.
func TestKubeletLifecycleHooks(t *testing.T) {
	s, cs := startWorkloads(t, 1)
	ctx := context.Background()
	pods := cs.CoreV1().Pods("default")
	hostVolume := []corev1.Volume{{Name: "hooks", VolumeSource: corev1.VolumeSource{HostPath: &corev1.HostPathVolumeSource{Path: "/hooks"}}}}
	hookMount := []corev1.VolumeMount{{Name: "hooks", MountPath: "/hooks"}}
	sh := func(script string) *corev1.LifecycleHandler {
		return &corev1.LifecycleHandler{Exec: &corev1.ExecAction{Command: []string{"sh", "-c", script}}}
	}
	hooked := boundPod("hooked", func(p *corev1.Pod) {
		p.Spec.Volumes = hostVolume
		p.Spec.Containers[0] = corev1.Container{Name: "app", Image: "busybox", VolumeMounts: hookMount,
			Command:   []string{"sh", "-c", "trap 'exit 0' TERM; while true; do sleep 1; done"},
			Lifecycle: &corev1.Lifecycle{PostStart: sh("echo started > /hooks/post"), PreStop: sh("echo stopping > /hooks/pre")}}
	})
	badHook := boundPod("bad-hook", func(p *corev1.Pod) {
		// sleep, PID 1, ignores the SIGTERM: the kill takes the grace period.
		p.Spec.TerminationGracePeriodSeconds = utilptr.To[int64](1)
		p.Spec.Containers[0] = corev1.Container{Name: "app", Image: "busybox", Command: []string{"sleep", "3600"},
			Lifecycle: &corev1.Lifecycle{PostStart: sh("echo no; exit 2")}}
	})
	for _, p := range []*corev1.Pod{hooked, badHook} {
		if _, err := pods.Create(ctx, p, metav1.CreateOptions{}); err != nil {
			t.Fatal(err)
		}
	}
	waitPod(t, cs, "default", "hooked", "Running", func(p *corev1.Pod) bool { return p.Status.Phase == corev1.PodRunning })
	waitFor(t, 10*time.Second, "the postStart hook's file", func(context.Context) (bool, error) {
		r := s.kubectl(t, nil, "", "exec", "hooked", "--", "cat", "/hooks/post")
		return r.Code == 0 && r.Stdout == "started\n", nil
	})
	waitPod(t, cs, "default", "bad-hook", "restarted", func(p *corev1.Pod) bool {
		return len(p.Status.ContainerStatuses) == 1 && p.Status.ContainerStatuses[0].RestartCount >= 1
	})
	// kube's events, which do not carry the hook's output.
	waitForEvent(t, cs, "bad-hook", "FailedPostStartHook", "PostStartHook failed")
	waitForEvent(t, cs, "bad-hook", "Killing", "FailedPostStartHook")

	if err := pods.Delete(ctx, "hooked", metav1.DeleteOptions{GracePeriodSeconds: utilptr.To[int64](10)}); err != nil {
		t.Fatal(err)
	}
	waitFor(t, 15*time.Second, "hooked to be deleted", func(ctx context.Context) (bool, error) {
		_, err := pods.Get(ctx, "hooked", metav1.GetOptions{})
		return apierrors.IsNotFound(err), nil
	})
	reader := boundPod("reader", func(p *corev1.Pod) {
		p.Spec.RestartPolicy = corev1.RestartPolicyNever
		p.Spec.Volumes = hostVolume
		p.Spec.Containers[0] = corev1.Container{Name: "app", Image: "busybox", VolumeMounts: hookMount, Command: []string{"cat", "/hooks/pre"}}
	})
	if _, err := pods.Create(ctx, reader, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	waitPod(t, cs, "default", "reader", "Succeeded", func(p *corev1.Pod) bool { return p.Status.Phase == corev1.PodSucceeded })
	if out := s.mustKubectl(t, "logs", "reader"); out != "stopping\n" {
		t.Errorf("preStop hook's file: %q", out)
	}
}

// Mounted configMaps and downward API files follow their sources while
// the pod runs, as the kubelet refreshes them.
func TestKubeletRefreshesVolumes(t *testing.T) {
	s, cs := startWorkloads(t, 1)
	ctx := context.Background()
	cms := cs.CoreV1().ConfigMaps("default")
	if _, err := cms.Create(ctx, &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "cfg"}, Data: map[string]string{"color": "blue"}}, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	pod := boundPod("watcher", func(p *corev1.Pod) {
		p.Labels = map[string]string{"stage": "one"}
		p.Spec.Volumes = []corev1.Volume{
			{Name: "cfg", VolumeSource: corev1.VolumeSource{ConfigMap: &corev1.ConfigMapVolumeSource{LocalObjectReference: corev1.LocalObjectReference{Name: "cfg"}}}},
			{Name: "info", VolumeSource: corev1.VolumeSource{DownwardAPI: &corev1.DownwardAPIVolumeSource{Items: []corev1.DownwardAPIVolumeFile{
				{Path: "labels", FieldRef: &corev1.ObjectFieldSelector{FieldPath: "metadata.labels"}}}}}},
		}
		p.Spec.Containers[0] = corev1.Container{Name: "app", Image: "busybox", Command: []string{"sleep", "3600"},
			VolumeMounts: []corev1.VolumeMount{{Name: "cfg", MountPath: "/cfg"}, {Name: "info", MountPath: "/info"}}}
	})
	if _, err := cs.CoreV1().Pods("default").Create(ctx, pod, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	waitPod(t, cs, "default", "watcher", "Running", func(p *corev1.Pod) bool { return p.Status.Phase == corev1.PodRunning })
	if out := s.mustKubectl(t, "exec", "watcher", "--", "cat", "/cfg/color", "/info/labels"); out != "blue"+`stage="one"` {
		t.Fatalf("before the updates: %q", out)
	}
	if _, err := cms.Update(ctx, &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "cfg"}, Data: map[string]string{"color": "green"}}, metav1.UpdateOptions{}); err != nil {
		t.Fatal(err)
	}
	s.mustKubectl(t, "label", "pod", "watcher", "stage=two", "--overwrite")
	waitFor(t, 20*time.Second, "the volumes to follow their sources", func(context.Context) (bool, error) {
		// A poll: one exec that fails is tried again (seen once under
		// load: kubectl's websocket stream ended before cat's output).
		r := s.kubectl(t, nil, "", "exec", "watcher", "--", "cat", "/cfg/color", "/info/labels")
		return r.Code == 0 && r.Stdout == "green"+`stage="two"`, nil
	})
}

// websocketLog reads a log path over a websocket as kube's e2e framework
// does (x/net/websocket, protocol binary.k8s.io) until the server ends it.
func websocketLog(t *testing.T, s *started, path string) string {
	t.Helper()
	cfg := s.restConfig(false)
	tlsConfig, err := rest.TLSConfigFor(cfg)
	if err != nil {
		t.Fatal(err)
	}
	u, err := url.Parse(cfg.Host + path)
	if err != nil {
		t.Fatal(err)
	}
	u.Scheme = "wss"
	wsCfg, err := websocket.NewConfig(u.String(), "https://"+u.Host)
	if err != nil {
		t.Fatal(err)
	}
	wsCfg.TlsConfig, wsCfg.Protocol = tlsConfig, []string{"binary.k8s.io"}
	ws, err := websocket.DialConfig(wsCfg)
	if err != nil {
		t.Fatalf("websocket %s: %v", path, err)
	}
	defer ws.Close()
	_ = ws.SetDeadline(time.Now().Add(20 * time.Second))
	var out []byte
	for {
		var msg []byte
		if err := websocket.Message.Receive(ws, &msg); err != nil {
			if err != io.EOF {
				t.Errorf("websocket %s: %v", path, err)
			}
			return string(out)
		}
		out = append(out, msg...)
	}
}
