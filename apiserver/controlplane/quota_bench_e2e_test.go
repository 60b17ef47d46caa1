package controlplane_test

import (
	"context"
	"testing"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// BenchmarkPodCreateAdmission is what a pod create costs without quota or
// limits, under a quota (kube's evaluators, a status write per create),
// and under a LimitRange (defaults and kube's checks).
func BenchmarkPodCreateAdmission(b *testing.B) {
	ctx := context.Background()
	cs := startControlPlane(b, "").clientset(b, false)
	for _, setup := range []struct {
		name  string
		setup func(b *testing.B, ns string)
	}{
		{"plain", func(*testing.B, string) {}},
		{"quota", func(b *testing.B, ns string) {
			createQuota(b, cs, ns, &corev1.ResourceQuota{ObjectMeta: metav1.ObjectMeta{Name: "q"}, Spec: corev1.ResourceQuotaSpec{
				Hard: corev1.ResourceList{"pods": resource.MustParse("1000000"), "requests.cpu": resource.MustParse("1000000")}}})
		}},
		{"limitrange", func(b *testing.B, ns string) {
			if _, err := cs.CoreV1().LimitRanges(ns).Create(ctx, &corev1.LimitRange{ObjectMeta: metav1.ObjectMeta{Name: "l"},
				Spec: corev1.LimitRangeSpec{Limits: []corev1.LimitRangeItem{{Type: corev1.LimitTypeContainer,
					Max: cpu("2"), Default: cpu("500m"), DefaultRequest: cpu("100m")}}}}, metav1.CreateOptions{}); err != nil {
				b.Fatal(err)
			}
		}},
	} {
		ns := "bench-" + setup.name
		if _, err := cs.CoreV1().Namespaces().Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: ns}}, metav1.CreateOptions{}); err != nil {
			b.Fatal(err)
		}
		setup.setup(b, ns)
		b.Run(setup.name, func(b *testing.B) {
			for b.Loop() {
				pod := podWith("", cpu("1m"), nil)
				pod.GenerateName = "p-"
				if _, err := cs.CoreV1().Pods(ns).Create(ctx, pod, metav1.CreateOptions{}); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
