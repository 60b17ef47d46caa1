package openapi

import (
	"bytes"
	"compress/gzip"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"reflect"
	"slices"
	"strings"
	"sync/atomic"
	"testing"

	openapi_v2 "github.com/google/gnostic-models/openapiv2"
	"google.golang.org/protobuf/proto"
	"k8s.io/kube-openapi/pkg/handler"
	openapiproto "k8s.io/kube-openapi/pkg/util/proto"
	"k8s.io/kube-openapi/pkg/validation/spec"
)

// widgets are n custom resources of widgets.example.com/v1 with their
// schemas; builds counts how often each kind's schema is built.
type widgets struct {
	resources []Resource
	builds    map[string]*atomic.Int32 // by kind
}

func newWidgets(n int, revision string) *widgets {
	w := &widgets{builds: map[string]*atomic.Int32{}}
	for i := range n {
		kind := fmt.Sprintf("Widget%d", i)
		r := Resource{Group: "widgets.example.com", Version: "v1", Resource: strings.ToLower(kind) + "s", Kind: kind,
			ListKind: kind + "List", Namespaced: i%2 == 0, Verbs: allVerbs, Subresources: []string{"status"},
			DefinitionName: "com.example.widgets.v1." + kind, PatchTypes: []string{PatchTypeJSON, PatchTypeMerge, PatchTypeApplyYAML},
			Revision: revision}
		if i == 1 {
			r.Subresources = append(r.Subresources, "scale")
		}
		w.resources = append(w.resources, r)
		w.builds[kind] = &atomic.Int32{}
	}
	return w
}

func (w *widgets) definitions() SuppliedDefinitions {
	extra := SuppliedDefinitions{}
	for i, r := range w.resources {
		kind, model := r.Kind, r.DefinitionName
		builds := w.builds[kind]
		schema := func() *spec.Schema {
			builds.Add(1)
			return &spec.Schema{SchemaProps: spec.SchemaProps{
				Type: []string{"object"}, Description: kind + " of " + r.Revision,
				Properties: map[string]spec.Schema{
					"metadata": {SchemaProps: spec.SchemaProps{Ref: spec.MustCreateRef(v3RefPrefix + "io.k8s.apimachinery.pkg.apis.meta.v1.ObjectMeta")}},
					"spec": {SchemaProps: spec.SchemaProps{Type: []string{"object"}, Properties: map[string]spec.Schema{
						"size": {SchemaProps: spec.SchemaProps{Type: []string{"integer"}, Description: "<size> & such"}},
					}}},
				},
			}}
		}
		extra[model] = SuppliedDefinition{Schema: schema}
		switch i % 3 {
		case 1: // as JSON, as custom resources supply them
			extra[model] = SuppliedDefinition{Schema: schema, V2JSON: func(dst []byte) ([]byte, []string, bool) {
				s := rewriteRefs(schema(), v2RefPrefix)
				data, err := s.MarshalJSON()
				return data, referencedDefinitions(s), err == nil
			}}
		case 2: // JSON declined: Schema is used
			extra[model] = SuppliedDefinition{Schema: schema, V2JSON: func(dst []byte) ([]byte, []string, bool) { return dst, nil, false }}
		}
		extra[model+"List"] = SuppliedDefinition{Schema: func() *spec.Schema {
			return &spec.Schema{SchemaProps: spec.SchemaProps{Type: []string{"object"}, Properties: map[string]spec.Schema{
				"items": {SchemaProps: spec.SchemaProps{Type: []string{"array"}, Items: &spec.SchemaOrArray{Schema: &spec.Schema{
					SchemaProps: spec.SchemaProps{Ref: spec.MustCreateRef(v2RefPrefix + model)}}}}},
				"metadata": {SchemaProps: spec.SchemaProps{Ref: spec.MustCreateRef(v2RefPrefix + "io.k8s.apimachinery.pkg.apis.meta.v1.ListMeta")}},
			}}}
		}}
	}
	return extra
}

func (w *widgets) buildCounts() map[string]int32 {
	counts := map[string]int32{}
	for kind, n := range w.builds {
		counts[kind] = n.Load()
	}
	return counts
}

