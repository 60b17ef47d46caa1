package endpoints

import (
	"bytes"
	"encoding/json"
	"net/http/httptest"
	"testing"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/serializer"
)

// A custom resource list written from each item's cached JSON is byte for
// byte what the JSON serializer writes, HTML-escaped characters included.
func TestWriteJSONListMatchesSerializer(t *testing.T) {
	info, ok := runtime.SerializerInfoForMediaType(serializer.NewCodecFactory(runtime.NewScheme()).WithoutConversion().SupportedMediaTypes(), runtime.ContentTypeJSON)
	if !ok {
		t.Fatal("no JSON serializer")
	}
	list := &unstructured.UnstructuredList{Object: map[string]interface{}{
		"apiVersion": "stable.example.com/v1", "kind": "CronTabList",
		"metadata": map[string]interface{}{"resourceVersion": "42", "continue": ""},
	}}
	for i, spec := range []map[string]interface{}{
		{"cronSpec": "* * * * *", "image": "nginx<&>", "replicas": int64(1)},
		{"nested": map[string]interface{}{"b": true, "a": []interface{}{1.5, "x", nil}}, "unicode": "żółw \u2028"},
		{},
	} {
		list.Items = append(list.Items, unstructured.Unstructured{Object: map[string]interface{}{
			"apiVersion": "stable.example.com/v1", "kind": "CronTab",
			"metadata": map[string]interface{}{"name": []string{"a", "b", "c"}[i], "namespace": "default"},
			"spec":     spec,
		}})
	}
	for name, l := range map[string]*unstructured.UnstructuredList{"items": list, "empty": {Object: list.Object}} {
		t.Run(name, func(t *testing.T) {
			var want bytes.Buffer
			if err := info.Serializer.Encode(l, &want); err != nil {
				t.Fatal(err)
			}
			items := make([][]byte, len(l.Items))
			for i := range l.Items {
				b, err := json.Marshal(l.Items[i].Object)
				if err != nil {
					t.Fatal(err)
				}
				items[i] = b
			}
			rec := httptest.NewRecorder()
			if !writeJSONList(rec, httptest.NewRequest("GET", "/apis/stable.example.com/v1/crontabs", nil), 200, l, items) {
				t.Fatal("writeJSONList declined an unstructured list")
			}
			if got := rec.Body.String(); got != want.String() {
				t.Errorf("got  %s\nwant %s", got, want.String())
			}
			if rec.Header().Get("Content-Type") != runtime.ContentTypeJSON {
				t.Errorf("Content-Type %q", rec.Header().Get("Content-Type"))
			}
			// Items that are not this list's are refused.
			if writeJSONList(httptest.NewRecorder(), httptest.NewRequest("GET", "/", nil), 200, l, append(items, []byte("{}"))) {
				t.Error("accepted more items than the list has")
			}
		})
	}
}
