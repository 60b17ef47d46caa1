package storage

import (
	"reflect"
	"testing"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
)

// atRevision copies no more than the resourceVersion needs, and leaves
// the cached object as it was.
func TestAtRevisionLeavesTheCachedObjectAlone(t *testing.T) {
	typed := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "a", ResourceVersion: "5", Labels: map[string]string{"x": "y"}},
		Data: map[string]string{"k": "v"}}
	custom := &unstructured.Unstructured{Object: map[string]any{"apiVersion": "example.com/v1", "kind": "Thing",
		"metadata": map[string]any{"name": "a", "resourceVersion": "5"}, "spec": map[string]any{"k": "v"}}}
	for _, obj := range []runtime.Object{typed, custom} {
		before := obj.DeepCopyObject()
		got := atRevision(obj, 9)
		if !reflect.DeepEqual(obj, before) {
			t.Fatalf("%T: the original changed", obj)
		}
		acc := testMeta(t, got)
		if acc.GetResourceVersion() != "9" || acc.GetName() != "a" {
			t.Fatalf("%T: got name %q at %q, want a at 9", obj, acc.GetName(), acc.GetResourceVersion())
		}
		testMeta(t, got).SetResourceVersion("5")
		if !reflect.DeepEqual(got, before) {
			t.Fatalf("%T: the copy differs in more than its resourceVersion", obj)
		}
	}
}

func testMeta(t *testing.T, obj runtime.Object) metav1.Object {
	t.Helper()
	acc, err := meta.Accessor(obj)
	if err != nil {
		t.Fatal(err)
	}
	return acc
}
