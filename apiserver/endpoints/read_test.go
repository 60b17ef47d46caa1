package endpoints

import (
	"bytes"
	"compress/gzip"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/watch"
	"k8s.io/client-go/discovery"
	"k8s.io/client-go/informers"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/cache"
	"k8s.io/client-go/tools/pager"
)

func TestWatchAndInformer(t *testing.T) {
	for _, ct := range contentTypes {
		t.Run(ct, func(t *testing.T) {
			cs := clientFor(t, ct)
			ns := newNamespace(t, cs)
			cms := cs.CoreV1().ConfigMaps(ns)
			w, err := cms.Watch(ctx(t), metav1.ListOptions{})
			if err != nil {
				t.Fatal(err)
			}
			defer w.Stop()
			factory := informers.NewSharedInformerFactoryWithOptions(cs, 0, informers.WithNamespace(ns))
			informer := factory.Core().V1().ConfigMaps().Informer()
			stop := make(chan struct{})
			defer close(stop)
			factory.Start(stop)

			cm, err := cms.Create(ctx(t), &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "w"}}, metav1.CreateOptions{})
			if err != nil {
				t.Fatal(err)
			}
			cm.Data = map[string]string{"a": "b"}
			if _, err := cms.Update(ctx(t), cm, metav1.UpdateOptions{}); err != nil {
				t.Fatal(err)
			}
			if err := cms.Delete(ctx(t), "w", metav1.DeleteOptions{}); err != nil {
				t.Fatal(err)
			}
			var got []watch.EventType
			timeout := time.After(10 * time.Second)
			for len(got) < 3 {
				select {
				case ev := <-w.ResultChan():
					if _, ok := ev.Object.(*corev1.ConfigMap); !ok {
						t.Fatalf("event object %T", ev.Object)
					}
					got = append(got, ev.Type)
				case <-timeout:
					t.Fatalf("events so far: %v", got)
				}
			}
			if got[0] != watch.Added || got[1] != watch.Modified || got[2] != watch.Deleted {
				t.Fatalf("events %v", got)
			}
			syncCtx := ctx(t)
			if !cache.WaitForCacheSync(syncCtx.Done(), informer.HasSynced) {
				t.Fatal("informer did not sync")
			}
		})
	}
}

func TestWatchTimeoutEndsStream(t *testing.T) {
	cs := clientFor(t, "application/json")
	ns := newNamespace(t, cs)
	start := time.Now()
	resp, err := http.Get(testServer.URL + "/api/v1/namespaces/" + ns + "/configmaps?watch=true&timeoutSeconds=1")
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	if _, err := io.Copy(io.Discard, resp.Body); err != nil {
		t.Fatalf("stream did not end cleanly: %v", err)
	}
	if d := time.Since(start); d > 5*time.Second || resp.StatusCode != 200 {
		t.Fatalf("status %d after %v", resp.StatusCode, d)
	}
}

func TestPagination(t *testing.T) {
	cs := clientFor(t, "application/vnd.kubernetes.protobuf")
	ns := newNamespace(t, cs)
	for i := 0; i < 300; i++ {
		if _, err := cs.CoreV1().ConfigMaps(ns).Create(ctx(t), &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: fmt.Sprintf("cm-%03d", i)}}, metav1.CreateOptions{}); err != nil {
			t.Fatal(err)
		}
	}
	pages := 0
	p := pager.New(pager.SimplePageFunc(func(opts metav1.ListOptions) (runtime.Object, error) {
		pages++
		return cs.CoreV1().ConfigMaps(ns).List(ctx(t), opts)
	}))
	p.PageSize = 50
	list, _, err := p.List(ctx(t), metav1.ListOptions{})
	if err != nil {
		t.Fatal(err)
	}
	items, err := meta.ExtractList(list)
	if err != nil || len(items) != 300 || pages != 6 {
		t.Fatalf("got %d items in %d pages (%v)", len(items), pages, err)
	}
}

