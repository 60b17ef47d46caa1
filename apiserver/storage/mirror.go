package storage

import (
	"sort"
	"strings"
	"sync"

	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/watch"
)

// Mirror keeps a watch cache's objects at hand for a reader that lists a
// small resource on every request: admission lists its webhook and policy
// configurations and the namespace's quotas on every write, and building a
// list object from the cache each time was a twentieth of a write's CPU.
// The objects are the cache's own and must not be modified.
type Mirror struct {
	stop func()

	mu      sync.Mutex
	ready   bool
	objects map[string]runtime.Object // by mirrorKey
	sorted  []runtime.Object          // in key order; nil once stale
	keys    []string                  // sorted's keys
}

// NewMirror follows o; false when o cannot be observed.
func NewMirror(o Observable) (*Mirror, bool) {
	m := &Mirror{objects: map[string]runtime.Object{}}
	stop, ok := o.Observe(&Observer{Replace: m.replace, Change: m.change})
	if !ok {
		return nil, false
	}
	m.stop = stop
	return m, true
}

// Stop stops following the cache.
func (m *Mirror) Stop() { m.stop() }

// Objects returns the objects in namespace ("" for all) in the cache's
// (key) order, in a slice the caller may reorder; false until the cache
// has listed the resource.
func (m *Mirror) Objects(namespace string) ([]runtime.Object, bool) {
	m.mu.Lock()
	defer m.mu.Unlock()
	if !m.ready {
		return nil, false
	}
	if m.sorted == nil && len(m.objects) > 0 {
		m.keys = make([]string, 0, len(m.objects))
		for k := range m.objects {
			m.keys = append(m.keys, k)
		}
		sort.Strings(m.keys)
		m.sorted = make([]runtime.Object, len(m.keys))
		for i, k := range m.keys {
			m.sorted[i] = m.objects[k]
		}
	}
	var out []runtime.Object
	for i, obj := range m.sorted {
		if namespace == "" || namespaceOfKey(m.keys[i]) == namespace {
			out = append(out, obj)
		}
	}
	return out, true
}

// mirrorKey orders objects as the cache's keys do: namespace/name, or the
// name alone for cluster-scoped objects.
func mirrorKey(obj runtime.Object) (string, bool) {
	acc, err := meta.Accessor(obj)
	if err != nil {
		return "", false
	}
	if ns := acc.GetNamespace(); ns != "" {
		return ns + "/" + acc.GetName(), true
	}
	return acc.GetName(), true
}

func namespaceOfKey(key string) string {
	ns, _, namespaced := strings.Cut(key, "/")
	if !namespaced {
		return ""
	}
	return ns
}

// replace and change run with the cache locked: they only touch the map.
func (m *Mirror) replace(objects []runtime.Object) {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.objects = make(map[string]runtime.Object, len(objects))
	for _, obj := range objects {
		if key, ok := mirrorKey(obj); ok {
			m.objects[key] = obj
		}
	}
	m.sorted, m.keys, m.ready = nil, nil, true
}

func (m *Mirror) change(ev watch.Event) {
	key, ok := mirrorKey(ev.Object)
	if !ok {
		return
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	if ev.Type == watch.Deleted {
		delete(m.objects, key)
	} else {
		m.objects[key] = ev.Object
	}
	m.sorted, m.keys = nil, nil
}
