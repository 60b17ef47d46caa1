// What the cache keeps of each object: the object, its selector attributes
// and its encodings, each made once.

package storage

import (
	"context"
	"encoding/json"
	"maps"
	"reflect"
	"slices"
	"sync/atomic"

	"k8s.io/apimachinery/pkg/fields"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
)

// cachedObject is an object in the cache with its selector attributes
// computed once. obj is shared by every reader and never modified.
type cachedObject struct {
	obj    runtime.Object
	labels labels.Set // nil when the resource has no AttrFunc
	fields fieldValues
	// lease is the etcd lease obj was stored with (0: none), which an
	// update keeps.
	lease int64
	// proto is obj's protobuf message, made by the first protobuf list that
	// includes it (EncodedItems) and reused by every later one.
	proto atomic.Pointer[[]byte]
	// json is obj's JSON as encoding/json writes it, kept while JSON lists
	// of the resource recur (Cacher.jsonItems).
	json atomic.Pointer[[]byte]
}

// fieldValues is an object's selectable fields as the cache keeps them:
// the values in the order of names, a sorted slice that the resource's
// objects share while their field names stay the same. As a map per object
// (fields.Set), the fields of 10,000 pods and their 20,000 events cost the
// cache ~39 MB, about what the pods themselves took.
type fieldValues struct {
	names  []string
	values []string
}

var _ fields.Fields = (*fieldValues)(nil)

// Has implements fields.Fields.
func (f *fieldValues) Has(name string) bool {
	_, ok := slices.BinarySearch(f.names, name)
	return ok
}

// Get implements fields.Fields.
func (f *fieldValues) Get(name string) string {
	if i, ok := slices.BinarySearch(f.names, name); ok {
		return f.values[i]
	}
	return ""
}

// fieldNames hands out the sorted field names a resource's objects share.
type fieldNames struct {
	last atomic.Pointer[[]string]
}

// values returns set as fieldValues, with the names of the previous call
// when set has exactly those.
func (n *fieldNames) values(set fields.Set) fieldValues {
	names := n.last.Load()
	if names == nil || !hasExactly(set, *names) {
		sorted := slices.Sorted(maps.Keys(set))
		names = &sorted
		n.last.Store(names)
	}
	values := make([]string, len(*names))
	for i, name := range *names {
		values[i] = set[name]
	}
	return fieldValues{names: *names, values: values}
}

func hasExactly(set fields.Set, names []string) bool {
	if len(set) != len(names) {
		return false
	}
	for _, name := range names {
		if _, ok := set[name]; !ok {
			return false
		}
	}
	return true
}

// protoMarshaler is implemented by k8s.io/api's generated types.
type protoMarshaler interface{ Marshal() ([]byte, error) }

// protobuf returns the object's protobuf message (no envelope), made once
// per cached object; nil for objects without one (custom resources).
func (c *cachedObject) protobuf() []byte {
	if p := c.proto.Load(); p != nil {
		return *p
	}
	m, ok := c.obj.(protoMarshaler)
	if !ok {
		return nil
	}
	b, err := m.Marshal()
	if err != nil {
		return nil
	}
	c.proto.Store(&b)
	return b
}

// jsonEncoding returns the object's JSON (encoding/json's, as the JSON
// serializer writes it inside a list: without apiVersion and kind, as kube
// writes a built-in kind's list items), made once per cached object until
// dropJSON; nil for objects that are not built-in kinds.
func (c *cachedObject) jsonEncoding() []byte {
	if p := c.json.Load(); p != nil {
		return *p
	}
	if _, builtin := c.obj.(protoMarshaler); !builtin {
		return nil
	}
	b, err := json.Marshal(withoutKind(c.obj))
	if err != nil {
		return nil
	}
	c.json.Store(&b)
	return b
}

// withoutKind is obj, or a shallow copy of it with an empty TypeMeta when
// it has one (obj is shared: it is never written to).
func withoutKind(obj runtime.Object) runtime.Object {
	if obj.GetObjectKind().GroupVersionKind().Empty() {
		return obj
	}
	v := reflect.ValueOf(obj)
	if v.Kind() != reflect.Pointer || v.IsNil() || v.Elem().Kind() != reflect.Struct {
		return obj
	}
	cp := reflect.New(v.Elem().Type())
	cp.Elem().Set(v.Elem())
	out, ok := cp.Interface().(runtime.Object)
	if !ok {
		return obj
	}
	out.GetObjectKind().SetGroupVersionKind(schema.GroupVersionKind{})
	return out
}

// EncodedItems receives, from a list the watch cache serves, each item's
// protobuf message in list order: a protobuf list response copies them
// instead of marshalling every item again. Filled only when the cache
// served the list (Valid); entries are nil for items without one.
type EncodedItems struct {
	Valid bool
	Proto [][]byte
	// WantJSON asks for each item's JSON instead of its protobuf message:
	// for built-in kinds the cache's (only while JSON lists of the
	// resource recur, see CacherOptions.JSONListWindow), for custom
	// resources each served item's. JSON is nil when not available.
	WantJSON bool
	JSON     [][]byte
}

type encodedItemsKey struct{}

// EncodedItemsFrom is the slot WithEncodedItems put into ctx.
func EncodedItemsFrom(ctx context.Context) (*EncodedItems, bool) {
	items, ok := ctx.Value(encodedItemsKey{}).(*EncodedItems)
	return items, ok && items != nil
}

// WithEncodedItems asks the list made with ctx to fill items (nil: no
// list under ctx fills anything).
func WithEncodedItems(ctx context.Context, items *EncodedItems) context.Context {
	return context.WithValue(ctx, encodedItemsKey{}, items)
}