func do(t *testing.T, method, path, contentType, accept string, body []byte) (*http.Response, []byte) {
	t.Helper()
	req, err := http.NewRequest(method, testServer.URL+path, bytes.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	if contentType != "" {
		req.Header.Set("Content-Type", contentType)
	}
	if accept != "" {
		req.Header.Set("Accept", accept)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	data, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	return resp, data
}

func decodeStatus(t *testing.T, data []byte) metav1.Status {
	t.Helper()
	var st metav1.Status
	if err := json.Unmarshal(data, &st); err != nil || st.Kind != "Status" || st.APIVersion != "v1" {
		t.Fatalf("not a Status: %v %s", err, data)
	}
	return st
}

func TestErrorStatuses(t *testing.T) {
	cs := clientFor(t, "application/json")
	ns := newNamespace(t, cs)
	base := "/api/v1/namespaces/" + ns + "/configmaps"
	cases := []struct {
		name, method, path, body string
		code                     int
		message                  string
	}{
		{"too large", "POST", base, `{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"big"},"data":{"k":"` + strings.Repeat("x", 3<<20) + `"}}`, 413, "limit is"},
		{"malformed", "POST", base, `{"apiVersion":`, 400, "cannot be handled as a ConfigMap"},
		{"wrong kind", "POST", base, `{"apiVersion":"v1","kind":"Secret","metadata":{"name":"x"}}`, 400, "does not match the expected kind"},
		{"wrong version", "POST", base, `{"apiVersion":"apps/v1","kind":"ConfigMap","metadata":{"name":"x"}}`, 400, "does not match the expected API version"},
		{"namespace mismatch", "POST", base, `{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"x","namespace":"other"}}`, 400, "the namespace of the provided object does not match the namespace sent on the request"},
		{"no name", "POST", base, `{"apiVersion":"v1","kind":"ConfigMap","metadata":{}}`, 422, "metadata.name: Required value: name or generateName is required"},
		{"strict", "POST", base + "?fieldValidation=Strict", `{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"x"},"color":"red","data":{"a":"b"},"spec":{"foo":1}}`, 400, `strict decoding error: unknown field "color", unknown field "spec"`},
		{"unknown resource", "GET", "/api/v1/namespaces/" + ns + "/nosuchthings", "", 404, "the server could not find the requested resource"},
		{"missing object", "GET", base + "/nope", "", 404, `configmaps "nope" not found`},
		{"name mismatch", "PUT", base + "/a", `{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"b"}}`, 400, "does not match the name on the URL"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			resp, data := do(t, c.method, c.path, "application/json", "", []byte(c.body))
			if resp.StatusCode != c.code {
				t.Fatalf("code %d, want %d: %s", resp.StatusCode, c.code, data)
			}
			st := decodeStatus(t, data)
			if int(st.Code) != c.code || st.Status != metav1.StatusFailure || !strings.Contains(st.Message, c.message) {
				t.Fatalf("status %+v, want message containing %q", st, c.message)
			}
		})
	}

	resp, data := do(t, "POST", base, "application/json", "", []byte(`{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"warned"},"color":"red"}`))
	if resp.StatusCode != 201 || resp.Header.Get("Warning") != `299 - "unknown field \"color\""` {
		t.Fatalf("warn: %d %q %s", resp.StatusCode, resp.Header.Get("Warning"), data)
	}
	resp, data = do(t, "GET", base, "", "text/html", nil)
	if resp.StatusCode != 406 {
		t.Fatalf("want 406, got %d %s", resp.StatusCode, data)
	}
}

func TestTables(t *testing.T) {
	cs := clientFor(t, "application/json")
	ns := newNamespace(t, cs)
	if _, err := cs.CoreV1().ConfigMaps(ns).Create(ctx(t), &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "t"},
		Data: map[string]string{"a": "1", "b": "2"}}, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	accept := "application/json;as=Table;v=v1;g=meta.k8s.io,application/json"
	resp, data := do(t, "GET", "/api/v1/namespaces/"+ns+"/configmaps", "", accept, nil)
	var table metav1.Table
	if err := json.Unmarshal(data, &table); err != nil || resp.StatusCode != 200 {
		t.Fatalf("%d %v %s", resp.StatusCode, err, data)
	}
	var cols []string
	for _, c := range table.ColumnDefinitions {
		cols = append(cols, c.Name)
	}
	if table.Kind != "Table" || strings.Join(cols, ",") != "Name,Data,Age" || len(table.Rows) != 1 || table.ResourceVersion == "" {
		t.Fatalf("table %+v cols %v", table.TypeMeta, cols)
	}
	var pom metav1.PartialObjectMetadata
	if err := json.Unmarshal(table.Rows[0].Object.Raw, &pom); err != nil || pom.Kind != "PartialObjectMetadata" ||
		pom.APIVersion != "meta.k8s.io/v1" || pom.Name != "t" {
		t.Fatalf("row object: %v %s", err, table.Rows[0].Object.Raw)
	}

	_, data = do(t, "GET", "/api/v1/namespaces/"+ns+"/configmaps", "", "application/json;as=PartialObjectMetadataList;v=v1;g=meta.k8s.io", nil)
	var pomList metav1.PartialObjectMetadataList
	if err := json.Unmarshal(data, &pomList); err != nil || pomList.Kind != "PartialObjectMetadataList" || len(pomList.Items) != 1 {
		t.Fatalf("PartialObjectMetadataList: %v %s", err, data)
	}
}

