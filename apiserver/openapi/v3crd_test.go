package openapi

import (
	"bytes"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"slices"
	"sync/atomic"
	"testing"
	"time"

	"k8s.io/kube-openapi/pkg/handler3"
	"k8s.io/kube-openapi/pkg/validation/spec"

	"github.com/devplane/devplane/apiserver/testenv/crdgen"
)

// Every group version's /openapi/v3 document, with custom resources given
// as JSON or not, is byte for byte json.Marshal of the spec3.OpenAPI it
// was built as (fullV3Document); its protobuf form is that of the same
// JSON. The built-in resources cover the path items; the edge CRDs, a
// definition left to the spec types, alone in its group and among JSON
// ones.
func TestV3DocumentsMatchFullBuild(t *testing.T) {
	crds := testdataCRDs(t)
	crds = append(crds, providerCRDs(30)...)
	crds = append(crds, edgeCRD(crds[len(crds)-1], "edge.example.io"), edgeCRD(crds[len(crds)-1], crdgen.Group(0)))
	for _, asJSON := range []bool{false, true} {
		custom, extra := crdState(t, crds, asJSON)
		var written atomic.Int32
		for name, supplied := range extra {
			if write := supplied.V3JSON; write != nil {
				supplied.V3JSON = func(dst []byte) ([]byte, []string, bool) {
					data, refs, ok := write(dst)
					if ok {
						written.Add(1)
					}
					return data, refs, ok
				}
				extra[name] = supplied
			}
		}
		resources := append(everyBuiltinResource(), custom...)
		// A group version whose only resource is left out: no paths, no schemas.
		resources = append(resources, Resource{Group: "unknown.example.com", Version: "v1", Resource: "holders", Kind: "Holder",
			ListKind: "HolderList", Verbs: allVerbs, DefinitionName: "com.example.unknown.v1.Holder"})
		s := NewService("v1.37.0")
		s.Update(resources, extra)
		groupVersions := groupVersionsOf(resources)
		for key, groupResources := range groupVersions {
			response := get(t, s, "/openapi/v3/"+key, map[string]string{"Accept": "application/json"})
			if response.StatusCode != http.StatusOK {
				t.Fatalf("GET %s: %s", key, response.Status)
			}
			got := readBody(t, response)
			want, err := json.Marshal(fullV3Document("v1.37.0", groupResources, extra))
			if err != nil {
				t.Fatal(err)
			}
			if !bytes.Equal(got, want) {
				i := 0
				for i < len(got) && i < len(want) && got[i] == want[i] {
					i++
				}
				t.Fatalf("%s (JSON schemas: %v) differs at byte %d of %d/%d:\n got …%.300s\nwant …%.300s",
					key, asJSON, i, len(got), len(want), got[max(0, i-100):], want[max(0, i-100):])
			}
		}
		if want := int32(2 * 30); asJSON && written.Load() < want {
			t.Errorf("%d kinds written as JSON, want at least %d: the comparison is weaker than meant", written.Load(), want)
		}
		if len(groupVersions) < 20 {
			t.Errorf("%d group versions compared", len(groupVersions))
		}

		key := "apis/" + crdgen.Group(0) + "/v1beta1"
		response := get(t, s, "/openapi/v3/"+key, map[string]string{"Accept": "application/" + protoV3})
		if response.StatusCode != http.StatusOK {
			t.Fatalf("GET %s as protobuf: %s", key, response.Status)
		}
		want, err := handler3.ToV3ProtoBinary(mustMarshal(t, fullV3Document("v1.37.0", groupVersions[key], extra)))
		if err != nil {
			t.Fatal(err)
		}
		if got := readBody(t, response); !bytes.Equal(got, want) {
			t.Errorf("%s: protobuf differs (%d/%d bytes)", key, len(got), len(want))
		}
	}
}

func mustMarshal(t testing.TB, v any) []byte {
	t.Helper()
	data, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	return data
}

