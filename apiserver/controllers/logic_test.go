package controllers

import (
	"errors"
	"slices"
	"testing"
	"time"

	coordinationv1 "k8s.io/api/coordination/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
)

func condition(t *testing.T, status corev1.NamespaceStatus, ct corev1.NamespaceConditionType) corev1.NamespaceCondition {
	t.Helper()
	for _, c := range status.Conditions {
		if c.Type == ct {
			return c
		}
	}
	t.Fatalf("no condition %s in %+v", ct, status.Conditions)
	return corev1.NamespaceCondition{}
}

func TestDeletionReportConditionsAsKube(t *testing.T) {
	r := newDeletionReport()
	configmaps := schema.GroupVersionResource{Version: "v1", Resource: "configmaps"}
	deployments := schema.GroupVersionResource{Group: "apps", Version: "v1", Resource: "deployments"}
	r.add(configmaps, 1, map[string]int{"example.com/block": 1}, nil)
	r.add(deployments, 2, nil, nil)
	if r.done() {
		t.Fatal("a report with remaining content is not done")
	}
	var status corev1.NamespaceStatus
	if !r.apply(&status) {
		t.Fatal("first apply must change the status")
	}
	if len(status.Conditions) != 5 {
		t.Fatalf("want the 5 namespace deletion conditions, got %+v", status.Conditions)
	}
	remaining := condition(t, status, corev1.NamespaceContentRemaining)
	if remaining.Status != corev1.ConditionTrue || remaining.Reason != "SomeResourcesRemain" ||
		remaining.Message != "Some resources are remaining: configmaps. has 1 resource instances, deployments.apps has 2 resource instances" {
		t.Errorf("content remaining: %+v", remaining)
	}
	finalizers := condition(t, status, corev1.NamespaceFinalizersRemaining)
	if finalizers.Status != corev1.ConditionTrue || finalizers.Reason != "SomeFinalizersRemain" ||
		finalizers.Message != "Some content in the namespace has finalizers remaining: example.com/block in 1 resource instances" {
		t.Errorf("finalizers remaining: %+v", finalizers)
	}
	deleted := condition(t, status, corev1.NamespaceDeletionContentFailure)
	if deleted.Status != corev1.ConditionFalse || deleted.Reason != "ContentDeleted" {
		t.Errorf("content failure: %+v", deleted)
	}
	before := remaining.LastTransitionTime
	if r.apply(&status) {
		t.Error("applying the same report twice must not change the status")
	}

	// Next pass: all gone. Conditions flip to their ok form.
	time.Sleep(1100 * time.Millisecond) // metav1.Time has second precision
	if !newDeletionReport().apply(&status) {
		t.Fatal("a clean pass must change the status")
	}
	remaining = condition(t, status, corev1.NamespaceContentRemaining)
	if remaining.Status != corev1.ConditionFalse || remaining.Reason != "ContentRemoved" || remaining.Message != "All content successfully removed" {
		t.Errorf("content removed: %+v", remaining)
	}
	if !remaining.LastTransitionTime.After(before.Time) {
		t.Errorf("transition time not updated on status change: %v then %v", before, remaining.LastTransitionTime)
	}
	if f := condition(t, status, corev1.NamespaceFinalizersRemaining); f.Reason != "ContentHasNoFinalizers" {
		t.Errorf("finalizers: %+v", f)
	}
}

func TestDeletionReportFailures(t *testing.T) {
	r := newDeletionReport()
	r.discoveryFailed(errors.Join(errors.New("boom"), &groupVersionParseError{"a/b/c", errors.New("unexpected GroupVersion string")}))
	r.add(schema.GroupVersionResource{Version: "v1", Resource: "pods"}, 0, nil, errors.New("pods: forbidden"))
	if r.done() {
		t.Fatal("a failed pass is not done")
	}
	var status corev1.NamespaceStatus
	r.apply(&status)
	for ct, reason := range map[corev1.NamespaceConditionType]string{
		corev1.NamespaceDeletionDiscoveryFailure: "DiscoveryFailed",
		corev1.NamespaceDeletionGVParsingFailure: "GroupVersionParsingFailed",
		corev1.NamespaceDeletionContentFailure:   "ContentDeletionFailed",
	} {
		if c := condition(t, status, ct); c.Status != corev1.ConditionTrue || c.Reason != reason {
			t.Errorf("%s: %+v", ct, c)
		}
	}
	if c := condition(t, status, corev1.NamespaceDeletionContentFailure); c.Message != "Failed to delete all resource types, 1 remaining: pods: forbidden" {
		t.Errorf("content failure message: %q", c.Message)
	}
}

func object(uid, namespace string, owners ...metav1.OwnerReference) *objectNode {
	return newObjectNode(schema.GroupVersionResource{Version: "v1", Resource: "secrets"}, "Secret",
		&metav1.ObjectMeta{UID: types.UID(uid), Name: uid, Namespace: namespace, OwnerReferences: owners})
}

func ownedBy(uid string, block bool) metav1.OwnerReference {
	return metav1.OwnerReference{APIVersion: "v1", Kind: "ConfigMap", Name: uid, UID: types.UID(uid), BlockOwnerDeletion: &block}
}

func uids(nodes []*objectNode) []string {
	var out []string
	for _, n := range nodes {
		out = append(out, string(n.uid))
	}
	slices.Sort(out)
	return out
}

