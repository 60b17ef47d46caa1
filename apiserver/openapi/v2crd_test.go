package openapi

import (
	"bytes"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	"k8s.io/kube-openapi/pkg/validation/spec"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/yaml"

	"github.com/devplane/devplane/apiserver/crdschema"
	"github.com/devplane/devplane/apiserver/testenv/crdgen"
)

// crdState serves the CRDs' versions as the extensions server does
// (extensions.(*Extensions).OpenAPI): each kind's schema from
// OpenAPISchema and, when asJSON, also from AppendOpenAPISchemaV2JSON and
// AppendOpenAPISchemaV3JSON.
func crdState(t testing.TB, crds []*apiextensionsv1.CustomResourceDefinition, asJSON bool) ([]Resource, SuppliedDefinitions) {
	t.Helper()
	var resources []Resource
	extra := SuppliedDefinitions{}
	for _, crd := range crds {
		for _, cv := range crd.Spec.Versions {
			v, err := crdschema.Compile(crd, cv.Name)
			if err != nil {
				t.Fatal(err)
			}
			model := v.ModelName()
			extra[model] = SuppliedDefinition{Schema: SchemaOrNil(v.OpenAPISchema), V2: SchemaOrNil(v.OpenAPISchemaV2)}
			if asJSON {
				extra[model] = SuppliedDefinition{Schema: extra[model].Schema, V2: extra[model].V2,
					V2JSON: func(dst []byte) ([]byte, []string, bool) { return v.AppendOpenAPISchemaV2JSON(dst, v2RefPrefix) },
					V3JSON: func(dst []byte) ([]byte, []string, bool) { return v.AppendOpenAPISchemaV3JSON(dst, v3RefPrefix) }}
			}
			listModel := strings.TrimSuffix(model, v.GVK.Kind) + v.ListKind
			extra[listModel] = SuppliedDefinition{Schema: func() *spec.Schema {
				return &spec.Schema{SchemaProps: spec.SchemaProps{Type: []string{"object"}, Required: []string{"items"},
					Properties: map[string]spec.Schema{
						"metadata": {SchemaProps: spec.SchemaProps{Ref: spec.MustCreateRef(v2RefPrefix + "io.k8s.apimachinery.pkg.apis.meta.v1.ListMeta")}},
						"items": {SchemaProps: spec.SchemaProps{Type: []string{"array"},
							Items: &spec.SchemaOrArray{Schema: &spec.Schema{SchemaProps: spec.SchemaProps{Ref: spec.MustCreateRef(v2RefPrefix + model)}}}}},
					}}}
			}}
			resources = append(resources, Resource{
				Group: v.GVK.Group, Version: v.GVK.Version, Resource: crd.Spec.Names.Plural,
				Kind: v.GVK.Kind, ListKind: v.ListKind, Namespaced: v.NamespaceScoped,
				Verbs: allVerbs, Subresources: []string{"status"}, DefinitionName: model,
				PatchTypes: []string{PatchTypeJSON, PatchTypeMerge, PatchTypeApplyYAML},
				Revision:   fmt.Sprintf("%s/%d", crd.Name, crd.Generation),
			})
		}
	}
	return resources, extra
}

func readTestCRD(t testing.TB, path string) *apiextensionsv1.CustomResourceDefinition {
	t.Helper()
	data, err := os.ReadFile(filepath.FromSlash(path))
	if err != nil {
		t.Fatal(err)
	}
	crd := &apiextensionsv1.CustomResourceDefinition{}
	if err := yaml.Unmarshal(data, crd); err != nil {
		t.Fatalf("%s: %v", path, err)
	}
	crdschema.DefaultCRD(crd)
	return crd
}

// testdataCRDs are the CRDs of the crdschema and extensions testdata.
func testdataCRDs(t testing.TB) []*apiextensionsv1.CustomResourceDefinition {
	t.Helper()
	var crds []*apiextensionsv1.CustomResourceDefinition
	for _, pattern := range []string{"../crdschema/testdata/*.yaml", "../extensions/testdata/*crd*.yaml"} {
		paths, err := filepath.Glob(pattern)
		if err != nil || len(paths) == 0 {
			t.Fatalf("%s: %v", pattern, err)
		}
		for _, path := range paths {
			crds = append(crds, readTestCRD(t, path))
		}
	}
	return crds
}

func providerCRDs(n int) []*apiextensionsv1.CustomResourceDefinition {
	crds := crdgen.ProviderCRDs(n, 1)
	for _, crd := range crds {
		crdschema.DefaultCRD(crd)
	}
	return crds
}

// edgeCRD is a copy of template of kind Edge in group, with one version
// holding what the JSON writers leave to the spec types (a oneOf) beside
// what they write (int-or-string, embedded resources, an enum with a
// default, selectable fields).
func edgeCRD(template *apiextensionsv1.CustomResourceDefinition, group string) *apiextensionsv1.CustomResourceDefinition {
	embedded := apiextensionsv1.JSONSchemaProps{Type: "object", XEmbeddedResource: true, XPreserveUnknownFields: ptr.To(true)}
	edge := template.DeepCopy()
	edge.Name, edge.Spec.Group = "edges."+group, group
	edge.Spec.Names = apiextensionsv1.CustomResourceDefinitionNames{Plural: "edges", Singular: "edge", Kind: "Edge", ListKind: "EdgeList"}
	edge.Spec.Versions = edge.Spec.Versions[:1]
	edge.Spec.Versions[0].SelectableFields = []apiextensionsv1.SelectableField{{JSONPath: ".spec.color"}}
	edge.Spec.Versions[0].Schema.OpenAPIV3Schema = &apiextensionsv1.JSONSchemaProps{Type: "object", Properties: map[string]apiextensionsv1.JSONSchemaProps{
		"spec": {Type: "object", Properties: map[string]apiextensionsv1.JSONSchemaProps{
			"color":    {Type: "string", Enum: []apiextensionsv1.JSON{{Raw: []byte(`"red"`)}}, Default: &apiextensionsv1.JSON{Raw: []byte(`"red"`)}},
			"port":     {XIntOrString: true},
			"template": embedded,
			"list":     {Type: "array", Items: &apiextensionsv1.JSONSchemaPropsOrArray{Schema: &embedded}},
			"oneOf": {Type: "object", OneOf: []apiextensionsv1.JSONSchemaProps{{Required: []string{"a"}}},
				Properties: map[string]apiextensionsv1.JSONSchemaProps{"a": {Type: "string"}}},
		}},
	}}
	return edge
}

