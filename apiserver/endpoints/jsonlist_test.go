package endpoints

import (
	"bytes"
	"encoding/json"
	"net/http/httptest"
	"strings"
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

// JSON is indented for people (curl, browsers, ?pretty=true) as kube does,
// compact for programs, and ?pretty=false wins over the user agent.
func TestPrettyPrint(t *testing.T) {
	for _, tc := range []struct {
		ua, query string
		pretty    bool
	}{
		{"curl/8.5.0", "", true},
		{"Wget/1.21", "", true},
		{"Mozilla/5.0 (X11)", "", true},
		{"kubectl/v1.32.0", "", false},
		{"kubectl/v1.32.0", "pretty=true", true},
		{"curl/8.5.0", "pretty=false", false},
		{"curl/8.5.0", "pretty=", true},
	} {
		req := httptest.NewRequest("GET", "/api/v1/namespaces?"+tc.query, nil)
		req.Header.Set("User-Agent", tc.ua)
		if got := prettyPrint(req); got != tc.pretty {
			t.Errorf("%q ?%s: pretty %v, want %v", tc.ua, tc.query, got, tc.pretty)
		}
	}
}

func TestPrettyJSONResponses(t *testing.T) {
	cs := clientFor(t, "application/json")
	ns := newNamespace(t, cs)
	get := func(ua, query string) string {
		t.Helper()
		req := httptest.NewRequest("GET", testServer.URL+"/api/v1/namespaces/"+ns+query, nil)
		req.RequestURI = ""
		req.Header.Set("User-Agent", ua)
		resp, err := testServer.Client().Do(req)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		var body bytes.Buffer
		_, _ = body.ReadFrom(resp.Body)
		return body.String()
	}
	if body := get("curl/8.5.0", ""); !strings.HasPrefix(body, "{\n  \"kind\": \"Namespace\"") {
		t.Errorf("curl got %.60q, want indented JSON", body)
	}
	if body := get("my-controller/1.0", ""); strings.Count(body, "\n") != 1 {
		t.Errorf("a program got %.60q, want compact JSON", body)
	}
	if body := get("curl/8.5.0", "/nope"); !strings.Contains(body, "\n  \"reason\": \"NotFound\"") {
		t.Errorf("curl's error: %.200q, want an indented Status", body)
	}
}
