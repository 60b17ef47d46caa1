package controlplane_test

import (
	"context"
	"fmt"
	"net"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/intstr"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/client-go/kubernetes"
	utilptr "k8s.io/utils/ptr"

	"github.com/devplane/devplane/apiserver/controlplane"
	"github.com/devplane/devplane/apiserver/workloads"
)

// startWorkloads starts devplane with n simulated nodes and waits until
// they are Ready and have their Leases.
func startWorkloads(t *testing.T, n int) (*started, *kubernetes.Clientset) {
	t.Helper()
	return startWorkloadsWith(t, controlplane.Options{Nodes: n})
}

// startWorkloadsWith starts devplane with opts.Nodes simulated nodes and
// waits for them.
func startWorkloadsWith(t *testing.T, opts controlplane.Options) (*started, *kubernetes.Clientset) {
	t.Helper()
	n := opts.Nodes
	s := startControlPlaneWith(t, opts)
	cs := s.clientset(t, true)
	waitFor(t, 60*time.Second, fmt.Sprintf("%d Ready nodes", n), func(ctx context.Context) (bool, error) {
		nodes, err := cs.CoreV1().Nodes().List(ctx, metav1.ListOptions{})
		if err != nil {
			return false, err
		}
		ready := 0
		for _, node := range nodes.Items {
			for _, c := range node.Status.Conditions {
				if c.Type == corev1.NodeReady && c.Status == corev1.ConditionTrue {
					ready++
				}
			}
		}
		if ready != n {
			return false, nil
		}
		// Each node's Lease follows its registration.
		leases, err := cs.CoordinationV1().Leases("kube-node-lease").List(ctx, metav1.ListOptions{})
		return err == nil && len(leases.Items) == n, err
	})
	return s, cs
}

// waitFor polls cond (bounded by timeout) and fails the test with what it
// waited for.
func waitFor(t *testing.T, timeout time.Duration, what string, cond func(ctx context.Context) (bool, error)) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), timeout)
	defer cancel()
	var last error
	err := wait.PollUntilContextCancel(ctx, 20*time.Millisecond, true, func(ctx context.Context) (bool, error) {
		ok, err := cond(ctx)
		if err != nil {
			last = err
			return false, nil
		}
		return ok, nil
	})
	if err != nil {
		t.Fatalf("timed out waiting for %s (last error: %v)", what, last)
	}
}

func TestWorkloadsNodesAndLeases(t *testing.T) {
	s, cs := startWorkloads(t, 3)
	ctx := context.Background()
	for i := 1; i <= 3; i++ {
		name := workloads.NodeName(i)
		node, err := cs.CoreV1().Nodes().Get(ctx, name, metav1.GetOptions{})
		if err != nil {
			t.Fatal(err)
		}
		for k, v := range map[string]string{"kubernetes.io/hostname": name, "kubernetes.io/os": "linux"} {
			if node.Labels[k] != v {
				t.Errorf("%s: label %s = %q, want %q", name, k, node.Labels[k], v)
			}
		}
		if node.Labels["topology.kubernetes.io/zone"] == "" {
			t.Errorf("%s: no zone label with 3 nodes: %v", name, node.Labels)
		}
		if _, cidr, err := net.ParseCIDR(node.Spec.PodCIDR); err != nil || len(node.Spec.PodCIDRs) != 1 || cidr.String() != node.Spec.PodCIDRs[0] {
			t.Errorf("%s: podCIDR %q podCIDRs %v", name, node.Spec.PodCIDR, node.Spec.PodCIDRs)
		}
		if node.Status.Allocatable.Pods().Value() != 110 || node.Status.Capacity.Cpu().Value() != 8 {
			t.Errorf("%s: capacity %v allocatable %v", name, node.Status.Capacity, node.Status.Allocatable)
		}
		if len(node.Status.Addresses) == 0 || node.Status.NodeInfo.KubeletVersion == "" || node.Status.NodeInfo.OperatingSystem != "linux" {
			t.Errorf("%s: addresses %v nodeInfo %+v", name, node.Status.Addresses, node.Status.NodeInfo)
		}
		lease, err := cs.CoordinationV1().Leases("kube-node-lease").Get(ctx, name, metav1.GetOptions{})
		if err != nil {
			t.Fatal(err)
		}
		if utilptr.Deref(lease.Spec.HolderIdentity, "") != name || utilptr.Deref(lease.Spec.LeaseDurationSeconds, 0) != 40 || lease.Spec.RenewTime == nil {
			t.Errorf("%s: lease %+v", name, lease.Spec)
		}
		if len(lease.OwnerReferences) != 1 || lease.OwnerReferences[0].UID != node.UID {
			t.Errorf("%s: lease owners %v, want the Node", name, lease.OwnerReferences)
		}
	}
	out := s.mustKubectl(t, "get", "nodes")
	if strings.Count(out, " Ready ") != 3 {
		t.Errorf("kubectl get nodes:\n%s", out)
	}
	out = s.mustKubectl(t, "describe", "node", "node-1")
	for _, want := range []string{"KubeletReady", "PodCIDR:", "Capacity:", "Allocatable:", "Kubelet Version:", "Lease:"} {
		if !strings.Contains(out, want) {
			t.Errorf("kubectl describe node lacks %q:\n%s", want, out)
		}
	}
}