// BenchmarkFirstV3GroupVersionWithCRDs measures the first
// /openapi/v3/apis/<group>/<version> request for a group of ten provider
// CRDs (~50 KB schema each) with 300 CRDs served, custom resource schemas
// built the old way (spec.Schema) and as JSON. With cold definitions the
// generated definitions the document names (ObjectMeta's closure...) are
// built in the request too, as on a server's first v3 document; warm, they
// were built by an earlier one. ms/op is the request's wall time, cpu-ms/op
// its process CPU (building is spread over all processors).
func BenchmarkFirstV3GroupVersionWithCRDs(b *testing.B) {
	crds := providerCRDs(300)
	path := "/openapi/v3/apis/" + crdgen.Group(0) + "/v1beta2"
	for _, asJSON := range []bool{false, true} {
		name := "spec.Schema"
		if asJSON {
			name = "JSON"
		}
		resources, extra := crdState(b, crds, asJSON)
		resources = append(builtinResources(), resources...)
		warm := NewService("v1.37.0") // what only the first document of a process builds
		warm.Update(resources, extra)
		fetchV3(b, warm, path)
		for _, cold := range []bool{false, true} {
			definitions := "warm"
			if cold {
				definitions = "cold"
			}
			b.Run(fmt.Sprintf("%s/definitions=%s", name, definitions), func(b *testing.B) {
				var wall, cpu time.Duration
				var size int
				for b.Loop() {
					if cold {
						generatedV3 = resetDefinitions(v3RefPrefix)
					}
					s := NewService("v1.37.0")
					s.Update(resources, extra)
					start, before := time.Now(), processCPU()
					size = fetchV3(b, s, path)
					wall += time.Since(start)
					cpu += processCPU() - before
				}
				b.ReportMetric(float64(wall.Microseconds())/1000/float64(b.N), "ms/op")
				b.ReportMetric(float64(cpu.Microseconds())/1000/float64(b.N), "cpu-ms/op")
				b.ReportMetric(float64(size), "json-bytes")
			})
		}
	}
}

// fetchV3 GETs a v3 document as JSON without keeping it; it returns its size.
func fetchV3(b testing.TB, s *Service, path string) int {
	b.Helper()
	w := &countingWriter{header: http.Header{}}
	request := httptest.NewRequest(http.MethodGet, path, nil)
	request.Header.Set("Accept", "application/json")
	s.ServeHTTP(w, request)
	if w.status != http.StatusOK {
		b.Fatalf("GET %s: %d", path, w.status)
	}
	return w.size
}

// A supplied definition only another one refers to is taken as JSON too,
// and one whose V3JSON declines as a spec.Schema; strings to escape for
// HTML in the JSON given are escaped as json.Marshal escapes them.
func TestV3SuppliedDefinitionsReachedByRef(t *testing.T) {
	schemas := map[string]*spec.Schema{
		"com.example.v1.Holder": {SchemaProps: spec.SchemaProps{Type: []string{"object"}, Properties: map[string]spec.Schema{
			"inner":    {SchemaProps: spec.SchemaProps{Ref: spec.MustCreateRef(v3RefPrefix + "com.example.v1.Inner")}},
			"declined": {SchemaProps: spec.SchemaProps{Ref: spec.MustCreateRef(v2RefPrefix + "com.example.v1.Declined")}},
		}}},
		"com.example.v1.Inner": {SchemaProps: spec.SchemaProps{Type: []string{"string"}, Description: "a <b> & c\u2028",
			AllOf: []spec.Schema{{SchemaProps: spec.SchemaProps{Ref: spec.MustCreateRef(v3RefPrefix + "io.k8s.apimachinery.pkg.apis.meta.v1.ObjectMeta")}}}}},
		"com.example.v1.Declined": {SchemaProps: spec.SchemaProps{Type: []string{"integer"}}},
	}
	var written []string
	extra := StaticDefinitions(schemas)
	for _, name := range []string{"com.example.v1.Holder", "com.example.v1.Inner"} {
		supplied := extra[name]
		supplied.V3JSON = func(dst []byte) ([]byte, []string, bool) {
			written = append(written, name)
			data := mustMarshalJSON(t, rewriteRefs(schemas[name], v3RefPrefix))
			return append(dst, data...), referencedDefinitions(schemas[name]), true
		}
		extra[name] = supplied
	}
	declined := extra["com.example.v1.Declined"]
	declined.V3JSON = func(dst []byte) ([]byte, []string, bool) { return append(dst, "partial"...), nil, false }
	extra["com.example.v1.Declined"] = declined
	resources := []Resource{{Group: "example.com", Version: "v1", Resource: "holders", Kind: "Holder", ListKind: "HolderList",
		Verbs: allVerbs, DefinitionName: "com.example.v1.Holder", PatchTypes: []string{PatchTypeJSON, PatchTypeMerge}}}

	got, err := encodeV3Document("v1.37.0", resources, extra)
	if err != nil {
		t.Fatal(err)
	}
	if want := mustMarshal(t, fullV3Document("v1.37.0", resources, extra)); !bytes.Equal(got, want) {
		t.Fatalf("differs:\n got %s\nwant %s", got, want)
	}
	slices.Sort(written)
	if !slices.Equal(written, []string{"com.example.v1.Holder", "com.example.v1.Inner"}) {
		t.Errorf("written as JSON: %v", written)
	}
	if !bytes.Contains(got, []byte(`a \u003cb\u003e \u0026 c\u2028`)) {
		t.Error("the JSON given is not escaped as json.Marshal escapes")
	}
}

func mustMarshalJSON(t testing.TB, s *spec.Schema) []byte {
	t.Helper()
	data, err := s.MarshalJSON()
	if err != nil {
		t.Fatal(err)
	}
	return data
}