func TestDiscovery(t *testing.T) {
	for _, ct := range contentTypes {
		dc, err := discovery.NewDiscoveryClientForConfig(&rest.Config{Host: testServer.URL, ContentConfig: rest.ContentConfig{ContentType: ct}})
		if err != nil {
			t.Fatal(err)
		}
		groups, lists, err := dc.ServerGroupsAndResources()
		if err != nil {
			t.Fatal(err)
		}
		if len(groups) < 10 {
			t.Fatalf("only %d groups", len(groups))
		}
		found := map[string]metav1.APIResource{}
		for _, l := range lists {
			for _, r := range l.APIResources {
				found[l.GroupVersion+"/"+r.Name] = r
			}
		}
		if cm := found["v1/configmaps"]; len(cm.ShortNames) != 1 || cm.ShortNames[0] != "cm" || !cm.Namespaced {
			t.Fatalf("configmaps: %+v", cm)
		}
		if sc := found["apps/v1/deployments/scale"]; sc.Kind != "Scale" || sc.Group != "autoscaling" {
			t.Fatalf("deployments/scale: %+v", sc)
		}
	}
	// Legacy form, and the ETag round trip of the aggregated one.
	resp, data := do(t, "GET", "/apis/apps/v1", "", "", nil)
	var rl metav1.APIResourceList
	if err := json.Unmarshal(data, &rl); err != nil || resp.StatusCode != 200 || rl.GroupVersion != "apps/v1" {
		t.Fatalf("%d %v %s", resp.StatusCode, err, data)
	}
	resp, _ = do(t, "GET", "/apis", "", aggregatedContentType, nil)
	etag := resp.Header.Get("ETag")
	if resp.Header.Get("Content-Type") != aggregatedContentType || etag == "" {
		t.Fatalf("aggregated headers: %v", resp.Header)
	}
	req, _ := http.NewRequest("GET", testServer.URL+"/apis", nil)
	req.Header.Set("Accept", aggregatedContentType)
	req.Header.Set("If-None-Match", etag)
	resp2, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	resp2.Body.Close()
	if resp2.StatusCode != http.StatusNotModified {
		t.Fatalf("want 304, got %d", resp2.StatusCode)
	}
}

// FuzzCreateBody: whatever the body, the answer is a Status or a created
// object, never a panic or a 500.
func FuzzCreateBody(f *testing.F) {
	f.Add([]byte(`{"apiVersion":"v1","kind":"ConfigMap","metadata":{"generateName":"f-"}}`), uint8(0))
	f.Add([]byte("apiVersion: v1\nkind: ConfigMap\nmetadata:\n  generateName: f-\n"), uint8(1))
	f.Add([]byte("k8s\x00\x0a\x02v1"), uint8(2))
	types := []string{"application/json", "application/yaml", "application/vnd.kubernetes.protobuf"}
	f.Fuzz(func(t *testing.T, body []byte, which uint8) {
		resp, data := do(t, "POST", "/api/v1/namespaces/default/configmaps?dryRun=All", types[int(which)%len(types)], "application/json", body)
		if resp.StatusCode >= 500 {
			t.Fatalf("%d: %s", resp.StatusCode, data)
		}
		if resp.StatusCode >= 400 {
			decodeStatus(t, data)
		}
	})
}