// mixedState is built-ins, widgets, a CronTab without a revision and an
// external group version.
func mixedState(w *widgets) ([]Resource, SuppliedDefinitions) {
	resources := append(append(builtinResources(), w.resources...), cronTabResource())
	extra := w.definitions()
	for name, supply := range StaticDefinitions(cronTabSchemas()) {
		extra[name] = supply
	}
	return resources, extra
}

func fetchV2(t testing.TB, s *Service, accept string) ([]byte, string) {
	t.Helper()
	response := get(t, s, "/openapi/v2", map[string]string{"Accept": accept})
	if response.StatusCode != http.StatusOK {
		t.Fatalf("GET /openapi/v2 (%s): %s", accept, response.Status)
	}
	return readBody(t, response), response.Header.Get("Etag")
}

func TestV2AssembledMatchesFullBuild(t *testing.T) {
	w := newWidgets(4, "r1")
	resources, extra := mixedState(w)
	s := NewService("v1.37.0")
	s.Update(resources, extra)
	s.SetExternal("gadgets.example.com", "v1", gadgetExternal())

	full := fullV2Document("v1.37.0", resources, extra)
	mergeExternalV2(full, map[string]External{"apis/gadgets.example.com/v1": gadgetExternal()})
	wantJSON, err := json.Marshal(full)
	if err != nil {
		t.Fatal(err)
	}

	gotJSON, _ := fetchV2(t, s, "application/json")
	var got, want any
	if err := json.Unmarshal(gotJSON, &got); err != nil {
		t.Fatalf("assembled JSON does not parse: %v", err)
	}
	if err := json.Unmarshal(wantJSON, &want); err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(got, want) {
		for _, key := range []string{"paths", "definitions"} {
			g, w := got.(map[string]any)[key].(map[string]any), want.(map[string]any)[key].(map[string]any)
			for name := range w {
				if !reflect.DeepEqual(g[name], w[name]) {
					t.Errorf("%s %s differs:\n got %v\nwant %v", key, name, g[name], w[name])
				}
			}
			for name := range g {
				if _, ok := w[name]; !ok {
					t.Errorf("%s %s is extra", key, name)
				}
			}
		}
		t.Fatal("assembled v2 JSON differs from the full build")
	}
	definitions := want.(map[string]any)["definitions"].(map[string]any)
	for _, name := range []string{"io.k8s.apimachinery.pkg.apis.meta.v1.ObjectMeta", "io.k8s.api.autoscaling.v1.Scale",
		"com.example.widgets.v1.Widget3List", "com.example.gadgets.v1.Gadget"} {
		if definitions[name] == nil {
			t.Errorf("the reference lacks %s: the comparison is weaker than meant", name)
		}
	}
	if n := strings.Count(string(gotJSON), `"io.k8s.apimachinery.pkg.apis.meta.v1.ObjectMeta":{`); n != 1 {
		t.Errorf("ObjectMeta defined %d times", n)
	}

	// Protobuf: the same as kube-openapi's conversion of the full JSON,
	// members in another order.
	gotProto, _ := fetchV2(t, s, protobufV2)
	var gotDoc openapi_v2.Document
	if err := proto.Unmarshal(gotProto, &gotDoc); err != nil {
		t.Fatalf("assembled protobuf does not decode: %v", err)
	}
	wantProto, err := handler.ToProtoBinary(wantJSON)
	if err != nil {
		t.Fatal(err)
	}
	var wantDoc openapi_v2.Document
	if err := proto.Unmarshal(wantProto, &wantDoc); err != nil {
		t.Fatal(err)
	}
	for _, doc := range []*openapi_v2.Document{&gotDoc, &wantDoc} {
		slices.SortFunc(doc.Paths.Path, func(a, b *openapi_v2.NamedPathItem) int { return strings.Compare(a.Name, b.Name) })
		slices.SortFunc(doc.Definitions.AdditionalProperties, func(a, b *openapi_v2.NamedSchema) int { return strings.Compare(a.Name, b.Name) })
	}
	if !proto.Equal(&gotDoc, &wantDoc) {
		t.Errorf("assembled protobuf differs from the full build's: %d/%d paths, %d/%d definitions",
			len(gotDoc.Paths.Path), len(wantDoc.Paths.Path), len(gotDoc.Definitions.AdditionalProperties), len(wantDoc.Definitions.AdditionalProperties))
	}
	models, err := openapiproto.NewOpenAPIData(&gotDoc)
	if err != nil {
		t.Fatalf("kubectl's model loader rejects the assembled protobuf: %v", err)
	}
	if _, ok := models.LookupModel("com.example.widgets.v1.Widget2").(*openapiproto.Kind); !ok {
		t.Errorf("Widget2 model is %T", models.LookupModel("com.example.widgets.v1.Widget2"))
	}
}