// The whole /openapi/v2 with custom resources given as JSON is byte for
// byte the one built from their spec.Schemas.
func TestV2WithCRDSchemasAsJSON(t *testing.T) {
	crds := testdataCRDs(t)
	crds = append(crds, providerCRDs(30)...)
	crds = append(crds, edgeCRD(crds[len(crds)-1], "edge.example.io"))

	builtins := builtinResources()
	docs := map[bool][]byte{}
	for _, asJSON := range []bool{false, true} {
		resources, extra := crdState(t, crds, asJSON)
		s := NewService("v1.37.0")
		s.Update(append(append([]Resource(nil), builtins...), resources...), extra)
		docs[asJSON], _ = fetchV2(t, s, "application/json")
	}
	if !bytes.Equal(docs[true], docs[false]) {
		got, want := docs[true], docs[false]
		i := 0
		for i < len(got) && i < len(want) && got[i] == want[i] {
			i++
		}
		t.Fatalf("documents differ at byte %d of %d/%d:\n got …%.300s\nwant …%.300s", i, len(got), len(want), got[max(0, i-100):], want[max(0, i-100):])
	}
	for _, name := range []string{"com.example.stable.v1.CronTab", "io.example.provider.svc02.v1beta2.Resource029", "dev.example.v1.Gadget", "io.example.edge.v1beta1.Edge"} {
		if !bytes.Contains(docs[true], []byte(`"`+name+`":{`)) {
			t.Errorf("%s is not defined: the comparison is weaker than meant", name)
		}
	}
}

// BenchmarkFirstV2JSONWithCRDs measures a cold /openapi/v2 JSON request
// with provider-style CRDs (two ~50 KB versions each), custom resource
// schemas built the old way (spec.Schema) and as JSON. cpu-ms/op is the
// process CPU of the request: building is spread over all processors.
func BenchmarkFirstV2JSONWithCRDs(b *testing.B) {
	crds := providerCRDs(150)
	for _, asJSON := range []bool{false, true} {
		name := "spec.Schema"
		if asJSON {
			name = "JSON"
		}
		b.Run(fmt.Sprintf("%s/crds=%d", name, len(crds)), func(b *testing.B) {
			resources, extra := crdState(b, crds, asJSON)
			resources = append(builtinResources(), resources...)
			warm := NewService("v1.37.0") // generated definitions built once, as in a running server
			warm.Update(resources, extra)
			fetchV2(b, warm, "application/json")
			var cpu time.Duration
			var size int
			for b.Loop() {
				s := NewService("v1.37.0")
				s.Update(resources, extra)
				before := processCPU()
				w := &countingWriter{header: http.Header{}}
				s.ServeHTTP(w, httptest.NewRequest(http.MethodGet, "/openapi/v2", nil))
				cpu += processCPU() - before
				if w.status != http.StatusOK {
					b.Fatal(w.status)
				}
				size = w.size
			}
			b.ReportMetric(float64(cpu.Milliseconds())/float64(b.N), "cpu-ms/op")
			b.ReportMetric(float64(cpu.Microseconds())/float64(b.N)/float64(len(resources)-len(builtinResources())), "cpu-µs/fragment")
			b.ReportMetric(float64(size), "json-bytes")
		})
	}
}

// countingWriter takes a response without keeping it: copying tens of
// megabytes into a recorder would weigh on what is measured.
type countingWriter struct {
	header http.Header
	status int
	size   int
}

func (w *countingWriter) Header() http.Header { return w.header }

func (w *countingWriter) WriteHeader(status int) { w.status = status }

func (w *countingWriter) Write(p []byte) (int, error) {
	if w.status == 0 {
		w.status = http.StatusOK
	}
	w.size += len(p)
	return len(p), nil
}

// BenchmarkCustomV2Fragments measures building and encoding the custom
// resource fragments alone, one after the other: their CPU cost without
// the rest of the request or the machine's parallelism.
func BenchmarkCustomV2Fragments(b *testing.B) {
	crds := providerCRDs(50)
	fetchV2(b, newTestService(b), "application/json") // generated definitions built
	for _, asJSON := range []bool{false, true} {
		name := "spec.Schema"
		if asJSON {
			name = "JSON"
		}
		resources, extra := crdState(b, crds, asJSON)
		b.Run(fmt.Sprintf("%s/fragments=%d", name, len(resources)), func(b *testing.B) {
			for b.Loop() {
				for _, r := range resources {
					if err := customV2Fragment(r, ownDefinitions(r, extra)).encode(); err != nil {
						b.Fatal(err)
					}
				}
			}
			b.ReportMetric(float64(b.Elapsed().Microseconds())/float64(b.N*len(resources)), "µs/fragment")
		})
	}
}
