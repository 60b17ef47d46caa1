package endpoints

import (
	"bufio"
	"encoding/json"
	"net/http"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// Lists of built-in kinds read from etcd (no watch cache here) write their
// items without apiVersion and kind, in every encoding, as kube does; a
// single object, a watch event, a Table row's object and a
// PartialObjectMetadataList's items keep theirs.
func TestBuiltinListItemsWithoutKind(t *testing.T) {
	cs := clientFor(t, "application/json")
	ns := newNamespace(t, cs)
	for _, name := range []string{"a", "b"} {
		if _, err := cs.CoreV1().ConfigMaps(ns).Create(ctx(t), &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: name, Labels: map[string]string{"l": "x"}}}, metav1.CreateOptions{}); err != nil {
			t.Fatal(err)
		}
	}
	path := "/api/v1/namespaces/" + ns + "/configmaps"
	for _, tc := range []struct{ name, path, accept string }{
		{"JSON", path, "application/json"},
		{"pretty", path + "?pretty=true", "application/json"},
		{"YAML", path, "application/yaml"},
		{"page", path + "?limit=1", "application/json"},
		{"Table", path, "application/json;as=Table;v=v1;g=meta.k8s.io"},
		{"PartialObjectMetadataList", path, "application/json;as=PartialObjectMetadataList;v=v1;g=meta.k8s.io"},
		{"namespaces", "/api/v1/namespaces", "application/json"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			resp, data := do(t, http.MethodGet, tc.path, "", tc.accept, nil)
			if resp.StatusCode != http.StatusOK {
				t.Fatalf("%d %s", resp.StatusCode, data)
			}
			if !strings.Contains(string(data), `"items"`) && !strings.Contains(string(data), "items:") && !strings.Contains(string(data), `"rows"`) {
				t.Fatalf("not a list: %.300s", data)
			}
			checkItemKinds(t, tc.accept, "", data)
		})
	}

	// Table rows with the whole object carry its kind.
	_, data := do(t, http.MethodGet, path+"?includeObject=Object", "", "application/json;as=Table;v=v1;g=meta.k8s.io", nil)
	var table metav1.Table
	if err := json.Unmarshal(data, &table); err != nil || len(table.Rows) != 2 {
		t.Fatalf("table: %v %.300s", err, data)
	}
	for _, row := range table.Rows {
		var obj metav1.TypeMeta
		if err := json.Unmarshal(row.Object.Raw, &obj); err != nil || obj.Kind != "ConfigMap" || obj.APIVersion != "v1" {
			t.Fatalf("Table row object: %v %s", err, row.Object.Raw)
		}
	}

	// A single object keeps its kind.
	_, data = do(t, http.MethodGet, path+"/a", "", "application/json", nil)
	var one metav1.TypeMeta
	if err := json.Unmarshal(data, &one); err != nil || one.Kind != "ConfigMap" || one.APIVersion != "v1" {
		t.Fatalf("get: %v %s", err, data)
	}

	// So do watch events' objects.
	req, err := http.NewRequest(http.MethodGet, testServer.URL+path+"?watch=true&timeoutSeconds=1", nil)
	if err != nil {
		t.Fatal(err)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	line, err := bufio.NewReader(resp.Body).ReadBytes('\n')
	if err != nil {
		t.Fatal(err)
	}
	var ev struct {
		Type   string
		Object metav1.TypeMeta
	}
	if err := json.Unmarshal(line, &ev); err != nil || ev.Type != "ADDED" || ev.Object.Kind != "ConfigMap" || ev.Object.APIVersion != "v1" {
		t.Fatalf("watch event: %v %s", err, line)
	}

	// A deletecollection answers with the list of what it deleted, items
	// without their kind.
	resp, data = do(t, http.MethodDelete, path+"?labelSelector=l%3Dx", "", "application/json", nil)
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("deletecollection: %d %s", resp.StatusCode, data)
	}
	var list struct {
		Kind  string
		Items []map[string]any
	}
	if err := json.Unmarshal(data, &list); err != nil || list.Kind != "ConfigMapList" || len(list.Items) != 2 {
		t.Fatalf("deletecollection: %v %.300s", err, data)
	}
	checkItemKinds(t, "application/json", "", data)
}