// TestWorkloadsLeasesRenewed: every node's Lease is renewed within the
// kubelet's 10s (from one goroutine for all nodes, each updating the Lease
// it last wrote); one deleted is created again, one another client wrote
// is renewed over that write, as the kubelet's lease controller does.
func TestWorkloadsLeasesRenewed(t *testing.T) {
	_, cs := startWorkloads(t, 3)
	ctx := context.Background()
	leases := cs.CoordinationV1().Leases("kube-node-lease")
	renewedAt := func(name string) (time.Time, error) {
		l, err := leases.Get(ctx, name, metav1.GetOptions{})
		if err != nil {
			return time.Time{}, err
		}
		if l.Spec.RenewTime == nil || utilptr.Deref(l.Spec.HolderIdentity, "") != name {
			return time.Time{}, fmt.Errorf("%s: lease %+v", name, l.Spec)
		}
		return l.Spec.RenewTime.Time, nil
	}
	first := map[string]time.Time{}
	for i := 1; i <= 3; i++ {
		at, err := renewedAt(workloads.NodeName(i))
		if err != nil {
			t.Fatal(err)
		}
		first[workloads.NodeName(i)] = at
	}
	// node-2's Lease is deleted, node-3's written by someone else (its
	// resourceVersion moves on): both must still be renewed.
	if err := leases.Delete(ctx, "node-2", metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	l3, err := leases.Get(ctx, "node-3", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	l3.Labels = map[string]string{"touched": "by-test"}
	if _, err := leases.Update(ctx, l3, metav1.UpdateOptions{}); err != nil {
		t.Fatal(err)
	}
	waitFor(t, 25*time.Second, "every node's Lease renewed", func(context.Context) (bool, error) {
		for name, before := range first {
			at, err := renewedAt(name)
			if err != nil || !at.After(before) {
				return false, err
			}
		}
		return true, nil
	})
	if l, err := leases.Get(ctx, "node-3", metav1.GetOptions{}); err != nil || l.Labels["touched"] != "by-test" {
		t.Errorf("node-3's lease lost the other writer's label: %v, %v", l, err)
	}
	node2, err := cs.CoreV1().Nodes().Get(ctx, "node-2", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if l, err := leases.Get(ctx, "node-2", metav1.GetOptions{}); err != nil || len(l.OwnerReferences) != 1 || l.OwnerReferences[0].UID != node2.UID {
		t.Errorf("node-2's lease created again without its Node owner: %v, %v", l, err)
	}
}

// TestWorkloadsSchedulerConfig: --scheduler-config gives kube's scheduler
// the file's profiles, as kube-scheduler's --config: a pod naming the
// second profile's schedulerName is scheduled, and runs.
func TestWorkloadsSchedulerConfig(t *testing.T) {
	path := filepath.Join(t.TempDir(), "scheduler.yaml")
	config := `apiVersion: kubescheduler.config.k8s.io/v1
kind: KubeSchedulerConfiguration
percentageOfNodesToScore: 50
profiles:
- schedulerName: default-scheduler
- schedulerName: no-default-spread
  pluginConfig:
  - name: PodTopologySpread
    args:
      defaultingType: List
`
	if err := os.WriteFile(path, []byte(config), 0o600); err != nil {
		t.Fatal(err)
	}
	s := startControlPlaneWith(t, controlplane.Options{Nodes: 2, SchedulerConfig: path})
	cs := s.clientset(t, true)
	ctx := context.Background()
	pod := &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{Name: "profiled", Namespace: "default"},
		Spec:       corev1.PodSpec{SchedulerName: "no-default-spread", Containers: []corev1.Container{{Name: "c", Image: "nginx"}}},
	}
	if _, err := cs.CoreV1().Pods("default").Create(ctx, pod, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	waitFor(t, 60*time.Second, "the pod of the second profile Running", func(ctx context.Context) (bool, error) {
		p, err := cs.CoreV1().Pods("default").Get(ctx, "profiled", metav1.GetOptions{})
		return err == nil && p.Spec.NodeName != "" && p.Status.Phase == corev1.PodRunning, err
	})
}

func TestWorkloadsOffByDefault(t *testing.T) {
	s := startControlPlane(t, "")
	cs := s.clientset(t, true)
	// Give the controllers a moment: nothing registers a node.
	time.Sleep(500 * time.Millisecond)
	nodes, err := cs.CoreV1().Nodes().List(context.Background(), metav1.ListOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if len(nodes.Items) != 0 {
		t.Errorf("nodes without --nodes: %v", nodes.Items)
	}
	body := s.mustKubectl(t, "get", "--raw", "/readyz?verbose")
	if strings.Contains(body, "start-workloads") {
		t.Errorf("readyz lists the workloads hook with no nodes:\n%s", body)
	}
	// No pvc-protection controller runs, so no claim gets its finalizer
	// (it could never be deleted).
	claim, err := cs.CoreV1().PersistentVolumeClaims("default").Create(context.Background(), &corev1.PersistentVolumeClaim{ObjectMeta: metav1.ObjectMeta{Name: "c"},
		Spec: corev1.PersistentVolumeClaimSpec{AccessModes: []corev1.PersistentVolumeAccessMode{corev1.ReadWriteOnce},
			Resources: corev1.VolumeResourceRequirements{Requests: corev1.ResourceList{corev1.ResourceStorage: resource.MustParse("1Gi")}}}}, metav1.CreateOptions{})
	if err != nil || len(claim.Finalizers) != 0 {
		t.Errorf("claim without workloads: %v, finalizers %v", err, claim.Finalizers)
	}
}

// mustKubectlStdin runs kubectl with stdin and fails unless it exits 0.
func (s *started) mustKubectlStdin(t *testing.T, stdin string, args ...string) string {
	t.Helper()
	r := s.kubectl(t, nil, stdin, args...)
	if r.Code != 0 {
		t.Fatalf("kubectl %s: exit %d\nstdout:\n%s\nstderr:\n%s", strings.Join(args, " "), r.Code, r.Stdout, r.Stderr)
	}
	return r.Stdout
}

// boundPod is a pod bound to node-1 directly (no scheduler involved).
func boundPod(name string, mutate func(*corev1.Pod)) *corev1.Pod {
	p := &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{Name: name},
		Spec: corev1.PodSpec{
			NodeName:   workloads.NodeName(1),
			Containers: []corev1.Container{{Name: "app", Image: "nginx:1.27"}},
		},
	}
	if mutate != nil {
		mutate(p)
	}
	return p
}

func podCondition(p *corev1.Pod, t corev1.PodConditionType) corev1.ConditionStatus {
	for _, c := range p.Status.Conditions {
		if c.Type == t {
			return c.Status
		}
	}
	return ""
}

func waitPod(t *testing.T, cs kubernetes.Interface, ns, name, what string, cond func(*corev1.Pod) bool) *corev1.Pod {
	t.Helper()
	var last *corev1.Pod
	waitFor(t, 60*time.Second, "pod "+name+" "+what, func(ctx context.Context) (bool, error) {
		p, err := cs.CoreV1().Pods(ns).Get(ctx, name, metav1.GetOptions{})
		if err != nil {
			return false, err
		}
		last = p
		return cond(p), nil
	})
	return last
}

func TestWorkloadsKubeletRunsBoundPods(t *testing.T) {
	_, cs := startWorkloads(t, 1)
	ctx := context.Background()
	pods := cs.CoreV1().Pods("default")
	node, err := cs.CoreV1().Nodes().Get(ctx, workloads.NodeName(1), metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	_, podNet, _ := net.ParseCIDR(node.Spec.PodCIDR)

	// A long-running pod with an init container and a readiness probe.
	web := boundPod("web", func(p *corev1.Pod) {
		p.Spec.InitContainers = []corev1.Container{{Name: "init", Image: "busybox"},
			{Name: "sidecar", Image: "envoy", RestartPolicy: utilptr.To(corev1.ContainerRestartPolicyAlways)}}
		p.Spec.Containers[0].ReadinessProbe = &corev1.Probe{InitialDelaySeconds: 1,
			ProbeHandler: corev1.ProbeHandler{HTTPGet: &corev1.HTTPGetAction{Path: "/", Port: intstrFromInt(80)}}}
	})
	if _, err := pods.Create(ctx, web, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	p := waitPod(t, cs, "default", "web", "Running and Ready", func(p *corev1.Pod) bool {
		return p.Status.Phase == corev1.PodRunning && podCondition(p, corev1.PodReady) == corev1.ConditionTrue
	})
	if ip := net.ParseIP(p.Status.PodIP); ip == nil || !podNet.Contains(ip) {
		t.Errorf("podIP %q not in the node's pod CIDR %s", p.Status.PodIP, podNet)
	}
	if p.Status.HostIP == "" || p.Status.StartTime == nil {
		t.Errorf("hostIP %q startTime %v", p.Status.HostIP, p.Status.StartTime)
	}
	for _, c := range []corev1.PodConditionType{corev1.PodScheduled, corev1.PodInitialized, corev1.ContainersReady, corev1.PodReady} {
		if podCondition(p, c) != corev1.ConditionTrue {
			t.Errorf("condition %s = %q", c, podCondition(p, c))
		}
	}
	if len(p.Status.InitContainerStatuses) != 2 || p.Status.InitContainerStatuses[0].State.Terminated == nil ||
		p.Status.InitContainerStatuses[0].State.Terminated.Reason != "Completed" {
		t.Errorf("init container status %+v", p.Status.InitContainerStatuses)
	} else if side := p.Status.InitContainerStatuses[1]; side.State.Running == nil || !utilptr.Deref(side.Started, false) || !side.Ready {
		t.Errorf("sidecar status %+v: want running, started and ready", side)
	}
	cs0 := p.Status.ContainerStatuses[0]
	if cs0.State.Running == nil || !cs0.Ready || !utilptr.Deref(cs0.Started, false) || !strings.HasPrefix(cs0.ContainerID, "devplane://") ||
		!strings.Contains(cs0.ImageID, "nginx@sha256:") {
		t.Errorf("container status %+v", cs0)
	}

	// kubectl debug adds an ephemeral container: it runs (never ready),
	// so kubectl stops waiting and tries to attach. (Its image's own
	// command runs by the simulated rules; ephemeral containers the
	// sandbox runs: TestKubeletEphemeralContainers.)
	p.Spec.EphemeralContainers = []corev1.EphemeralContainer{{EphemeralContainerCommon: corev1.EphemeralContainerCommon{
		Name: "debugger", Image: "nicolaka/netshoot", Stdin: true, TTY: true}}}
	if _, err := pods.UpdateEphemeralContainers(ctx, "web", p, metav1.UpdateOptions{}); err != nil {
		t.Fatal(err)
	}
	p = waitPod(t, cs, "default", "web", "the ephemeral container running", func(p *corev1.Pod) bool {
		return len(p.Status.EphemeralContainerStatuses) == 1 && p.Status.EphemeralContainerStatuses[0].State.Running != nil
	})
	if e := p.Status.EphemeralContainerStatuses[0]; e.Name != "debugger" || e.Ready || !utilptr.Deref(e.Started, false) || !strings.HasPrefix(e.ContainerID, "devplane://") ||
		p.Status.Phase != corev1.PodRunning || podCondition(p, corev1.PodReady) != corev1.ConditionTrue {
		t.Errorf("ephemeral container status %+v, pod %s Ready=%s", e, p.Status.Phase, podCondition(p, corev1.PodReady))
	}
	// The kubelet's events name each container as kube's does.
	waitFor(t, 10*time.Second, "the kubelet's Started events", func(ctx context.Context) (bool, error) {
		events, err := cs.CoreV1().Events("default").List(ctx, metav1.ListOptions{FieldSelector: "involvedObject.name=web,reason=Started"})
		if err != nil {
			return false, err
		}
		var paths []string
		for _, e := range events.Items {
			paths = append(paths, e.InvolvedObject.FieldPath)
		}
		slices.Sort(paths)
		return slices.Equal(paths, []string{"spec.containers{app}", "spec.ephemeralContainers{debugger}", "spec.initContainers{init}", "spec.initContainers{sidecar}"}), nil
	})

	// Run-to-completion pods: success, failure by annotation.
	for _, tc := range []struct {
		name, code string
		phase      corev1.PodPhase
	}{{"done", "", corev1.PodSucceeded}, {"fails", "3", corev1.PodFailed}} {
		pod := boundPod(tc.name, func(p *corev1.Pod) {
			p.Spec.RestartPolicy = corev1.RestartPolicyNever
			p.Annotations = map[string]string{workloads.AnnotationExitAfter: "200ms"}
			if tc.code != "" {
				p.Annotations[workloads.AnnotationExitCode] = tc.code
			}
		})
		if _, err := pods.Create(ctx, pod, metav1.CreateOptions{}); err != nil {
			t.Fatal(err)
		}
		p := waitPod(t, cs, "default", tc.name, string(tc.phase), func(p *corev1.Pod) bool { return p.Status.Phase == tc.phase })
		term := p.Status.ContainerStatuses[0].State.Terminated
		if term == nil || fmt.Sprint(term.ExitCode) != map[string]string{"": "0"}[tc.code]+tc.code {
			t.Errorf("%s: terminated state %+v", tc.name, term)
		}
		if podCondition(p, corev1.PodReady) != corev1.ConditionFalse {
			t.Errorf("%s: Ready = %q after completion", tc.name, podCondition(p, corev1.PodReady))
		}
	}

	// A crash loop: restarts with back-off, the pod stays Running.
	crash := boundPod("crash", func(p *corev1.Pod) {
		p.Annotations = map[string]string{workloads.AnnotationExitAfter: "100ms", workloads.AnnotationExitCode: "1"}
	})
	if _, err := pods.Create(ctx, crash, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	p = waitPod(t, cs, "default", "crash", "restarted twice", func(p *corev1.Pod) bool {
		return len(p.Status.ContainerStatuses) == 1 && p.Status.ContainerStatuses[0].RestartCount >= 2
	})
	if p.Status.Phase != corev1.PodRunning || p.Status.ContainerStatuses[0].LastTerminationState.Terminated == nil ||
		p.Status.ContainerStatuses[0].LastTerminationState.Terminated.ExitCode != 1 {
		t.Errorf("crash-looping pod: phase %s, container %+v", p.Status.Phase, p.Status.ContainerStatuses[0])
	}

	// Graceful deletion finishes after a short simulated shutdown, well
	// within the default 30s grace period.
	if err := pods.Delete(ctx, "web", metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	waitFor(t, 15*time.Second, "web to be deleted", func(ctx context.Context) (bool, error) {
		_, err := pods.Get(ctx, "web", metav1.GetOptions{})
		return apierrors.IsNotFound(err), nil
	})
}

func intstrFromInt(i int) intstr.IntOrString { return intstr.FromInt32(int32(i)) }

// kube's taint eviction controller runs: a NoExecute taint evicts the
// pods that do not tolerate it, and only those.
func TestWorkloadsNoExecuteTaintEvicts(t *testing.T) {
	_, cs := startWorkloads(t, 1)
	ctx := context.Background()
	pods := cs.CoreV1().Pods("default")
	tolerant := boundPod("tolerant", func(p *corev1.Pod) {
		p.Spec.Tolerations = []corev1.Toleration{{Key: "maintenance", Operator: corev1.TolerationOpExists, Effect: corev1.TaintEffectNoExecute}}
	})
	for _, p := range []*corev1.Pod{boundPod("intolerant", nil), tolerant} {
		if _, err := pods.Create(ctx, p, metav1.CreateOptions{}); err != nil {
			t.Fatal(err)
		}
		waitPod(t, cs, "default", p.Name, "Running", func(p *corev1.Pod) bool { return p.Status.Phase == corev1.PodRunning })
	}
	node, err := cs.CoreV1().Nodes().Get(ctx, workloads.NodeName(1), metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	node.Spec.Taints = append(node.Spec.Taints, corev1.Taint{Key: "maintenance", Value: "now", Effect: corev1.TaintEffectNoExecute})
	if _, err := cs.CoreV1().Nodes().Update(ctx, node, metav1.UpdateOptions{}); err != nil {
		t.Fatalf("tainting the node: %v", err)
	}
	waitFor(t, 10*time.Second, "the intolerant pod evicted", func(ctx context.Context) (bool, error) {
		_, err := pods.Get(ctx, "intolerant", metav1.GetOptions{})
		return apierrors.IsNotFound(err), nil
	})
	if p, err := pods.Get(ctx, "tolerant", metav1.GetOptions{}); err != nil || p.DeletionTimestamp != nil {
		t.Errorf("the tolerant pod: %v %v", err, p)
	}
	events, err := cs.CoreV1().Events("default").List(ctx, metav1.ListOptions{FieldSelector: "involvedObject.name=intolerant,reason=TaintManagerEviction"})
	if err != nil || len(events.Items) == 0 {
		t.Errorf("no TaintManagerEviction event: %v", err)
	}
}

// A claim a pod uses, and its bound volume, wait for it to stop before
// they go: StorageObjectInUseProtection's finalizers, taken off by kube's
// pvc- and pv-protection controllers.
func TestWorkloadsStorageInUseProtection(t *testing.T) {
	_, cs := startWorkloads(t, 1)
	ctx := context.Background()
	claims := cs.CoreV1().PersistentVolumeClaims("default")
	created, err := claims.Create(ctx, &corev1.PersistentVolumeClaim{ObjectMeta: metav1.ObjectMeta{Name: "data"},
		Spec: corev1.PersistentVolumeClaimSpec{AccessModes: []corev1.PersistentVolumeAccessMode{corev1.ReadWriteOnce},
			Resources: corev1.VolumeResourceRequirements{Requests: corev1.ResourceList{corev1.ResourceStorage: resource.MustParse("1Gi")}}}}, metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	// Admission puts the finalizer on at once (the controller would too,
	// a moment later: a pod could start using the claim in between).
	if !slices.Contains(created.Finalizers, "kubernetes.io/pvc-protection") {
		t.Errorf("created claim's finalizers: %v", created.Finalizers)
	}
	user := boundPod("user", func(p *corev1.Pod) {
		p.Spec.Volumes = []corev1.Volume{{Name: "d", VolumeSource: corev1.VolumeSource{PersistentVolumeClaim: &corev1.PersistentVolumeClaimVolumeSource{ClaimName: "data"}}}}
	})
	if _, err := cs.CoreV1().Pods("default").Create(ctx, user, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	var claim *corev1.PersistentVolumeClaim
	waitFor(t, 10*time.Second, "the claim bound", func(ctx context.Context) (bool, error) {
		var err error
		claim, err = claims.Get(ctx, "data", metav1.GetOptions{})
		return err == nil && claim.Status.Phase == corev1.ClaimBound, err
	})
	volume, err := cs.CoreV1().PersistentVolumes().Get(ctx, claim.Spec.VolumeName, metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Contains(claim.Finalizers, "kubernetes.io/pvc-protection") || !slices.Contains(volume.Finalizers, "kubernetes.io/pv-protection") {
		t.Errorf("finalizers: claim %v, volume %v", claim.Finalizers, volume.Finalizers)
	}
	waitPod(t, cs, "default", "user", "Running", func(p *corev1.Pod) bool { return p.Status.Phase == corev1.PodRunning })
	if err := claims.Delete(ctx, "data", metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	// While the pod runs, the claim waits (and so does its volume).
	time.Sleep(time.Second)
	if c, err := claims.Get(ctx, "data", metav1.GetOptions{}); err != nil || c.DeletionTimestamp == nil {
		t.Fatalf("a claim in use: %v %v", err, c)
	}
	if err := cs.CoreV1().Pods("default").Delete(ctx, "user", metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	waitFor(t, 15*time.Second, "the claim and its volume gone", func(ctx context.Context) (bool, error) {
		_, errClaim := claims.Get(ctx, "data", metav1.GetOptions{})
		_, errVolume := cs.CoreV1().PersistentVolumes().Get(ctx, volume.Name, metav1.GetOptions{})
		return apierrors.IsNotFound(errClaim) && apierrors.IsNotFound(errVolume), nil
	})
}

// kube's ephemeral volume controller runs: a pod's generic ephemeral
// volume becomes a claim the pod owns (so the pod schedules and runs),
// and goes with the pod.
func TestWorkloadsEphemeralVolumes(t *testing.T) {
	_, cs := startWorkloads(t, 1)
	ctx := context.Background()
	pod := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: "eph"}, Spec: corev1.PodSpec{
		Containers: []corev1.Container{{Name: "c", Image: "nginx"}},
		Volumes: []corev1.Volume{{Name: "scratch", VolumeSource: corev1.VolumeSource{Ephemeral: &corev1.EphemeralVolumeSource{
			VolumeClaimTemplate: &corev1.PersistentVolumeClaimTemplate{Spec: corev1.PersistentVolumeClaimSpec{
				AccessModes: []corev1.PersistentVolumeAccessMode{corev1.ReadWriteOnce},
				Resources:   corev1.VolumeResourceRequirements{Requests: corev1.ResourceList{corev1.ResourceStorage: resource.MustParse("1Gi")}}}}}}}},
	}}
	created, err := cs.CoreV1().Pods("default").Create(ctx, pod, metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	waitPod(t, cs, "default", "eph", "Running", func(p *corev1.Pod) bool { return p.Status.Phase == corev1.PodRunning })
	claim, err := cs.CoreV1().PersistentVolumeClaims("default").Get(ctx, "eph-scratch", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if owner := metav1.GetControllerOf(claim); owner == nil || owner.UID != created.UID || claim.Status.Phase != corev1.ClaimBound {
		t.Errorf("claim owner %v, phase %s", owner, claim.Status.Phase)
	}
	if err := cs.CoreV1().Pods("default").Delete(ctx, "eph", metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	waitFor(t, 15*time.Second, "the pod's claim gone with it", func(ctx context.Context) (bool, error) {
		_, err := cs.CoreV1().PersistentVolumeClaims("default").Get(ctx, "eph-scratch", metav1.GetOptions{})
		return apierrors.IsNotFound(err), nil
	})
}
