package extensions

import (
	"testing"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
)

// A memo entry answers only for the very content map it was made from: an
// equal copy, or the object's next version, is a miss.
func TestServedMemoIsByIdentity(t *testing.T) {
	obj := func(rv string) *unstructured.Unstructured {
		u := &unstructured.Unstructured{Object: map[string]interface{}{}}
		u.SetNamespace("ns")
		u.SetName("a")
		u.SetResourceVersion(rv)
		return u
	}
	var m servedMemo
	cached := obj("1")
	served := obj("1")
	m.put(cached, served)

	shallow := *cached // what a cache-served list item is: the same map
	if got := m.get(&shallow); got == nil || got.served != served {
		t.Errorf("same content map: got %v, want the memoized object", got)
	}
	if got := m.get(cached.DeepCopy()); got != nil {
		t.Error("an equal copy hit the memo")
	}
	if got := m.get(obj("2")); got != nil {
		t.Error("the next version hit the memo")
	}
	m.forget(cached)
	if got := m.get(cached); got != nil {
		t.Error("a forgotten object hit the memo")
	}
}
