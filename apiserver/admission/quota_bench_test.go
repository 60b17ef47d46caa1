package admission

import (
	"context"
	"strconv"
	"testing"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
)

// benchSource serves one quota (or LimitRange) from the "cache" and takes
// status writes as they come, bumping the resourceVersion.
type benchSource struct {
	quotaSource
	limits []runtime.Object
	rv     int
}

func (s *benchSource) List(ctx context.Context, gvr schema.GroupVersionResource, ns string, consistent bool) ([]runtime.Object, error) {
	if gvr == limitRangesGVR {
		return s.limits, nil
	}
	return s.quotaSource.List(ctx, gvr, ns, consistent)
}

func (s *benchSource) UpdateStatus(_ context.Context, _ schema.GroupVersionResource, obj runtime.Object) (runtime.Object, error) {
	s.rv++
	q := obj.(*corev1.ResourceQuota).DeepCopy()
	q.ResourceVersion = strconv.Itoa(s.rv + 1)
	s.cached = []runtime.Object{q}
	return q, nil
}

func benchPod() *corev1.Pod {
	return &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: "p", Namespace: "ns"}, Spec: corev1.PodSpec{Containers: []corev1.Container{{Name: "c",
		Resources: corev1.ResourceRequirements{Requests: corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("1m")}}}}}}
}

// BenchmarkAdmissionPodCreate is the CPU admission spends on one pod
// create under a quota (kube's evaluators and check, a status write to a
// fake store) and under a LimitRange (defaults and kube's checks).
func BenchmarkAdmissionPodCreate(b *testing.B) {
	ctx := context.Background()
	hard := corev1.ResourceList{"pods": resource.MustParse("1000000000"), "requests.cpu": resource.MustParse("1000000000")}
	q := &corev1.ResourceQuota{ObjectMeta: metav1.ObjectMeta{Name: "q", Namespace: "ns", ResourceVersion: "1"},
		Spec: corev1.ResourceQuotaSpec{Hard: hard}, Status: corev1.ResourceQuotaStatus{Hard: hard,
			Used: corev1.ResourceList{"pods": resource.MustParse("0"), "requests.cpu": resource.MustParse("0")}}}
	attrs := func() *Attributes {
		return &Attributes{Operation: Create, Resource: podsGVR, Kind: corev1.SchemeGroupVersion.WithKind("Pod"),
			Namespace: "ns", Name: "p", Object: benchPod()}
	}
	b.Run("quota", func(b *testing.B) {
		plugin := ResourceQuota(&benchSource{quotaSource: quotaSource{cached: []runtime.Object{q}}})
		b.ReportAllocs()
		for b.Loop() {
			if err := plugin.Validate(ctx, attrs()); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("limitrange", func(b *testing.B) {
		cpu := func(v string) corev1.ResourceList {
			return corev1.ResourceList{corev1.ResourceCPU: resource.MustParse(v)}
		}
		lr := &corev1.LimitRange{Spec: corev1.LimitRangeSpec{Limits: []corev1.LimitRangeItem{{Type: corev1.LimitTypeContainer,
			Max: cpu("2"), Default: cpu("500m"), DefaultRequest: cpu("100m")}}}}
		plugin := LimitRanger(&benchSource{limits: []runtime.Object{lr}})
		b.ReportAllocs()
		for b.Loop() {
			a := attrs()
			if err := plugin.Mutate(ctx, a); err != nil {
				b.Fatal(err)
			}
			if err := plugin.Validate(ctx, a); err != nil {
				b.Fatal(err)
			}
		}
	})
}
