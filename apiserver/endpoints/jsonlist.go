package endpoints

import (
	"encoding/json"
	"net/http"
	"sort"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
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
