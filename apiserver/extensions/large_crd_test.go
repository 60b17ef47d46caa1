package extensions_test

import (
	"context"
	"encoding/json"
	"strings"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/discovery"

	"github.com/devplane/devplane/apiserver/controlplane/controlplanetest"
)

var collectors = schema.GroupVersionResource{Group: largeCRDGroup, Version: "v1", Resource: "collectors"}

const collectorCR = `apiVersion: telemetry.example.io/v1
kind: Collector
metadata:
  name: edge
  namespace: default
spec:
  name: edge
  port: metrics
  limit: 500
  tlsConfig:
    scheme: https
    endpoints:
    - name: a
      relabelings:
      - name: keep
        ratio: 0.25
  resources:
    limits: {cpu: 500m, memory: 1Gi}
`

// TestLargeCRDWithKubectl puts a CRD of operator size (testdata/crds) through
// the three ways kubectl creates it.
func TestLargeCRDWithKubectl(t *testing.T) {
	d := start(t)
	manifest := mustRead(t, largeCRDPath)

	// Client-side apply stores the whole object in an annotation: too big,
	// refused with the message a real cluster prints, and nothing created.
	stderr := d.failKubectl(t, "", "apply", "-f", largeCRDPath)
	want := `The CustomResourceDefinition "` + largeCRDName + `" is invalid: metadata.annotations: Too long: may not be more than 262144 bytes`
	if !strings.Contains(stderr, want) {
		t.Errorf("client-side apply of the large CRD:\n%s\nwant %q", trimOutput(stderr), want)
	}
	if r := d.kubectl(t, "", "get", "crd", largeCRDName); r.Code == 0 {
		t.Errorf("a refused client-side apply created the CRD")
	}

	// Server-side apply keeps no annotation.
	d.mustKubectl(t, "", "apply", "--server-side", "-f", largeCRDPath)
	d.mustKubectl(t, "", "wait", "--for", "condition=established", "--timeout=30s", "crd/"+largeCRDName)
	requireV2ReadersAccept(t, d, "io.example.telemetry.v1.Collector")
	if got := d.mustKubectl(t, "", "get", "crd", largeCRDName, "-o", "jsonpath={.metadata.annotations}"); strings.Contains(got, "last-applied") {
		t.Errorf("server-side apply left a last-applied annotation")
	}
	// Re-applying unchanged is a no-op that still succeeds.
	if out := d.mustKubectl(t, "", "apply", "--server-side", "-f", largeCRDPath); !strings.Contains(out, "serverside-applied") {
		t.Errorf("re-apply: %s", out)
	}
	// Client-side apply onto the existing CRD fails the same way.
	stderr = d.failKubectl(t, "", "apply", "-f", largeCRDPath)
	if !strings.Contains(stderr, "metadata.annotations: Too long: may not be more than 262144 bytes") {
		t.Errorf("client-side apply over the server-side applied CRD:\n%s", trimOutput(stderr))
	}

	// Custom resources: defaults deep in the tree, the printer columns,
	// explain from the published OpenAPI.
	d.mustKubectl(t, collectorCR, "create", "-f", "-")
	if got := d.mustKubectl(t, "", "get", "collector", "edge", "-o",
		"jsonpath={.spec.interval} {.spec.tlsConfig.endpoints[0].relabelings[0].scheme} {.spec.tlsConfig.endpoints[0].relabelings[0].enabled}"); got != "30s http true" {
		t.Errorf("defaults of the large schema: %q", got)
	}
	if got := d.mustKubectl(t, "", "get", "coll", "-o", "wide"); !strings.Contains(got, "SCHEME") || !strings.Contains(got, "edge") || !strings.Contains(got, "30s") {
		t.Errorf("kubectl get -o wide:\n%s", got)
	}
	if got := d.mustKubectl(t, "", "get", "coll"); strings.Contains(got, "SCHEME") || !strings.Contains(got, "INTERVAL") {
		t.Errorf("a priority-1 column outside -o wide:\n%s", got)
	}
	bad := strings.Replace(strings.Replace(collectorCR, "ratio: 0.25", "ratio: 2", 1), "name: edge\n  namespace", "name: bad\n  namespace", 1)
	stderr = d.failKubectl(t, bad, "create", "-f", "-")
	if !strings.Contains(stderr, "spec.tlsConfig.endpoints[0].relabelings[0].ratio: Invalid value: 2") {
		t.Errorf("deep schema error: %s", trimOutput(stderr))
	}
	explain := d.mustKubectl(t, "", "explain", "collectors.spec")
	for _, want := range []string{"KIND:       Collector", "FIELD: spec <Object>", "A configuration block of spec.", "tlsConfig\t<Object>", "relabelings\t<[]Object>", "Sample limit of spec."} {
		if !strings.Contains(explain, want) {
			t.Errorf("kubectl explain collectors.spec lacks %q:\n%s", want, trimOutput(explain))
		}
	}
	if got := d.mustKubectl(t, "", "explain", "collectors.spec.tlsConfig.endpoints.relabelings.port"); !strings.Contains(got, "Port, a number or a name of spec.tlsConfig.endpoints[].relabelings[]") {
		t.Errorf("explain of a deep field:\n%s", got)
	}

	// Delete (with its custom resources), then plain create.
	d.mustKubectl(t, "", "delete", "crd", largeCRDName, "--timeout=30s")
	d.mustKubectl(t, manifest, "create", "-f", "-")
	d.mustKubectl(t, "", "wait", "--for", "condition=established", "--timeout=30s", "crd/"+largeCRDName)
	controlplanetest.Eventually(t, 10*time.Second, "the re-created large CRD serves custom resources", func() (bool, string) {
		u := &unstructured.Unstructured{Object: map[string]any{"apiVersion": "telemetry.example.io/v1", "kind": "Collector",
			"metadata": map[string]any{"name": "again"}, "spec": map[string]any{"name": "again"}}}
		_, err := d.dynamic(t).Resource(collectors).Namespace("default").Create(context.Background(), u, metav1.CreateOptions{})
		if err != nil {
			return false, err.Error()
		}
		return true, ""
	})
	list, err := d.dynamic(t).Resource(collectors).Namespace("default").List(context.Background(), metav1.ListOptions{})
	if err != nil || len(list.Items) != 1 {
		t.Errorf("after re-creating the CRD: %v %d items (edge must have gone with the old CRD)", err, len(list.Items))
	}
}

