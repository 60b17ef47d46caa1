// Observers: in-process followers of a cache, called with every change.

package storage

import (
	"maps"
	"reflect"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/watch"
)

// Observer sees a cache's objects in process, without a watch (a watch
// costs a goroutine and a buffer per resource; the garbage collector
// follows every resource). Replace gets every cached object, in key order,
// when the observer is added (once the cache has listed) and after each
// relist; Change each change after that (Added, Modified, Deleted). Both
// run with the cache locked, in order: they must be quick, must not call
// the cache and must not modify the objects.
type Observer struct {
	Replace func(objects []runtime.Object)
	Change  func(watch.Event)
}

// Observable storage can be followed by an Observer.
type Observable interface {
	// Observe adds o until the returned stop is called; false when this
	// storage cannot be observed after all.
	Observe(o *Observer) (stop func(), ok bool)
}

var _ Observable = (*Cacher)(nil)

// Observe implements Observable.
func (c *Cacher) Observe(o *Observer) (stop func(), ok bool) {
	c.mu.Lock()
	c.observers[o] = struct{}{}
	if c.synced {
		o.Replace(c.allObjectsLocked())
	}
	c.mu.Unlock()
	return func() {
		c.mu.Lock()
		delete(c.observers, o)
		c.mu.Unlock()
	}, true
}

func (c *Cacher) allObjectsLocked() []runtime.Object {
	all := make([]runtime.Object, len(c.keys))
	for i, k := range c.keys {
		all[i] = c.objects[k].obj
	}
	return all
}

// atRevision is obj as a watcher sees it at rev (its deletion): a copy
// sharing all but the resourceVersion with obj. Event objects are
// read-only, as cached ones are, and a deep copy of a large object (a
// CRD's schemas) for one field cost as much as decoding it.
func atRevision(obj runtime.Object, rev int64) runtime.Object {
	var out runtime.Object
	if u, ok := obj.(*unstructured.Unstructured); ok {
		content := maps.Clone(u.Object)
		if md, ok := content["metadata"].(map[string]any); ok {
			content["metadata"] = maps.Clone(md)
		}
		out = &unstructured.Unstructured{Object: content}
	} else if v := reflect.ValueOf(obj); v.Kind() == reflect.Pointer && v.Elem().Kind() == reflect.Struct {
		cp := reflect.New(v.Elem().Type())
		cp.Elem().Set(v.Elem())
		out, _ = cp.Interface().(runtime.Object)
	}
	if out == nil {
		out = obj.DeepCopyObject()
	}
	_ = setResourceVersion(out, rev)
	return out
}
