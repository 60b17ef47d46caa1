package controlplane_test

import (
	"context"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// TestPodBinding is what a scheduler does: pods/binding and the bindings
// resource set spec.nodeName and PodScheduled, once.
func TestPodBinding(t *testing.T) {
	s := startControlPlane(t, "")
	cs := s.clientset(t, true)
	ctx := context.Background()
	ns := createNamespace(t, cs, "binding")
	pods := cs.CoreV1().Pods(ns)
	newPod := func(name string) {
		t.Helper()
		if _, err := pods.Create(ctx, &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: name},
			Spec: corev1.PodSpec{Containers: []corev1.Container{{Name: "c", Image: "nginx"}}}}, metav1.CreateOptions{}); err != nil {
			t.Fatal(err)
		}
	}
	newPod("a")
	err := pods.Bind(ctx, &corev1.Binding{ObjectMeta: metav1.ObjectMeta{Name: "a", Annotations: map[string]string{"scheduled-by": "test"}},
		Target: corev1.ObjectReference{Kind: "Node", Name: "node-1"}}, metav1.CreateOptions{})
	if err != nil {
		t.Fatalf("bind: %v", err)
	}
	got, err := pods.Get(ctx, "a", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	scheduled := false
	for _, c := range got.Status.Conditions {
		scheduled = scheduled || (c.Type == corev1.PodScheduled && c.Status == corev1.ConditionTrue && !c.LastTransitionTime.IsZero())
	}
	if got.Spec.NodeName != "node-1" || !scheduled || got.Annotations["scheduled-by"] != "test" {
		t.Errorf("bound pod: nodeName=%q conditions=%+v annotations=%v", got.Spec.NodeName, got.Status.Conditions, got.Annotations)
	}

	// Once bound, a pod stays where it is.
	err = pods.Bind(ctx, &corev1.Binding{ObjectMeta: metav1.ObjectMeta{Name: "a"}, Target: corev1.ObjectReference{Name: "node-2"}}, metav1.CreateOptions{})
	if !apierrors.IsConflict(err) || !strings.Contains(err.Error(), `pod a is already assigned to node "node-1"`) {
		t.Errorf("second bind: want 409 already assigned, got %v", err)
	}
	err = pods.Bind(ctx, &corev1.Binding{ObjectMeta: metav1.ObjectMeta{Name: "nope"}, Target: corev1.ObjectReference{Name: "node-1"}}, metav1.CreateOptions{})
	if !apierrors.IsNotFound(err) {
		t.Errorf("bind of a missing pod: want 404, got %v", err)
	}
	newPod("b")
	err = pods.Bind(ctx, &corev1.Binding{ObjectMeta: metav1.ObjectMeta{Name: "b"}}, metav1.CreateOptions{})
	if !apierrors.IsInvalid(err) || !strings.Contains(err.Error(), "target.name: Required value") {
		t.Errorf("bind without a target: want 422, got %v", err)
	}
	err = pods.Bind(ctx, &corev1.Binding{ObjectMeta: metav1.ObjectMeta{Name: "b", UID: "not-the-pods"}, Target: corev1.ObjectReference{Name: "node-1"}}, metav1.CreateOptions{})
	if !apierrors.IsConflict(err) || !strings.Contains(err.Error(), "Precondition failed: UID in precondition") {
		t.Errorf("bind with a stale UID: want 409, got %v", err)
	}

	// The older bindings resource: the Binding names the pod.
	var status metav1.Status
	err = cs.CoreV1().RESTClient().Post().Namespace(ns).Resource("bindings").
		Body(&corev1.Binding{ObjectMeta: metav1.ObjectMeta{Name: "b"}, Target: corev1.ObjectReference{Kind: "Node", Name: "node-2"}}).
		Do(ctx).Into(&status)
	if err != nil || status.Status != metav1.StatusSuccess {
		t.Fatalf("POST bindings: %v %+v", err, status)
	}
	if got, err := pods.Get(ctx, "b", metav1.GetOptions{}); err != nil || got.Spec.NodeName != "node-2" {
		t.Errorf("pod b after POST bindings: %v %q", err, got.Spec.NodeName)
	}

	// A pod being deleted cannot be bound.
	newPod("c")
	if _, err := pods.Patch(ctx, "c", "application/merge-patch+json", []byte(`{"metadata":{"finalizers":["example.com/hold"]}}`), metav1.PatchOptions{}); err != nil {
		t.Fatal(err)
	}
	if err := pods.Delete(ctx, "c", metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	err = pods.Bind(ctx, &corev1.Binding{ObjectMeta: metav1.ObjectMeta{Name: "c"}, Target: corev1.ObjectReference{Name: "node-1"}}, metav1.CreateOptions{})
	if !apierrors.IsConflict(err) || !strings.Contains(err.Error(), "is being deleted") {
		t.Errorf("bind of a deleting pod: want 409, got %v", err)
	}
	if _, err := pods.Patch(ctx, "c", "application/merge-patch+json", []byte(`{"metadata":{"finalizers":null}}`), metav1.PatchOptions{}); err != nil {
		t.Fatal(err)
	}
}
