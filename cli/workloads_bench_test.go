package cli_test

import (
	"context"
	"fmt"
	"os/exec"
	"path/filepath"
	"testing"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/tools/clientcmd"
	"k8s.io/utils/ptr"
)

// BenchmarkWorkloads reports how fast workloads progress on the served
// binary: `kubectl rollout status` of a new 3-replica Deployment, from the
// create until it returns (target ≤ 1.5 s), and a 1,000-replica Deployment
// on 10 nodes from the create until all replicas are Available (target
// ≤ 20 s on 2 cores), with the RSS then (target ≤ 250 MB).
func BenchmarkWorkloads(b *testing.B) {
	if _, err := exec.LookPath("kubectl"); err != nil {
		b.Skip("kubectl not on PATH")
	}
	b.Run("rollout-3", func(b *testing.B) {
		dir := filepath.Join(b.TempDir(), "data")
		startReady(b, dir, func(int) {
			cs := benchClient(b, dir)
			waitNodesReady(b, cs, 1)
			var total time.Duration
			for i := range b.N {
				name := fmt.Sprintf("web-%d", i)
				start := time.Now()
				if _, err := cs.AppsV1().Deployments("default").Create(context.Background(), deployment(name, 3), metav1.CreateOptions{}); err != nil {
					b.Fatal(err)
				}
				out, err := exec.Command("kubectl", "--kubeconfig", filepath.Join(dir, "kubeconfig"), "rollout", "status", "deployment/"+name, "--timeout=60s").CombinedOutput()
				if err != nil {
					b.Fatalf("kubectl rollout status: %v\n%s", err, out)
				}
				total += time.Since(start)
			}
			b.ReportMetric(float64(total.Milliseconds())/float64(b.N), "ms-rollout")
		})
	})
	b.Run("deployment-1000", func(b *testing.B) {
		for i := range b.N {
			dir := filepath.Join(b.TempDir(), "data")
			startReady(b, dir, func(pid int) {
				cs := benchClient(b, dir)
				waitNodesReady(b, cs, 10)
				name := fmt.Sprintf("big-%d", i)
				start := time.Now()
				if _, err := cs.AppsV1().Deployments("default").Create(context.Background(), deployment(name, 1000), metav1.CreateOptions{}); err != nil {
					b.Fatal(err)
				}
				deadline := start.Add(3 * time.Minute)
				for {
					d, err := cs.AppsV1().Deployments("default").Get(context.Background(), name, metav1.GetOptions{})
					if err == nil && d.Status.AvailableReplicas == 1000 && d.Status.UpdatedReplicas == 1000 {
						break
					}
					if time.Now().After(deadline) {
						b.Fatalf("not available after 3 minutes: %+v", d.Status)
					}
					time.Sleep(50 * time.Millisecond)
				}
				b.ReportMetric(time.Since(start).Seconds(), "s-to-available")
				time.Sleep(time.Second)
				rssMB(pid).report(b, "")
			}, "--nodes", "10")
		}
	})
}

func benchClient(b *testing.B, dir string) kubernetes.Interface {
	b.Helper()
	cfg, err := clientcmd.BuildConfigFromFlags("", filepath.Join(dir, "kubeconfig"))
	if err != nil {
		b.Fatal(err)
	}
	cfg.QPS, cfg.Burst = -1, 0
	cs, err := kubernetes.NewForConfig(cfg)
	if err != nil {
		b.Fatal(err)
	}
	return cs
}

func waitNodesReady(b *testing.B, cs kubernetes.Interface, n int) {
	b.Helper()
	waitNodesReadyWithin(b, cs, n, time.Minute)
}

func deployment(name string, replicas int32) *appsv1.Deployment {
	labels := map[string]string{"app": name}
	return &appsv1.Deployment{
		ObjectMeta: metav1.ObjectMeta{Name: name},
		Spec: appsv1.DeploymentSpec{
			Replicas: ptr.To(replicas),
			Selector: &metav1.LabelSelector{MatchLabels: labels},
			Template: corev1.PodTemplateSpec{
				ObjectMeta: metav1.ObjectMeta{Labels: labels},
				Spec:       corev1.PodSpec{Containers: []corev1.Container{{Name: "web", Image: "nginx"}}},
			},
		},
	}
}