// trimOutput keeps failure messages readable when kubectl echoes a huge object.
func trimOutput(s string) string {
	if len(s) > 2000 {
		return s[:1000] + "\n...\n" + s[len(s)-1000:]
	}
	return s
}

// requireV2ReadersAccept: /openapi/v2 in protobuf, as client-go's discovery
// (helm, older kubectl) fetches and parses it, holds model, and the JSON
// form has no anyOf in it. Int-or-string fields' anyOf once made gnostic
// refuse the whole document (503).
func requireV2ReadersAccept(t *testing.T, d *devplane, model string) {
	t.Helper()
	dc, err := discovery.NewDiscoveryClientForConfig(d.config)
	if err != nil {
		t.Fatal(err)
	}
	v2, err := dc.OpenAPISchema()
	if err != nil {
		t.Fatalf("/openapi/v2 in protobuf: %v", err)
	}
	found := false
	for _, named := range v2.GetDefinitions().GetAdditionalProperties() {
		found = found || named.GetName() == model
	}
	if !found {
		t.Errorf("/openapi/v2 in protobuf has no %s", model)
	}
	data, err := dc.RESTClient().Get().AbsPath("/openapi/v2").SetHeader("Accept", "application/json").DoRaw(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	var doc struct {
		Definitions map[string]json.RawMessage `json:"definitions"`
	}
	if err := json.Unmarshal(data, &doc); err != nil {
		t.Fatal(err)
	}
	if definition, ok := doc.Definitions[model]; !ok || strings.Contains(string(definition), `"anyOf"`) {
		t.Errorf("/openapi/v2 JSON: %s missing or with an anyOf", model)
	}
}