func TestV2FragmentsAreReusedAcrossUpdates(t *testing.T) {
	w := newWidgets(4, "r1")
	resources, extra := mixedState(w)
	s := NewService("v1.37.0")
	s.Update(resources, extra)
	if counts := w.buildCounts(); counts["Widget0"] != 0 {
		t.Fatalf("schemas built before any request: %v", counts)
	}
	_, etag := fetchV2(t, s, "application/json")
	fetchV2(t, s, protobufV2)
	if counts := w.buildCounts(); !reflect.DeepEqual(counts, map[string]int32{"Widget0": 1, "Widget1": 1, "Widget2": 1, "Widget3": 1}) {
		t.Fatalf("first request built %v, want each once", counts)
	}

	// The same state again: nothing rebuilt, same ETag.
	s.Update(mixedState(w))
	if _, again := fetchV2(t, s, "application/json"); again != etag {
		t.Errorf("ETag changed with the same resources: %s, was %s", again, etag)
	}

	// Widget2's CRD changes: only its fragment is built again.
	resources, extra = mixedState(w)
	resources[len(builtinResources())+2].Revision = "r2"
	w.resources[2].Revision = "r2"
	s.Update(resources, w.mergedWith(extra))
	body, changed := fetchV2(t, s, "application/json")
	fetchV2(t, s, protobufV2)
	if counts := w.buildCounts(); !reflect.DeepEqual(counts, map[string]int32{"Widget0": 1, "Widget1": 1, "Widget2": 2, "Widget3": 1}) {
		t.Errorf("after Widget2 changed: built %v, want only Widget2 again", counts)
	}
	if changed == etag {
		t.Error("ETag unchanged after a custom resource's schema changed")
	}
	if !strings.Contains(string(body), "Widget2 of r2") {
		t.Error("the document does not have Widget2's new schema")
	}

	// A removed CRD leaves; the others are still not rebuilt.
	resources = slices.Delete(resources, len(builtinResources())+3, len(builtinResources())+4)
	s.Update(resources, extra)
	body, _ = fetchV2(t, s, "application/json")
	if strings.Contains(string(body), "widget3s") {
		t.Error("removed Widget3 still has paths")
	}
	if counts := w.buildCounts(); counts["Widget0"] != 1 {
		t.Errorf("Widget0 rebuilt after another CRD was removed: %v", counts)
	}
}

// mergedWith returns extra with w's current definitions.
func (w *widgets) mergedWith(extra SuppliedDefinitions) SuppliedDefinitions {
	for name, supply := range w.definitions() {
		extra[name] = supply
	}
	return extra
}

func TestV2RangeRequestsReadTheAssembledBytes(t *testing.T) {
	w := newWidgets(3, "r1")
	s := NewService("v1.37.0")
	s.Update(mixedState(w))
	full, _ := fetchV2(t, s, "application/json")
	for _, tc := range []struct{ from, to int }{{0, 0}, {5, 100}, {len(full) / 3, len(full)/3 + 70000}, {len(full) - 10, len(full) - 1}} {
		response := get(t, s, "/openapi/v2", map[string]string{"Accept": "application/json", "Range": fmt.Sprintf("bytes=%d-%d", tc.from, tc.to)})
		if response.StatusCode != http.StatusPartialContent {
			t.Fatalf("range %d-%d: %s", tc.from, tc.to, response.Status)
		}
		if got := readBody(t, response); string(got) != string(full[tc.from:tc.to+1]) {
			t.Errorf("range %d-%d: %d bytes differ from the document's", tc.from, tc.to, len(got))
		}
	}
}

