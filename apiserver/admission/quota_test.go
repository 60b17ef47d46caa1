package admission

import (
	"context"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
)

// quotaSource serves quotas from a "cache" and from "etcd" separately, and
// counts consistent reads.
type quotaSource struct {
	cached, stored []runtime.Object
	consistent     int
}

func (s *quotaSource) Get(context.Context, schema.GroupVersionResource, string, string) (runtime.Object, error) {
	return nil, nil
}

func (s *quotaSource) List(_ context.Context, _ schema.GroupVersionResource, _ string, consistent bool) ([]runtime.Object, error) {
	if consistent {
		s.consistent++
		return s.stored, nil
	}
	return s.cached, nil
}

func (s *quotaSource) Resource(schema.GroupVersionKind) (schema.GroupVersionResource, bool, bool) {
	return schema.GroupVersionResource{}, false, false
}

func (s *quotaSource) UpdateStatus(_ context.Context, _ schema.GroupVersionResource, obj runtime.Object) (runtime.Object, error) {
	return obj, nil
}

func TestQuotaLookup(t *testing.T) {
	ctx := context.Background()
	quota := &corev1.ResourceQuota{ObjectMeta: metav1.ObjectMeta{Name: "q", Namespace: "ns"}}

	// A quota the cache has not seen yet is found by the live read.
	src := &quotaSource{stored: []runtime.Object{quota}}
	l := newQuotaLookup(src)
	if got, _ := l.quotas(ctx, "ns"); len(got) != 1 || src.consistent != 1 {
		t.Fatalf("quota only in etcd: got %d quotas after %d consistent reads", len(got), src.consistent)
	}

	// No quota anywhere: one live read, then trusted for the TTL.
	src = &quotaSource{}
	l = newQuotaLookup(src)
	for range 5 {
		if got, _ := l.quotas(ctx, "ns"); len(got) != 0 {
			t.Fatalf("found %d quotas in an empty namespace", len(got))
		}
	}
	if src.consistent != 1 {
		t.Errorf("%d consistent reads for 5 creates in a namespace without quotas, want 1", src.consistent)
	}
	// Another namespace has its own entry.
	l.quotas(ctx, "other")
	if src.consistent != 2 {
		t.Errorf("second namespace: %d consistent reads, want 2", src.consistent)
	}
	// Once the cache has a quota it is used at once, TTL or not.
	src.cached = []runtime.Object{quota}
	if got, _ := l.quotas(ctx, "ns"); len(got) != 1 {
		t.Errorf("quota in the cache not used: %d", len(got))
	}
	// After the TTL a namespace is read live again.
	src.cached = nil
	l.absent["ns"] = time.Now().Add(-time.Second)
	l.quotas(ctx, "ns")
	if src.consistent != 3 {
		t.Errorf("expired entry: %d consistent reads, want 3", src.consistent)
	}

	// A quota created through this server voids a remembered "none" at
	// once, and while its create is fresh no "none" is trusted or stored,
	// even if a live read ran before the create committed.
	l.quotas(ctx, "new") // remembered: none
	before := src.consistent
	l.quotaCreating("new")
	l.quotas(ctx, "new") // live read still finds none (not yet committed)
	src.stored = []runtime.Object{quota}
	if got, _ := l.quotas(ctx, "new"); len(got) != 1 {
		t.Errorf("quota committed after its create was admitted: found %d", len(got))
	}
	if src.consistent != before+2 {
		t.Errorf("%d consistent reads after a quota create, want 2", src.consistent-before)
	}
}

// A cached quota whose status does not show its limits yet (the quota
// controller's first write has not reached the cache) is read live:
// kube's CheckRequest limits by status.hard, so the cached copy would
// admit every create.
func TestQuotaStatusBehindIsReadLive(t *testing.T) {
	ctx := context.Background()
	hard := corev1.ResourceList{corev1.ResourcePods: resource.MustParse("2")}
	created := &corev1.ResourceQuota{ObjectMeta: metav1.ObjectMeta{Name: "q", Namespace: "ns", ResourceVersion: "10"},
		Spec: corev1.ResourceQuotaSpec{Hard: hard}}
	counted := created.DeepCopy()
	counted.ResourceVersion = "11"
	counted.Status = corev1.ResourceQuotaStatus{Hard: hard, Used: corev1.ResourceList{corev1.ResourcePods: resource.MustParse("2")}}
	src := &quotaSource{cached: []runtime.Object{created}, stored: []runtime.Object{counted}}
	pod := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: "p", Namespace: "ns"},
		Spec: corev1.PodSpec{Containers: []corev1.Container{{Name: "c", Image: "busybox"}}}}
	err := ResourceQuota(src).Validate(ctx, &Attributes{Object: pod, Kind: corev1.SchemeGroupVersion.WithKind("Pod"),
		Namespace: "ns", Name: "p", Resource: corev1.SchemeGroupVersion.WithResource("pods"), Operation: Create})
	if err == nil || !strings.Contains(err.Error(), "exceeded quota: q") {
		t.Errorf("create under a full quota whose cached status was behind: %v", err)
	}
	if src.consistent != 1 {
		t.Errorf("%d consistent reads, want 1", src.consistent)
	}
	// Once the cache shows the status, no live read.
	src.cached = []runtime.Object{counted}
	ResourceQuota(src).Validate(ctx, &Attributes{Object: pod, Kind: corev1.SchemeGroupVersion.WithKind("Pod"),
		Namespace: "ns", Name: "p", Resource: corev1.SchemeGroupVersion.WithResource("pods"), Operation: Create})
	if src.consistent != 1 {
		t.Errorf("%d consistent reads with the status cached, want 1", src.consistent)
	}
}
