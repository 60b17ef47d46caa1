package endpoints

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strconv"
	"strings"
	"testing"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/util/intstr"
	"sigs.k8s.io/yaml"

	"github.com/devplane/devplane/apiserver/builtin"
	"github.com/devplane/devplane/apiserver/printers"
	"github.com/devplane/devplane/apiserver/registry"
	"github.com/devplane/devplane/apiserver/registry/strategies"
	"github.com/devplane/devplane/apiserver/storage"
)

// A built-in kind's list written from each item's JSON is byte for byte
// what the JSON serializer writes: list metadata, HTML-escaped and
// non-ASCII strings, []byte, quantities, int-or-strings and times.
func TestWriteTypedJSONListMatchesSerializer(t *testing.T) {
	h := NewAPIHandler(registry.New(), Options{Scheme: builtin.Scheme, Codecs: builtin.Codecs}).(*handler)
	remaining := int64(7)
	cms := &corev1.ConfigMapList{ListMeta: metav1.ListMeta{ResourceVersion: "42", Continue: "token<&>", RemainingItemCount: &remaining}}
	for i := range 50 {
		cms.Items = append(cms.Items, corev1.ConfigMap{
			TypeMeta: metav1.TypeMeta{Kind: "ConfigMap", APIVersion: "v1"},
			ObjectMeta: metav1.ObjectMeta{Name: "cm-" + strconv.Itoa(i), Namespace: "ns", ResourceVersion: strconv.Itoa(100 + i),
				Labels: map[string]string{"i": strconv.Itoa(i)}, CreationTimestamp: metav1.Unix(1700000000, 0),
				ManagedFields: []metav1.ManagedFieldsEntry{{Manager: "m", Operation: metav1.ManagedFieldsOperationUpdate, APIVersion: "v1",
					FieldsType: "FieldsV1", FieldsV1: &metav1.FieldsV1{Raw: []byte(`{"f:data":{"f:k":{}}}`)}}}},
			Data:       map[string]string{"k": strings.Repeat("v", i), "html": "<a href='x'>&amp;</a>", "unicode": "żółw \u2028 \x01"},
			BinaryData: map[string][]byte{"bin": {0, 1, 2, 0xff}},
		})
	}
	replicas := int32(3)
	deployments := &appsv1.DeploymentList{Items: []appsv1.Deployment{{
		ObjectMeta: metav1.ObjectMeta{Name: "d", Namespace: "ns", DeletionTimestamp: &metav1.Time{Time: time.Unix(1700000001, 0)}},
		Spec: appsv1.DeploymentSpec{Replicas: &replicas, Selector: &metav1.LabelSelector{MatchLabels: map[string]string{"app": "d"}},
			Strategy: appsv1.DeploymentStrategy{RollingUpdate: &appsv1.RollingUpdateDeployment{MaxSurge: &intstr.IntOrString{Type: intstr.String, StrVal: "25%"}}},
			Template: corev1.PodTemplateSpec{Spec: corev1.PodSpec{Containers: []corev1.Container{{Name: "c", Image: "nginx",
				Resources: corev1.ResourceRequirements{Limits: corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("500m")}}}}}}},
	}}}
	services := &corev1.ServiceList{Items: []corev1.Service{{ObjectMeta: metav1.ObjectMeta{Name: "s"},
		Spec: corev1.ServiceSpec{Ports: []corev1.ServicePort{{Port: 80, TargetPort: intstr.FromInt32(8080)}}}}}}
	for name, tc := range map[string]struct {
		list runtime.Object
		gv   schema.GroupVersion
	}{
		"configmaps":  {cms, corev1.SchemeGroupVersion},
		"deployments": {deployments, appsv1.SchemeGroupVersion},
		"services":    {services, corev1.SchemeGroupVersion},
	} {
		t.Run(name, func(t *testing.T) {
			var want bytes.Buffer
			h.setKind(tc.list, tc.gv)
			if err := h.jsonInfo.Serializer.Encode(tc.list, &want); err != nil {
				t.Fatal(err)
			}
			var items [][]byte
			_ = meta.EachListItem(tc.list, func(item runtime.Object) error {
				b, err := json.Marshal(item)
				if err != nil {
					t.Fatal(err)
				}
				items = append(items, b)
				return nil
			})
			rec := httptest.NewRecorder()
			req := httptest.NewRequest("GET", "/api/v1/configmaps", nil)
			if !h.writeTypedJSONList(rec, req, 200, tc.list, tc.gv, items) {
				t.Fatal("writeTypedJSONList declined a built-in list")
			}
			if got := rec.Body.String(); got != want.String() {
				t.Fatalf("got  %s\nwant %s", got, want.String())
			}
			if ct := rec.Header().Get("Content-Type"); ct != runtime.ContentTypeJSON {
				t.Errorf("Content-Type %q", ct)
			}
			if n := meta.LenList(tc.list); n != len(items) {
				t.Errorf("the list has %d items after writing, want %d", n, len(items))
			}
			// Items that are not this list's are refused.
			if h.writeTypedJSONList(httptest.NewRecorder(), req, 200, tc.list, tc.gv, append(items, []byte("{}"))) {
				t.Error("accepted more items than the list has")
			}
		})
	}
	if h.writeTypedJSONList(httptest.NewRecorder(), httptest.NewRequest("GET", "/", nil), 200, &corev1.SecretList{}, corev1.SchemeGroupVersion, nil) {
		t.Error("took an empty list")
	}
}