func TestDependencyGraphBookkeeping(t *testing.T) {
	g := newDependencyGraph()
	g.upsert(object("a", "ns", ownedBy("owner", true)))
	g.upsert(object("b", "ns", ownedBy("owner", false), ownedBy("other", false)))
	// The owner is not in the graph (yet): its dependents are still indexed.
	if got := uids(g.dependentsOf("owner")); !slices.Equal(got, []string{"a", "b"}) {
		t.Fatalf("dependents of owner: %v", got)
	}
	if got := uids(g.blockingDependents("owner")); !slices.Equal(got, []string{"a"}) {
		t.Fatalf("blocking dependents: %v", got)
	}
	// Dropping a reference on update unlinks it.
	g.upsert(object("b", "ns", ownedBy("other", false)))
	if got := uids(g.dependentsOf("owner")); !slices.Equal(got, []string{"a"}) {
		t.Fatalf("after update: %v", got)
	}
	if g.remove("a") == nil || g.remove("a") != nil {
		t.Fatal("remove returns the node once")
	}
	if got := g.dependentsOf("owner"); len(got) != 0 {
		t.Fatalf("after removal: %v", uids(got))
	}
	if len(g.dependents["owner"]) != 0 {
		t.Fatal("empty dependent sets must not linger")
	}
	if got := uids(g.withOwners()); !slices.Equal(got, []string{"b"}) {
		t.Fatalf("with owners: %v", got)
	}
}

func TestObjectNodeDeletionModes(t *testing.T) {
	now := metav1.Now()
	meta := &metav1.ObjectMeta{UID: "x", DeletionTimestamp: &now, Finalizers: []string{metav1.FinalizerDeleteDependents}}
	n := newObjectNode(schema.GroupVersionResource{Resource: "configmaps", Version: "v1"}, "ConfigMap", meta)
	if !n.deleting || !n.deletingDependents || n.orphaning {
		t.Errorf("foreground: %+v", n)
	}
	meta.Finalizers = []string{metav1.FinalizerOrphanDependents}
	n = newObjectNode(schema.GroupVersionResource{Resource: "configmaps", Version: "v1"}, "ConfigMap", meta)
	if !n.orphaning || n.deletingDependents {
		t.Errorf("orphan: %+v", n)
	}
	meta.DeletionTimestamp = nil
	n = newObjectNode(schema.GroupVersionResource{Resource: "configmaps", Version: "v1"}, "ConfigMap", meta)
	if n.orphaning || n.deleting {
		t.Errorf("finalizer without deletion is not orphaning yet: %+v", n)
	}
}

func TestLiveReplicaIPs(t *testing.T) {
	now := time.Now()
	lease := func(ip string, renewed time.Duration) coordinationv1.Lease {
		seconds := int32(10)
		renew := metav1.NewMicroTime(now.Add(-renewed))
		return coordinationv1.Lease{
			ObjectMeta: metav1.ObjectMeta{Annotations: map[string]string{AdvertiseAddressAnnotation: ip}},
			Spec:       coordinationv1.LeaseSpec{RenewTime: &renew, LeaseDurationSeconds: &seconds},
		}
	}
	got := liveReplicaIPs([]coordinationv1.Lease{
		lease("127.0.0.2", time.Second),
		lease("127.0.0.1", 9*time.Second),
		lease("127.0.0.3", 11*time.Second), // expired
		lease("127.0.0.1", 0),              // duplicate address
		lease("not-an-ip", 0),
	}, now)
	if !slices.Equal(got, []string{"127.0.0.1", "127.0.0.2"}) {
		t.Errorf("live replicas: %v", got)
	}
}

// The quota controller holds back a recount while a usage it did not write
// is fresh, as the worker sees it (not as the informer's handlers report
// it, which may run after the worker read the new status): admission
// charged a create whose object may not be in the cache yet.
func TestQuotaRecountWaitsForAdmissionsCharge(t *testing.T) {
	c := &QuotaController{usedSeen: map[string]seenUsage{}}
	q := &corev1.ResourceQuota{ObjectMeta: metav1.ObjectMeta{Name: "q", Namespace: "ns"},
		Status: corev1.ResourceQuotaStatus{Used: corev1.ResourceList{corev1.ResourcePods: resource.MustParse("0")}}}
	if wait := c.sinceAdmission([]any{q}); wait != 0 {
		t.Errorf("first sight waits %v", wait)
	}
	charged := q.DeepCopy()
	charged.Status.Used[corev1.ResourcePods] = resource.MustParse("1")
	if wait := c.sinceAdmission([]any{charged}); wait <= settle/2 || wait > settle {
		t.Errorf("usage charged by someone else: waits %v, want about %v", wait, settle)
	}
	if wait := c.sinceAdmission([]any{charged}); wait <= 0 {
		t.Errorf("seen again at once: waits %v", wait)
	}
	c.usedSeen["ns/q"] = seenUsage{used: charged.Status.Used, since: time.Now().Add(-settle)}
	if wait := c.sinceAdmission([]any{charged}); wait > 0 {
		t.Errorf("charge seen for settle: still waits %v", wait)
	}
	recounted := charged.DeepCopy()
	recounted.Status.Used[corev1.ResourcePods] = resource.MustParse("2")
	c.wrote(recounted)
	if wait := c.sinceAdmission([]any{recounted}); wait != 0 {
		t.Errorf("the controller's own write waits %v", wait)
	}
}
