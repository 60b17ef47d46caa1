package extensions

import (
	"context"
	"reflect"
	"sync"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
)

// servedMemo remembers the served form (pruned, defaulted, in the served
// version) of watch-cache objects, so lists and watches pay for it once per
// object version rather than once per object per read. An entry is valid
// while the cache holds that very object: the cache never mutates an
// object, it replaces it, so the same content map means the same version.
// Served objects from here are shared between readers: read-only.
type servedMemo struct {
	mu      sync.Mutex
	entries map[string]servedEntry // namespace/name
}

type servedEntry struct {
	// src is the cached object's content map. Holding it keeps its
	// address from being reused by another map while the entry exists.
	src    map[string]interface{}
	served *unstructured.Unstructured
}

// maxServedEntries bounds the memo; past it, it starts over.
const maxServedEntries = 100_000

func memoKey(u *unstructured.Unstructured) string { return u.GetNamespace() + "/" + u.GetName() }

func sameMap(a, b map[string]interface{}) bool {
	return reflect.ValueOf(a).UnsafePointer() == reflect.ValueOf(b).UnsafePointer()
}

func (m *servedMemo) get(u *unstructured.Unstructured) *unstructured.Unstructured {
	m.mu.Lock()
	defer m.mu.Unlock()
	if e, ok := m.entries[memoKey(u)]; ok && u.Object != nil && sameMap(e.src, u.Object) {
		return e.served
	}
	return nil
}

func (m *servedMemo) put(u, served *unstructured.Unstructured) {
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.entries == nil || len(m.entries) >= maxServedEntries {
		m.entries = map[string]servedEntry{}
	}
	m.entries[memoKey(u)] = servedEntry{src: u.Object, served: served}
}

func (m *servedMemo) forget(u *unstructured.Unstructured) {
	m.mu.Lock()
	defer m.mu.Unlock()
	delete(m.entries, memoKey(u))
}

// toServedShared is toServed for objects straight from the watch cache,
// through the memo. Without a conversion webhook only: a webhook may answer
// differently from one call to the next.
func (s *versionStorage) toServedShared(ctx context.Context, objs []*unstructured.Unstructured) ([]*unstructured.Unstructured, error) {
	if !s.deterministic {
		return s.toServed(ctx, objs)
	}
	out := make([]*unstructured.Unstructured, len(objs))
	var misses []*unstructured.Unstructured
	var at []int
	for i, o := range objs {
		if hit := s.memo.get(o); hit != nil {
			out[i] = hit
			continue
		}
		misses = append(misses, o)
		at = append(at, i)
	}
	if len(misses) == 0 {
		return out, nil
	}
	served, err := s.toServed(ctx, misses)
	if err != nil {
		return nil, err
	}
	for j, i := range at {
		out[i] = served[j]
		s.memo.put(misses[j], served[j])
	}
	return out, nil
}