// Lists of built-in kinds served by watch caches give the same response
// whether written from the cache's item JSON (JSON lists that recur) or
// encoded whole (the first JSON list after a quiet window, and every other
// form): selectors, pagination, resourceVersion, pretty, Table,
// PartialObjectMetadata, YAML, protobuf and gzip alike.
func TestJSONListFromCachedItemsMatches(t *testing.T) {
	const window = 150 * time.Millisecond
	reg := registry.New()
	cachers := map[string]*storage.Cacher{}
	for _, k := range builtin.Kinds() {
		if k.StoredAs != nil {
			continue
		}
		switch k.Resource {
		case "configmaps", "secrets", "services", "deployments", "namespaces":
		default:
			continue
		}
		cfg := registry.StorageConfig(k)
		cacher, err := storage.NewCacher(storage.NewStore(testEtcd.Client(), cfg), cfg, storage.CacherOptions{JSONListWindow: window})
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(cacher.Stop)
		cachers[k.Resource] = cacher
		reg.Add(registry.NewResourceFromBuiltin(k, cacher, strategies.For(k.GroupVersion.WithResource(k.Resource).GroupResource())))
	}
	srv := httptest.NewServer(NewAPIHandler(reg, Options{Scheme: builtin.Scheme, Codecs: builtin.Codecs,
		Tables: func(gr schema.GroupResource) registry.TableConvertor { return printers.For(gr) }}))
	t.Cleanup(srv.Close)

	// Written through the server without caches, the same etcd.
	cs := clientFor(t, "application/json")
	ns := newNamespace(t, cs)
	payload := strings.Repeat("p", 1500) // 100 ConfigMaps: gzipped when asked
	for i := range 100 {
		cm := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: fmt.Sprintf("cm-%03d", i), Labels: map[string]string{"even": strconv.FormatBool(i%2 == 0)}},
			Data: map[string]string{"payload": payload, "html": "<&>"}}
		if _, err := cs.CoreV1().ConfigMaps(ns).Create(ctx(t), cm, metav1.CreateOptions{}); err != nil {
			t.Fatal(err)
		}
	}
	for i := range 3 {
		if _, err := cs.CoreV1().Secrets(ns).Create(ctx(t), &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Name: fmt.Sprintf("s-%d", i)},
			Data: map[string][]byte{"k": {byte(i), 0xff}}}, metav1.CreateOptions{}); err != nil {
			t.Fatal(err)
		}
		if _, err := cs.CoreV1().Services(ns).Create(ctx(t), &corev1.Service{ObjectMeta: metav1.ObjectMeta{Name: fmt.Sprintf("svc-%d", i)},
			Spec: corev1.ServiceSpec{ClusterIP: "None", Ports: []corev1.ServicePort{{Port: 80, TargetPort: intstr.FromString("http")}}}}, metav1.CreateOptions{}); err != nil {
			t.Fatal(err)
		}
		replicas := int32(i)
		if _, err := cs.AppsV1().Deployments(ns).Create(ctx(t), &appsv1.Deployment{ObjectMeta: metav1.ObjectMeta{Name: fmt.Sprintf("d-%d", i)},
			Spec: appsv1.DeploymentSpec{Replicas: &replicas, Selector: &metav1.LabelSelector{MatchLabels: map[string]string{"app": "d"}},
				Template: corev1.PodTemplateSpec{ObjectMeta: metav1.ObjectMeta{Labels: map[string]string{"app": "d"}},
					Spec: corev1.PodSpec{Containers: []corev1.Container{{Name: "c", Image: "nginx"}}}}}}, metav1.CreateOptions{}); err != nil {
			t.Fatal(err)
		}
	}
	cmList, err := cs.CoreV1().ConfigMaps(ns).List(ctx(t), metav1.ListOptions{})
	if err != nil {
		t.Fatal(err)
	}
	rv := cmList.ResourceVersion
	page, err := cs.CoreV1().ConfigMaps(ns).List(ctx(t), metav1.ListOptions{Limit: 30})
	if err != nil || page.Continue == "" {
		t.Fatalf("first page: %v, continue %q", err, page.Continue)
	}

	get := func(path, accept, acceptEncoding string) (string, []byte) {
		t.Helper()
		req, err := http.NewRequest(http.MethodGet, srv.URL+path, nil)
		if err != nil {
			t.Fatal(err)
		}
		if accept != "" {
			req.Header.Set("Accept", accept)
		}
		req.Header.Set("Accept-Encoding", acceptEncoding) // set by hand: the transport leaves the body alone
		resp, err := srv.Client().Do(req)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		body, err := io.ReadAll(resp.Body)
		if err != nil {
			t.Fatal(err)
		}
		if resp.StatusCode != http.StatusOK {
			t.Fatalf("GET %s: %d %s", path, resp.StatusCode, body)
		}
		return fmt.Sprintf("%s %s", resp.Header.Get("Content-Type"), resp.Header.Get("Content-Encoding")), body
	}
	const (
		asTable = "application/json;as=Table;v=v1;g=meta.k8s.io"
		asPOM   = "application/json;as=PartialObjectMetadataList;v=v1;g=meta.k8s.io"
	)
	cmPath := "/api/v1/namespaces/" + ns + "/configmaps"
	for _, tc := range []struct {
		name, path, accept, encoding string
		fromItems                    string // the resource whose item JSON the warm lists use; "" none
	}{
		{"configmaps", cmPath, "", "identity", "configmaps"},
		{"configmaps, Accept JSON, gzip", cmPath, "application/json", "gzip", "configmaps"},
		{"configmaps, all namespaces", "/api/v1/configmaps", "application/json", "identity", "configmaps"},
		{"label selector", cmPath + "?labelSelector=even%3Dtrue", "", "identity", "configmaps"},
		{"field selector", cmPath + "?fieldSelector=" + url.QueryEscape("metadata.name=cm-007"), "", "identity", "configmaps"},
		{"selecting nothing", cmPath + "?labelSelector=even%3Dmaybe", "", "identity", ""},
		{"resourceVersion 0", cmPath + "?resourceVersion=0", "", "identity", "configmaps"},
		{"resourceVersion not older than", cmPath + "?resourceVersionMatch=NotOlderThan&resourceVersion=" + rv, "", "identity", "configmaps"},
		{"resourceVersion exact", cmPath + "?resourceVersionMatch=Exact&resourceVersion=" + rv, "", "identity", ""},
		{"first page", cmPath + "?limit=30", "", "identity", ""},
		{"next page", cmPath + "?limit=30&continue=" + url.QueryEscape(page.Continue), "", "identity", ""},
		{"pretty", cmPath + "?pretty=true", "", "identity", ""},
		{"not pretty", cmPath + "?pretty=false", "", "identity", "configmaps"},
		{"Table", cmPath, asTable, "identity", ""},
		{"PartialObjectMetadataList", cmPath, asPOM, "identity", ""},
		{"YAML", cmPath, "application/yaml", "identity", ""},
		{"protobuf", cmPath, "application/vnd.kubernetes.protobuf", "identity", ""},
		{"secrets", "/api/v1/namespaces/" + ns + "/secrets", "", "identity", "secrets"},
		{"services", "/api/v1/namespaces/" + ns + "/services", "", "identity", "services"},
		{"deployments", "/apis/apps/v1/namespaces/" + ns + "/deployments", "", "identity", "deployments"},
		{"namespaces", "/api/v1/namespaces", "", "identity", "namespaces"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			kept := func() (n int) {
				for _, c := range cachers {
					k, _ := c.KeptJSON()
					n += k
				}
				return n
			}
			// Quiet for the window: the JSON kept is dropped, and the next
			// JSON list is a first one.
			time.Sleep(window)
			for deadline := time.Now().Add(5 * time.Second); kept() > 0; time.Sleep(window / 10) {
				if time.Now().After(deadline) {
					t.Fatalf("%d objects keep their JSON after a quiet window", kept())
				}
			}
			headers, first := get(tc.path, tc.accept, tc.encoding)
			checkItemKinds(t, tc.accept, tc.encoding, first)
			for i := range 2 {
				h, again := get(tc.path, tc.accept, tc.encoding)
				if h != headers || !bytes.Equal(again, first) {
					t.Fatalf("list %d: %q, %d bytes; the first: %q, %d bytes\n%.400s\n%.400s", i+2, h, len(again), headers, len(first), again, first)
				}
			}
			if tc.encoding == "gzip" && !strings.HasSuffix(headers, "gzip") {
				t.Errorf("not gzipped: %q", headers)
			}
			if tc.fromItems != "" {
				if n, _ := cachers[tc.fromItems].KeptJSON(); n == 0 {
					t.Errorf("the lists after the first did not keep %s' item JSON", tc.fromItems)
				}
			} else if n := kept(); n > 0 {
				t.Errorf("%d objects keep their JSON after lists that do not use it", n)
			}
		})
	}
}

