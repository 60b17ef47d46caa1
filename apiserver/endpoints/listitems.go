package endpoints

import (
	"reflect"

	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
)

// clearItemKinds empties apiVersion and kind on each item of a typed
// (built-in kind's) list, as kube writes them: it encodes lists from its
// internal types, whose items carry no TypeMeta (only custom resources'
// items, unstructured, keep theirs). The items' structs are the list's own
// (shallow copies of the watch cache's objects, or decoded for this
// request); an item held by pointer is replaced with a shallow copy, so a
// cached object is never written to.
func clearItemKinds(list runtime.Object) {
	ptr, err := meta.GetItemsPtr(list)
	if err != nil {
		return
	}
	items := reflect.ValueOf(ptr).Elem()
	if items.Kind() != reflect.Slice {
		return
	}
	for i := 0; i < items.Len(); i++ {
		item := items.Index(i)
		switch {
		case item.Kind() == reflect.Struct && item.CanAddr():
			if obj, ok := item.Addr().Interface().(runtime.Object); ok && !obj.GetObjectKind().GroupVersionKind().Empty() {
				obj.GetObjectKind().SetGroupVersionKind(schema.GroupVersionKind{})
			}
		case item.Kind() == reflect.Pointer && !item.IsNil() && item.Elem().Kind() == reflect.Struct:
			obj, ok := item.Interface().(runtime.Object)
			if !ok || obj.GetObjectKind().GroupVersionKind().Empty() {
				continue
			}
			cp := reflect.New(item.Elem().Type())
			cp.Elem().Set(item.Elem())
			cp.Interface().(runtime.Object).GetObjectKind().SetGroupVersionKind(schema.GroupVersionKind{})
			item.Set(cp)
		}
	}
}
