package controlplane_test

// kube's own kube-scheduler and kube-controller-manager, built from
// k8s.io/kubernetes at our Kubernetes version (`task kube-components`),
// run against a devplane as they would against kube-apiserver. Opt-in: the
// test skips when the binaries are not there.

import (
	"bufio"
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"testing"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	discoveryv1 "k8s.io/api/discovery/v1"
	policyv1 "k8s.io/api/policy/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/intstr"
	"k8s.io/client-go/tools/clientcmd"

	"github.com/devplane/devplane/apiserver/controlplane/controlplanetest"
	"github.com/devplane/devplane/certs"
)

// kubeComponentsDir is where `task kube-components` (and the reference
// peer's build) put kube's binaries; DEVPLANE_KUBE_BIN overrides it.
func kubeComponentsDir() string {
	if d := os.Getenv("DEVPLANE_KUBE_BIN"); d != "" {
		return d
	}
	cache, err := os.UserCacheDir()
	if err != nil {
		return ""
	}
	return filepath.Join(cache, "devplane-peer", "bin")
}

// component is one of kube's binaries running against devplane, its log
// kept for the assertions.
type component struct {
	name string
	mu   sync.Mutex
	log  []string
}

func (c *component) lines() []string {
	c.mu.Lock()
	defer c.mu.Unlock()
	return append([]string(nil), c.log...)
}

// startComponent runs bin with args until the test ends, collecting its
// stderr (klog).
func startComponent(t *testing.T, bin string, args ...string) *component {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	cmd := exec.CommandContext(ctx, bin, args...)
	cmd.WaitDelay = 5 * time.Second
	stderr, err := cmd.StderrPipe()
	if err != nil {
		t.Fatal(err)
	}
	cmd.Stdout = nil
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	c := &component{name: filepath.Base(bin)}
	done := make(chan struct{})
	go func() {
		defer close(done)
		sc := bufio.NewScanner(stderr)
		sc.Buffer(make([]byte, 64<<10), 1<<20)
		for sc.Scan() {
			c.mu.Lock()
			c.log = append(c.log, sc.Text())
			c.mu.Unlock()
		}
	}()
	t.Cleanup(func() {
		cancel()
		_ = cmd.Wait()
		<-done
		if t.Failed() {
			lines := c.lines()
			if len(lines) > 60 {
				lines = lines[len(lines)-60:]
			}
			t.Logf("%s log (last %d lines):\n%s", c.name, len(lines), strings.Join(lines, "\n"))
		}
	})
	return c
}

// notServed matches what client-go logs when an API it lists or watches
// answers 404.
var notServed = regexp.MustCompile(`the server could not find the requested resource|404 page not found|failed to list .*: .*not found`)