// TestLargeResponsesAreGzipped: a client that accepts gzip gets large
// bodies compressed (and small ones not), as kube-apiserver does.
func TestLargeResponsesAreGzipped(t *testing.T) {
	cs := clientFor(t, "application/json")
	ns := newNamespace(t, cs)
	for i := range 200 {
		cm := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: fmt.Sprintf("cm-%03d", i)},
			Data: map[string]string{"payload": strings.Repeat("x", 1024)}}
		if _, err := cs.CoreV1().ConfigMaps(ns).Create(ctx(t), cm, metav1.CreateOptions{}); err != nil {
			t.Fatal(err)
		}
	}
	get := func(path, acceptEncoding string) (*http.Response, []byte) {
		req, err := http.NewRequest(http.MethodGet, testServer.URL+path, nil)
		if err != nil {
			t.Fatal(err)
		}
		req.Header.Set("Accept-Encoding", acceptEncoding) // set by hand: the transport then leaves the body alone
		resp, err := testServer.Client().Do(req)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		body, err := io.ReadAll(resp.Body)
		if err != nil {
			t.Fatal(err)
		}
		return resp, body
	}
	list := "/api/v1/namespaces/" + ns + "/configmaps"
	resp, body := get(list, "gzip")
	if resp.Header.Get("Content-Encoding") != "gzip" {
		t.Fatalf("a %d-byte list was not compressed: headers %v", len(body), resp.Header)
	}
	zr, err := gzip.NewReader(bytes.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	plain, err := io.ReadAll(zr)
	if err != nil || !bytes.Contains(plain, []byte(`"cm-199"`)) || len(plain) <= len(body) {
		t.Fatalf("compressed list did not decode to the list (%d → %d bytes): %v", len(body), len(plain), err)
	}
	if resp, _ := get(list, "identity"); resp.Header.Get("Content-Encoding") != "" {
		t.Errorf("compressed although the client did not accept gzip")
	}
	if resp, _ := get(list+"/cm-000", "gzip"); resp.Header.Get("Content-Encoding") != "" {
		t.Errorf("a small object was compressed")
	}
}

// Events queued together go out in gathered writes; one larger than a
// write goes alone, after those before it: a watch replaying small and
// large events from a resourceVersion gets them all, whole and in order.
func TestWatchWritesLargeAndSmallEventsInOrder(t *testing.T) {
	for _, ct := range contentTypes {
		t.Run(ct, func(t *testing.T) {
			cs := clientFor(t, ct)
			ns := newNamespace(t, cs)
			cms := cs.CoreV1().ConfigMaps(ns)
			list, err := cms.List(ctx(t), metav1.ListOptions{})
			if err != nil {
				t.Fatal(err)
			}
			size := func(i int) int {
				if i%3 == 1 {
					return 40 << 10 // beyond one gathered write
				}
				return 100
			}
			const n = 30
			for i := range n {
				cm := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: fmt.Sprintf("cm-%02d", i)},
					Data: map[string]string{"v": strings.Repeat("x", size(i))}}
				if _, err := cms.Create(ctx(t), cm, metav1.CreateOptions{}); err != nil {
					t.Fatal(err)
				}
			}
			w, err := cms.Watch(ctx(t), metav1.ListOptions{ResourceVersion: list.ResourceVersion})
			if err != nil {
				t.Fatal(err)
			}
			defer w.Stop()
			timeout := time.After(10 * time.Second)
			for i := range n {
				select {
				case ev := <-w.ResultChan():
					cm, ok := ev.Object.(*corev1.ConfigMap)
					if !ok || ev.Type != watch.Added || cm.Name != fmt.Sprintf("cm-%02d", i) || len(cm.Data["v"]) != size(i) {
						t.Fatalf("event %d: %s %T, want ADDED cm-%02d with %d bytes", i, ev.Type, ev.Object, i, size(i))
					}
				case <-timeout:
					t.Fatalf("%d of %d events within 10s", i, n)
				}
			}
		})
	}
}