func TestV2GzipDecodesToTheDocument(t *testing.T) {
	s := NewService("v1.37.0")
	s.Update(mixedState(newWidgets(5, "r1")))
	s.SetExternal("gadgets.example.com", "v1", gadgetExternal()) // one of its definitions is left out: a partial run
	for _, accept := range []string{"application/json", protobufV2} {
		plain, etag := fetchV2(t, s, accept)
		response := get(t, s, "/openapi/v2", map[string]string{"Accept": accept, "Accept-Encoding": "br;q=1.0, gzip;q=0.5"})
		if response.Header.Get("Content-Encoding") != "gzip" || response.Header.Get("Etag") != etag {
			t.Fatalf("%s: Content-Encoding %q, Etag %q (plain %q)", accept, response.Header.Get("Content-Encoding"), response.Header.Get("Etag"), etag)
		}
		reader, err := gzip.NewReader(response.Body)
		if err != nil {
			t.Fatal(err)
		}
		reader.Multistream(false) // one member, as any gzip reader expects
		decompressed, err := io.ReadAll(reader)
		if err != nil {
			t.Fatalf("%s: gzip body does not decompress: %v", accept, err)
		}
		if !bytes.Equal(decompressed, plain) {
			t.Errorf("%s: gzip body decompresses to %d bytes, not the %d of the document", accept, len(decompressed), len(plain))
		}
	}
	if response := get(t, s, "/openapi/v2", map[string]string{"Accept-Encoding": "gzip;q=0"}); response.Header.Get("Content-Encoding") != "" {
		t.Error("gzip sent although refused")
	}
}

// parseV2Document must convert JSON as gnostic's ParseDocument does,
// scalars of every kind included (vendor extensions keep them as YAML).
func TestParseV2DocumentMatchesGnostic(t *testing.T) {
	document := []byte(`{"swagger":"2.0","info":{"title":"t \u003c\"q\"\u003e","version":"v1"},
		"paths":{"/a":{"get":{"responses":{"200":{"description":"OK"}},"x-values":{"int":10,"negative":-3,"big":18446744073709551615,
			"bigger":18446744073709551616,"float":1.5,"exp":1e3,"zero":0,"true":true,"false":false,"null":null,
			"strings":["true","10","1.5","null","~","yes","2001-12-14","","tab\there","ünïcode"],"nested":[[],{}]}}}},
		"definitions":{"D":{"type":"object","maxLength":63,"minimum":-1.25,"default":{"a":[1,"b",null]},"enum":[1,2.5,"x",false],
			"x-kubernetes-group-version-kind":[{"group":"","kind":"D","version":"v1"}]}}}`)
	want, err := openapi_v2.ParseDocument(document)
	if err != nil {
		t.Fatal(err)
	}
	got, err := parseV2Document(document)
	if err != nil {
		t.Fatal(err)
	}
	if !proto.Equal(got, want) {
		t.Errorf("parseV2Document differs from gnostic's ParseDocument:\n got %v\nwant %v", got, want)
	}
}

// A custom resource's fragment hash is derived from its revision rather
// than read from its bytes: two Services given the same state (a restart)
// serve the same ETag, and a new revision changes it.
func TestV2ETagFromRevisions(t *testing.T) {
	etagOf := func(revision string) string {
		w := newWidgets(2, revision)
		s := NewService("v1.37.0")
		s.Update(mixedState(w))
		_, etag := fetchV2(t, s, "application/json")
		return etag
	}
	first, again, revised := etagOf("r1"), etagOf("r1"), etagOf("r2")
	if first != again {
		t.Errorf("same state, different ETags: %s and %s", first, again)
	}
	if revised == first {
		t.Error("ETag unchanged by a new revision")
	}
}