func TestKubeSchedulerAndControllerManager(t *testing.T) {
	dir := kubeComponentsDir()
	scheduler, kcm := filepath.Join(dir, "kube-scheduler"), filepath.Join(dir, "kube-controller-manager")
	for _, bin := range []string{scheduler, kcm} {
		if _, err := os.Stat(bin); err != nil {
			t.Skipf("kube's components are not built (%s missing): run `task kube-components` to build "+
				"kube-scheduler and kube-controller-manager from k8s.io/kubernetes into %s (about 10 minutes), "+
				"or point DEVPLANE_KUBE_BIN at a directory holding them", bin, dir)
		}
	}

	s := startControlPlane(t, "")
	kubeconfigFor := func(user string) string {
		cfg, err := s.cp.KubeconfigFor(user, nil)
		if err != nil {
			t.Fatal(err)
		}
		p := filepath.Join(t.TempDir(), strings.ReplaceAll(user, ":", "-")+".kubeconfig")
		if err := clientcmd.WriteToFile(*cfg, p); err != nil {
			t.Fatal(err)
		}
		return p
	}
	// Each under its own identity, so kube's bootstrap RBAC roles for them
	// are what authorizes their requests, as on a real cluster.
	schedKubeconfig := kubeconfigFor("system:kube-scheduler")
	kcmKubeconfig := kubeconfigFor("system:kube-controller-manager")
	saKey := s.cp.Certs.ServiceAccountKeyPath()

	sched := startComponent(t, scheduler, "--kubeconfig", schedKubeconfig,
		"--authentication-kubeconfig", schedKubeconfig, "--authorization-kubeconfig", schedKubeconfig,
		"--leader-elect=false", "--secure-port=0", "-v=2")
	ctrl := startComponent(t, kcm, "--kubeconfig", kcmKubeconfig,
		"--authentication-kubeconfig", kcmKubeconfig, "--authorization-kubeconfig", kcmKubeconfig,
		"--controllers=*", "--use-service-account-credentials=true",
		"--service-account-private-key-file", saKey, "--root-ca-file", filepath.Join(s.cp.Certs.Dir, certs.CACertFile),
		"--leader-elect=false", "--secure-port=0", "--node-monitor-grace-period=1h", "-v=2")

	cs := s.clientset(t, false)
	ctx := context.Background()
	ns := "kube-components"
	if _, err := cs.CoreV1().Namespaces().Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: ns}}, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}

	// A node that fits the pods; nothing runs them, so they stay Pending on
	// it: what is checked is the scheduler's binding.
	node := &corev1.Node{
		ObjectMeta: metav1.ObjectMeta{Name: "node-a", Labels: map[string]string{"kubernetes.io/hostname": "node-a", "kubernetes.io/os": "linux"}},
		Status: corev1.NodeStatus{
			Capacity:    corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("8"), corev1.ResourceMemory: resource.MustParse("16Gi"), corev1.ResourcePods: resource.MustParse("110")},
			Allocatable: corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("8"), corev1.ResourceMemory: resource.MustParse("16Gi"), corev1.ResourcePods: resource.MustParse("110")},
			Conditions:  []corev1.NodeCondition{{Type: corev1.NodeReady, Status: corev1.ConditionTrue, Reason: "KubeletReady", LastHeartbeatTime: metav1.Now(), LastTransitionTime: metav1.Now()}},
		},
	}
	created, err := cs.CoreV1().Nodes().Create(ctx, node, metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	node.Status.DeepCopyInto(&created.Status)
	if _, err := cs.CoreV1().Nodes().UpdateStatus(ctx, created, metav1.UpdateOptions{}); err != nil {
		t.Fatal(err)
	}

	labels := map[string]string{"app": "web"}
	replicas := int32(3)
	deploy := &appsv1.Deployment{
		ObjectMeta: metav1.ObjectMeta{Name: "web", Namespace: ns},
		Spec: appsv1.DeploymentSpec{
			Replicas: &replicas,
			Selector: &metav1.LabelSelector{MatchLabels: labels},
			Template: corev1.PodTemplateSpec{
				ObjectMeta: metav1.ObjectMeta{Labels: labels},
				Spec:       corev1.PodSpec{Containers: []corev1.Container{{Name: "nginx", Image: "nginx"}}},
			},
		},
	}
	if _, err := cs.AppsV1().Deployments(ns).Create(ctx, deploy, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	minAvailable := intstr.FromInt32(2)
	pdb := &policyv1.PodDisruptionBudget{
		ObjectMeta: metav1.ObjectMeta{Name: "web", Namespace: ns},
		Spec:       policyv1.PodDisruptionBudgetSpec{MinAvailable: &minAvailable, Selector: &metav1.LabelSelector{MatchLabels: labels}},
	}
	if _, err := cs.PolicyV1().PodDisruptionBudgets(ns).Create(ctx, pdb, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	svc := &corev1.Service{
		ObjectMeta: metav1.ObjectMeta{Name: "web", Namespace: ns},
		Spec:       corev1.ServiceSpec{Selector: labels, Ports: []corev1.ServicePort{{Port: 80, TargetPort: intstr.FromInt32(8080)}}},
	}
	if _, err := cs.CoreV1().Services(ns).Create(ctx, svc, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}

	// The deployment and replicaset controllers make three pods; the
	// scheduler binds each to the node (pods/binding).
	controlplanetest.Eventually(t, 90*time.Second, "the Deployment's 3 pods bound to node-a", func() (bool, string) {
		pods, err := cs.CoreV1().Pods(ns).List(ctx, metav1.ListOptions{LabelSelector: "app=web"})
		if err != nil {
			return false, err.Error()
		}
		bound := 0
		var states []string
		for _, p := range pods.Items {
			scheduled := ""
			for _, c := range p.Status.Conditions {
				if c.Type == corev1.PodScheduled {
					scheduled = string(c.Status)
				}
			}
			if p.Spec.NodeName == "node-a" && scheduled == "True" {
				bound++
			}
			states = append(states, fmt.Sprintf("%s node=%q scheduled=%q", p.Name, p.Spec.NodeName, scheduled))
		}
		return len(pods.Items) == 3 && bound == 3, strings.Join(states, "; ")
	})

	// The disruption controller computes the PDB's status from those pods
	// (none is running: no kubelet here, so none is healthy).
	controlplanetest.Eventually(t, 60*time.Second, "the PDB's status from the disruption controller", func() (bool, string) {
		got, err := cs.PolicyV1().PodDisruptionBudgets(ns).Get(ctx, "web", metav1.GetOptions{})
		if err != nil {
			return false, err.Error()
		}
		st := got.Status
		return st.ObservedGeneration == got.Generation && st.ExpectedPods == 3 && st.DesiredHealthy == 2 && st.DisruptionsAllowed == 0,
			fmt.Sprintf("%+v", st)
	})

	// The endpointslice controller writes the Service's slice.
	controlplanetest.Eventually(t, 60*time.Second, "the Service's EndpointSlice", func() (bool, string) {
		slices, err := cs.DiscoveryV1().EndpointSlices(ns).List(ctx, metav1.ListOptions{LabelSelector: discoveryv1.LabelServiceName + "=web"})
		if err != nil {
			return false, err.Error()
		}
		for _, sl := range slices.Items {
			if sl.Labels[discoveryv1.LabelManagedBy] == "endpointslice-controller.k8s.io" {
				return true, ""
			}
		}
		return false, fmt.Sprintf("%d slices", len(slices.Items))
	})

	// Neither component met an API devplane does not serve.
	for _, c := range []*component{sched, ctrl} {
		for _, l := range c.lines() {
			if notServed.MatchString(l) {
				t.Errorf("%s: %s", c.name, l)
			}
		}
	}
}
