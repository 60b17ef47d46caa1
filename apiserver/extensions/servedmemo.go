package extensions

import (
	"context"
	"encoding/json"
	"reflect"
	"sync"
	"sync/atomic"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
)

// servedMemo remembers the served form (pruned, defaulted, in the served
// version) of watch-cache objects, and its JSON once a list asked for it,
// so lists and watches pay for them once per object version rather than
// once per object per read. An entry is valid while the cache holds that
// very object: the cache never mutates an object, it replaces it, so the
// same content map means the same version. Served objects from here are
// shared between readers: read-only.
type servedMemo struct {
	mu      sync.Mutex
	entries map[string]*servedEntry // namespace/name
}

type servedEntry struct {
	// src is the cached object's content map. Holding it keeps its
	// address from being reused by another map while the entry exists.
	src    map[string]interface{}
	served *unstructured.Unstructured
	json   atomic.Pointer[[]byte]
}

// JSON is the served object as a list item: encoding/json of its content,
// as the unstructured list encoder writes each item.
func (e *servedEntry) JSON() ([]byte, error) {
	if p := e.json.Load(); p != nil {
		return *p, nil
	}
	b, err := json.Marshal(e.served.Object)
	if err != nil {
		return nil, err
	}
	e.json.Store(&b)
	return b, nil
}

// maxServedEntries bounds the memo; past it, it starts over.
const maxServedEntries = 100_000

func memoKey(u *unstructured.Unstructured) string { return u.GetNamespace() + "/" + u.GetName() }

func sameMap(a, b map[string]interface{}) bool {
	return reflect.ValueOf(a).UnsafePointer() == reflect.ValueOf(b).UnsafePointer()
}

func (m *servedMemo) get(u *unstructured.Unstructured) *servedEntry {
	m.mu.Lock()
	defer m.mu.Unlock()
	if e, ok := m.entries[memoKey(u)]; ok && u.Object != nil && sameMap(e.src, u.Object) {
		return e
	}
	return nil
}

func (m *servedMemo) put(u, served *unstructured.Unstructured) *servedEntry {
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.entries == nil || len(m.entries) >= maxServedEntries {
		m.entries = map[string]*servedEntry{}
	}
	e := &servedEntry{src: u.Object, served: served}
	m.entries[memoKey(u)] = e
	return e
}

func (m *servedMemo) forget(u *unstructured.Unstructured) {
	m.mu.Lock()
	defer m.mu.Unlock()
	delete(m.entries, memoKey(u))
}

// toServedShared is toServed for objects straight from the watch cache,
// through the memo; it also returns the memo entries (nil without the
// memo). Without a conversion webhook only: a webhook may answer
// differently from one call to the next.
func (s *versionStorage) toServedShared(ctx context.Context, objs []*unstructured.Unstructured) ([]*unstructured.Unstructured, []*servedEntry, error) {
	if !s.deterministic {
		out, err := s.toServed(ctx, objs)
		return out, nil, err
	}
	out := make([]*unstructured.Unstructured, len(objs))
	entries := make([]*servedEntry, len(objs))
	var misses []*unstructured.Unstructured
	var at []int
	for i, o := range objs {
		if e := s.memo.get(o); e != nil {
			out[i], entries[i] = e.served, e
			continue
		}
		misses = append(misses, o)
		at = append(at, i)
	}
	if len(misses) == 0 {
		return out, entries, nil
	}
	served, err := s.toServed(ctx, misses)
	if err != nil {
		return nil, nil, err
	}
	for j, i := range at {
		out[i] = served[j]
		entries[i] = s.memo.put(misses[j], served[j])
	}
	return out, entries, nil
}