// checkItemKinds checks a list response's items as kube writes them: a
// built-in kind's items without apiVersion and kind, a
// PartialObjectMetadataList's and a Table's row objects with theirs.
func checkItemKinds(t *testing.T, accept, encoding string, body []byte) {
	t.Helper()
	if encoding == "gzip" || strings.Contains(accept, "protobuf") {
		return
	}
	if strings.Contains(accept, "yaml") {
		j, err := yaml.YAMLToJSON(body)
		if err != nil {
			t.Fatal(err)
		}
		body = j
	}
	var list struct {
		Kind  string
		Items []map[string]any
		Rows  []struct{ Object map[string]any }
	}
	if err := json.Unmarshal(body, &list); err != nil {
		t.Fatalf("%v: %.300s", err, body)
	}
	switch {
	case strings.Contains(accept, "as=Table"):
		for _, row := range list.Rows {
			if row.Object["kind"] != "PartialObjectMetadata" || row.Object["apiVersion"] != "meta.k8s.io/v1" {
				t.Fatalf("Table row object without its kind: %v", row.Object)
			}
		}
	case strings.Contains(accept, "as=PartialObjectMetadataList"):
		for _, item := range list.Items {
			if item["kind"] != "PartialObjectMetadata" || item["apiVersion"] != "meta.k8s.io/v1" {
				t.Fatalf("PartialObjectMetadataList item without its kind: %v", item)
			}
		}
	default:
		for _, item := range list.Items {
			if _, has := item["kind"]; has {
				t.Fatalf("%s item with a kind: %.200v", list.Kind, item)
			}
			if _, has := item["apiVersion"]; has {
				t.Fatalf("%s item with an apiVersion: %.200v", list.Kind, item)
			}
		}
	}
}
