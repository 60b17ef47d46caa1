package endpoints

import (
	"bytes"
	"encoding/json"
	"net/http"
	"reflect"
	"sort"

	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
)

// writeJSONList writes an unstructured (custom resource) list as the JSON
// serializer would, byte for byte: the list's fields in key order with
// "items" among them, each item taken from items (its cached encoding). It
// reports false (nothing written) when it cannot.
func writeJSONList(w http.ResponseWriter, r *http.Request, code int, obj runtime.Object, items [][]byte) bool {
	list, ok := obj.(*unstructured.UnstructuredList)
	if !ok || len(items) != len(list.Items) {
		return false
	}
	keys := make([]string, 0, len(list.Object)+1)
	for k := range list.Object {
		if k != "items" {
			keys = append(keys, k)
		}
	}
	keys = append(keys, "items")
	sort.Strings(keys)
	size := 2
	for _, b := range items {
		size += len(b) + 1
	}
	buf := getBuffer()
	defer putBuffer(buf)
	buf.Grow(size + 256)
	out := buf.AvailableBuffer() // buf's memory, returned to the pool after writeBody
	out = append(out, '{')
	for i, k := range keys {
		if i > 0 {
			out = append(out, ',')
		}
		name, err := json.Marshal(k)
		if err != nil {
			return false
		}
		out = append(append(out, name...), ':')
		if k == "items" {
			out = append(out, '[')
			for j, b := range items {
				if j > 0 {
					out = append(out, ',')
				}
				out = append(out, b...)
			}
			out = append(out, ']')
			continue
		}
		value, err := json.Marshal(list.Object[k])
		if err != nil {
			return false
		}
		out = append(out, value...)
	}
	out = append(out, '}', '\n')
	writeBody(w, r, code, runtime.ContentTypeJSON, out)
	return true
}

// emptyItemsTail ends a typed list encoded without items: items is its
// last field.
var emptyItemsTail = []byte(`"items":[]}` + "\n")

// writeTypedJSONList writes a built-in kind's list as the JSON serializer
// would, byte for byte, with each item's JSON taken from items (the watch
// cache's, in list order): the list is encoded by the serializer with no
// items, and the items go between its brackets. It reports false (nothing
// written) when it cannot.
func (h *handler) writeTypedJSONList(w http.ResponseWriter, r *http.Request, code int, list runtime.Object, gv schema.GroupVersion, items [][]byte) bool {
	if _, typed := list.(metav1.ListMetaAccessor); !typed || len(items) == 0 {
		return false
	}
	if _, custom := list.(json.Marshaler); custom {
		return false
	}
	ptr, err := meta.GetItemsPtr(list)
	if err != nil {
		return false
	}
	slice := reflect.ValueOf(ptr).Elem()
	if slice.Kind() != reflect.Slice || slice.Len() != len(items) {
		return false
	}
	size := len(emptyItemsTail) + 256
	for _, b := range items {
		if b == nil {
			return false
		}
		size += len(b) + 1
	}
	h.setKind(list, gv)
	buf := getBuffer()
	defer putBuffer(buf)
	// The list without its items, as the serializer writes it.
	full := slice.Interface()
	slice.Set(reflect.MakeSlice(slice.Type(), 0, 0))
	err = h.jsonInfo.Serializer.Encode(list, buf)
	slice.Set(reflect.ValueOf(full))
	if err != nil || !bytes.HasSuffix(buf.Bytes(), emptyItemsTail) {
		return false
	}
	buf.Truncate(buf.Len() - len("]}\n"))
	buf.Grow(size)
	out := buf.Bytes() // buf's memory, returned to the pool after writeBody
	for i, b := range items {
		if i > 0 {
			out = append(out, ',')
		}
		out = append(out, b...)
	}
	out = append(out, "]}\n"...)
	writeBody(w, r, code, runtime.ContentTypeJSON, out)
	return true
}
