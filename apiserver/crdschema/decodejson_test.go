package crdschema

import (
	"bytes"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/devplane/devplane/apiserver/testenv/crdgen"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/serializer"
	kjson "k8s.io/apimachinery/pkg/runtime/serializer/json"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/dump"
	sigsjson "sigs.k8s.io/json"
	"sigs.k8s.io/yaml"
)

func init() { panicOnBug = true }

// storeCodec is the codec the CRD store uses (extensions.installCRDResource).
func storeCodec(t testing.TB) (runtime.Codec, *runtime.Scheme) {
	t.Helper()
	scheme := runtime.NewScheme()
	if err := apiextensionsv1.AddToScheme(scheme); err != nil {
		t.Fatal(err)
	}
	metav1.AddToGroupVersion(scheme, metav1.SchemeGroupVersion)
	js := kjson.NewSerializerWithOptions(kjson.DefaultMetaFactory, scheme, scheme, kjson.SerializerOptions{})
	gv := apiextensionsv1.SchemeGroupVersion
	return serializer.NewCodecFactory(scheme).CodecForVersions(js, js, gv, gv), scheme
}

// checkDecode requires DecodeCRDJSON to give what the store's codec gives
// for data (after the codec's defaulting), or to decline; it reports
// whether it handled data.
func checkDecode(t testing.TB, codec runtime.Codec, scheme *runtime.Scheme, data []byte) bool {
	t.Helper()
	got := &apiextensionsv1.CustomResourceDefinition{}
	handled := DecodeCRDJSON(data, got)
	if !handled {
		if !reflect.DeepEqual(got, &apiextensionsv1.CustomResourceDefinition{}) {
			t.Fatalf("not handled but the object is not empty for %q", data)
		}
		return false
	}
	// Before defaulting: as sigs.k8s.io/json alone.
	plain := &apiextensionsv1.CustomResourceDefinition{}
	if err := sigsjson.UnmarshalCaseSensitivePreserveInts(data, plain); err != nil {
		t.Fatalf("handled %q but sigs.k8s.io/json fails: %v", data, err)
	}
	if !reflect.DeepEqual(got, plain) {
		t.Fatalf("differs from sigs.k8s.io/json for %q:\n%s", data, diff(plain, got))
	}
	want := &apiextensionsv1.CustomResourceDefinition{}
	obj, _, err := codec.Decode(data, nil, want)
	if err != nil {
		t.Fatalf("handled %q but the codec fails: %v", data, err)
	}
	if obj != want {
		t.Fatalf("codec returned another object")
	}
	scheme.Default(got)
	if !reflect.DeepEqual(got, want) {
		t.Fatalf("differs from the codec for %q:\n%s", data, diff(want, got))
	}
	return true
}

func diff(want, got any) string {
	w, g := strings.Split(dump.Pretty(want), "\n"), strings.Split(dump.Pretty(got), "\n")
	for i := range min(len(w), len(g)) {
		if w[i] != g[i] {
			return fmt.Sprintf("line %d:\nwant %s\n got %s", i, w[i], g[i])
		}
	}
	return fmt.Sprintf("want %d lines, got %d", len(w), len(g))
}

func mustHandle(t testing.TB, codec runtime.Codec, scheme *runtime.Scheme, data []byte) {
	t.Helper()
	if !checkDecode(t, codec, scheme, data) {
		t.Fatalf("not handled: %.300s", data)
	}
}

// yamlCRDs reads the CRDs among the YAML documents of file.
func yamlCRDs(t testing.TB, file string) []*apiextensionsv1.CustomResourceDefinition {
	t.Helper()
	data, err := os.ReadFile(file)
	if err != nil {
		t.Fatal(err)
	}
	var out []*apiextensionsv1.CustomResourceDefinition
	for _, doc := range bytes.Split(data, []byte("\n---")) {
		crd := &apiextensionsv1.CustomResourceDefinition{}
		if err := yaml.Unmarshal(doc, crd); err != nil || crd.Kind != "CustomResourceDefinition" {
			continue
		}
		out = append(out, crd)
	}
	return out
}

// stored makes crd look as the store keeps it (defaulted, with metadata
// and status the server sets) and encodes it with the store's codec.
func stored(t testing.TB, codec runtime.Codec, crd *apiextensionsv1.CustomResourceDefinition, i int) []byte {
	t.Helper()
	crd = crd.DeepCopy()
	DefaultCRD(crd)
	now := metav1.NewTime(time.Date(2025, 3, 4, 5, 6, 7, 0, time.UTC).Add(time.Duration(i) * time.Second))
	crd.UID = types.UID(fmt.Sprintf("8d5c1c43-5e3a-4c39-8f59-4f0d4c2b%04d", i))
	crd.Generation = int64(i + 1)
	crd.CreationTimestamp = now
	crd.ManagedFields = []metav1.ManagedFieldsEntry{
		{Manager: "kubectl-client-side-apply", Operation: metav1.ManagedFieldsOperationUpdate, APIVersion: "apiextensions.k8s.io/v1", Time: &now, FieldsType: "FieldsV1",
			FieldsV1: &metav1.FieldsV1{Raw: []byte(`{"f:metadata":{"f:annotations":{".":{},"f:kubectl.kubernetes.io/last-applied-configuration":{}}},"f:spec":{"f:group":{},"f:names":{"f:kind":{},"f:plural":{}}}}`)}},
		{Manager: "devplane", Operation: metav1.ManagedFieldsOperationUpdate, APIVersion: "apiextensions.k8s.io/v1", Time: &now, FieldsType: "FieldsV1", Subresource: "status",
			FieldsV1: &metav1.FieldsV1{Raw: []byte(`{"f:status":{"f:acceptedNames":{"f:kind":{},"f:plural":{}},"f:conditions":{"k:{\"type\":\"Established\"}":{".":{},"f:status":{}}}}}`)}},
	}
	crd.Status.AcceptedNames = crd.Spec.Names
	crd.Status.Conditions = []apiextensionsv1.CustomResourceDefinitionCondition{
		{Type: apiextensionsv1.NamesAccepted, Status: apiextensionsv1.ConditionTrue, LastTransitionTime: now, Reason: "NoConflicts", Message: "no conflicts found"},
		{Type: apiextensionsv1.Established, Status: apiextensionsv1.ConditionTrue, LastTransitionTime: now, Reason: "InitialNamesAccepted", Message: "the initial names have been accepted"},
	}
	data, err := runtime.Encode(codec, crd)
	if err != nil {
		t.Fatal(err)
	}
	return data
}

func TestDecodeCRDJSONTestdata(t *testing.T) {
	codec, scheme := storeCodec(t)
	files := []string{"testdata/crontabs.yaml", "testdata/nonstructural.yaml", "testdata/widgets.yaml",
		"../extensions/testdata/crontab-crd.yaml", "../../testdata/crds/collectors.yaml"}
	n := 0
	for _, f := range files {
		crds := yamlCRDs(t, f)
		if len(crds) == 0 {
			t.Fatalf("no CRDs in %s", f)
		}
		for i, crd := range crds {
			mustHandle(t, codec, scheme, stored(t, codec, crd, i))
			// Undefaulted and re-marshalled with encoding/json as well.
			data, err := runtime.Encode(codec, crd)
			if err != nil {
				t.Fatal(err)
			}
			mustHandle(t, codec, scheme, data)
			n++
		}
	}
	t.Logf("%d CRDs from %d files", n, len(files))
}

func TestDecodeCRDJSONProvider(t *testing.T) {
	codec, scheme := storeCodec(t)
	for i, crd := range crdgen.ProviderCRDs(60, 7) {
		mustHandle(t, codec, scheme, stored(t, codec, crd, i))
	}
}

// Equal schema subtrees decode into one shared node or map: two versions
// with the same schema share it whole, and a repeated block within one
// schema is decoded once.
func TestDecodeCRDJSONSharesEqualSubtrees(t *testing.T) {
	codec, scheme := storeCodec(t)
	crd := crdgen.ProviderCRDs(1, 3)[0]
	crd.Spec.Versions[1].Schema = crd.Spec.Versions[0].Schema.DeepCopy()
	data := stored(t, codec, crd, 0)
	mustHandle(t, codec, scheme, data)
	got := &apiextensionsv1.CustomResourceDefinition{}
	if !DecodeCRDJSON(data, got) {
		t.Fatal("not handled")
	}
	a, b := got.Spec.Versions[0].Schema.OpenAPIV3Schema, got.Spec.Versions[1].Schema.OpenAPIV3Schema
	if a != b {
		t.Error("two versions with one schema decoded into two nodes")
	}
	spec := a.Properties["spec"].Properties
	forProvider, initProvider := spec["forProvider"].Properties, spec["initProvider"].Properties
	if len(forProvider) == 0 || reflect.ValueOf(forProvider).UnsafePointer() != reflect.ValueOf(initProvider).UnsafePointer() {
		t.Error("spec.forProvider and spec.initProvider (equal blocks) decoded into two maps")
	}
}

// edgeCRD sets every schema field, with values of each JSON kind where the
// field is raw JSON.
const edgeCRD = `{
 "apiVersion": "apiextensions.k8s.io/v1", "kind": "CustomResourceDefinition",
 "unknownTop": {"a": [1, 2.5, "x", null, true, {"b": {}}]},
 "metadata": {"name": "edges.example.io", "generateName": "e-", "namespace": "", "selfLink": "/x",
  "uid": "u-1", "resourceVersion": "12", "generation": 9223372036854775807,
  "creationTimestamp": "2024-02-29T23:59:59Z", "deletionTimestamp": "2024-03-01T01:02:03+02:00",
  "deletionGracePeriodSeconds": -30,
  "labels": {"a": "b", "empty": "", "nullv": null, "ünï": "cödé"}, "annotations": {},
  "ownerReferences": [{"apiVersion": "v1", "kind": "ConfigMap", "name": "cm", "uid": "x", "controller": true, "blockOwnerDeletion": false}, null],
  "finalizers": [],
  "managedFields": [{"manager": "m", "operation": "Apply", "apiVersion": "v1", "time": null, "fieldsType": "FieldsV1",
    "fieldsV1": {"f:spec": {"k:{\"a\":1}": {}, "v:\"x\"": {}} }, "subresource": ""},
   {"manager": "n", "fieldsV1": null, "time": "2020-01-01T00:00:00.123456789Z"}],
  "unknownMeta": 1},
 "spec": {"group": "example.io", "scope": "Namespaced", "preserveUnknownFields": false,
  "names": {"plural": "edges", "singular": "edge", "shortNames": ["e", "ed"], "kind": "Edge", "listKind": "EdgeList", "categories": null},
  "conversion": {"strategy": "Webhook", "webhook": {"conversionReviewVersions": ["v1", "v1beta1"],
    "clientConfig": {"url": "https://x/y", "caBundle": "aGVsbG8gd29ybGQ=",
     "service": {"namespace": "ns", "name": "svc", "path": "/convert", "port": 8443}}}},
  "versions": [
   {"name": "v1", "served": true, "storage": true, "deprecated": true, "deprecationWarning": "old",
    "subresources": {"status": {"ignored": 1}, "scale": {"specReplicasPath": ".spec.r", "statusReplicasPath": ".status.r", "labelSelectorPath": ".status.s"}},
    "additionalPrinterColumns": [{"name": "A", "type": "integer", "format": "int32", "description": "d", "priority": -2147483648, "jsonPath": ".a"}],
    "selectableFields": [{"jsonPath": ".spec.x"}, null],
    "schema": {"openAPIV3Schema": {
     "id": "i", "$schema": "http://json-schema.org/schema#", "$ref": "#/definitions/x",
     "description": "esc \" \\ \/ \b \f \n \r \t \u00e9 \u2028 \ud83d\ude00 unicode é 😀",
     "type": "object", "format": "custom-format", "title": "T",
     "default": {"a" : [1, 2],  "b": "\u0041"}, "maximum": 1.5e300, "exclusiveMaximum": true,
     "minimum": -0, "exclusiveMinimum": false, "maxLength": 10, "minLength": 0, "pattern": "^[a-z]+$",
     "maxItems": 3, "minItems": 1, "uniqueItems": true, "multipleOf": 0.001,
     "enum": [1, -2.5e-3, "s", true, false, null, {"o": 1}, [1, [2]], 123456789012345678901234567890],
     "maxProperties": 4, "minProperties": 2, "required": ["a", "b"],
     "items": {"type": "string"},
     "allOf": [{"type": "object"}, null], "oneOf": [], "anyOf": [{"required": ["a"]}],
     "not": {"type": "integer"},
     "properties": {
      "a": {"type": "array", "items": [{"type": "string"}, {"type": "integer"}], "additionalItems": false},
      "b": {"type": "object", "additionalProperties": true},
      "c": {"type": "object", "additionalProperties": false},
      "d": {"type": "object", "additionalProperties": {"type": "string", "default": "x"}},
      "e": {"type": "array", "items": []},
      "f": {"type": "array", "items": null, "additionalItems": {"type": "number"}},
      "g": null,
      "h": {"x-kubernetes-int-or-string": true, "anyOf": [{"type": "integer"}, {"type": "string"}]},
      "i": {"type": "object", "x-kubernetes-embedded-resource": true, "x-kubernetes-preserve-unknown-fields": true},
      "j": {"type": "array", "x-kubernetes-list-type": "map", "x-kubernetes-list-map-keys": ["name", "port"],
            "items": {"type": "object", "properties": {"name": {"type": "string"}, "port": {"type": "integer"}}}},
      "k": {"type": "object", "x-kubernetes-map-type": "atomic", "x-kubernetes-preserve-unknown-fields": false},
      "l": {"type": "string", "default": "", "example": null, "enum": null},
      "m": {"type": "number", "default": 1.0, "example": -1e-7},
      "n": {"type": "boolean", "default": false, "example": true},
      "o": {"type": "array", "default": [], "example": [null]},
      "p": {"type": "object", "default": {}, "example": {"a": {"b": "c"}}},
      "q": {"type": "integer", "default": 9007199254740993, "maximum": 100, "minimum": -100},
      "r": {"properties": {}, "patternProperties": {}, "definitions": {}, "dependencies": {}, "required": [], "enum": [], "allOf": []},
      "s": {"type": "string", "default": null, "items": 5, "externalDocs": null}
     },
     "additionalProperties": null,
     "patternProperties": {"^x-": {"type": "string"}, "^y-": null},
     "dependencies": {"a": ["b", "c"], "b": {"required": ["a"]}, "c": null, "d": [], "e": 7, "f": "s"},
     "definitions": {"x": {"type": "string"}, "y": null},
     "externalDocs": {"description": "docs", "url": "https://example.io", "other": 1},
     "example": "an example",
     "nullable": true,
     "x-kubernetes-preserve-unknown-fields": null,
     "x-kubernetes-embedded-resource": false,
     "x-kubernetes-int-or-string": false,
     "x-kubernetes-list-map-keys": null,
     "x-kubernetes-list-type": "atomic",
     "x-kubernetes-map-type": "granular",
     "x-kubernetes-validations": [{"rule": "self.a > 0", "message": "m", "messageExpression": "'x'", "reason": "FieldValueInvalid", "fieldPath": ".a", "optionalOldSelf": true}, null, {"rule": "true", "reason": null, "optionalOldSelf": null}],
     "unknownSchemaField": {"deep": [[[]]]}
    }}},
   {"name": "v2", "served": false, "storage": false, "schema": null, "subresources": null, "additionalPrinterColumns": [], "selectableFields": null},
   null
  ]},
 "status": {"conditions": [], "acceptedNames": {"plural": "edges", "kind": "Edge"}, "storedVersions": ["v1"], "observedGeneration": 3}
}`

func TestDecodeCRDJSONEdgeCases(t *testing.T) {
	codec, scheme := storeCodec(t)
	mustHandle(t, codec, scheme, []byte(edgeCRD))

	handled := []string{
		`{"apiVersion":"apiextensions.k8s.io/v1","kind":"CustomResourceDefinition"}`,
		" \n\t{\"apiVersion\":\"apiextensions.k8s.io/v1\",\"kind\":\"CustomResourceDefinition\",\"metadata\":null,\"spec\":null,\"status\":null}\r\n ",
		`{"kind":"CustomResourceDefinition","apiVersion":"apiextensions.k8s.io/v1","status":{"conditions":null,"storedVersions":[]}}`,
		`{"kind":"CustomResourceDefinition","apiVersion":"apiextensions.k8s.io/v1","spec":{"versions":[]}}`,
		`{"kind":"CustomResourceDefinition","apiVersion":"apiextensions.k8s.io/v1","metadata":{"creationTimestamp":null,"labels":null}}`,
		// Escaped keys match fields after unquoting.
		`{"kind":"CustomResourceDefinition","apiVersion":"apiextensions.k8s.io/v1","metadata":{"n\u0061me":"x"}}`,
		// Case-sensitive: these are unknown fields, ignored.
		`{"kind":"CustomResourceDefinition","apiVersion":"apiextensions.k8s.io/v1","metadata":{"Name":"x"},"Spec":{"group":"g"}}`,
		`{"kind":"CustomResourceDefinition","apiVersion":"apiextensions.k8s.io/v1","spec":{"conversion":{"webhook":{"clientConfig":{"caBundle":""}}}}}`,
		`{"kind":"CustomResourceDefinition","apiVersion":"apiextensions.k8s.io/v1","spec":{"conversion":{"webhook":{"clientConfig":{"caBundle":"aGVs\nbG8="}}}}}`,
	}
	for _, s := range handled {
		mustHandle(t, codec, scheme, []byte(s))
	}

	// Each is either an error for the codec or a result this decoder does
	// not reproduce; either way the codec must decide.
	declined := []string{
		``,
		`null`,
		`[]`,
		`{"apiVersion":"apiextensions.k8s.io/v1beta1","kind":"CustomResourceDefinition"}`,
		`{"apiVersion":"apiextensions.k8s.io/v1","kind":"CustomResourceDefinitionList"}`,
		`{"kind":"CustomResourceDefinition"}`,
		`{"apiVersion":"apiextensions.k8s.io/v1","kind":"CustomResourceDefinition"} x`,
		`{"apiVersion":"apiextensions.k8s.io/v1","kind":"CustomResourceDefinition",}`,
		`{"apiVersion":"apiextensions.k8s.io/v1","kind":"CustomResourceDefinition","KIND":"Other"}`,
		`{"apiVersion":"apiextensions.k8s.io/v1","kind":"CustomResourceDefinition","apiversion":"v1"}`,
		"{\"apiVersion\":\"apiextensions.k8s.io/v1\",\"kind\":\"CustomResourceDefinition\",\"\u212aind\":\"x\"}",
		`{"apiVersion":"apiextensions.k8s.io/v1","kind":"CustomResourceDefinition","metadata":{"name":"a","name":"b"}}`,
		`{"apiVersion":"apiextensions.k8s.io/v1","kind":"CustomResourceDefinition","metadata":{"labels":{"a":"1","a":"2"}}}`,
		`{"apiVersion":"apiextensions.k8s.io/v1","kind":"CustomResourceDefinition","metadata":{"generation":1.5}}`,
		`{"apiVersion":"apiextensions.k8s.io/v1","kind":"CustomResourceDefinition","metadata":{"generation":1e3}}`,
		`{"apiVersion":"apiextensions.k8s.io/v1","kind":"CustomResourceDefinition","metadata":{"generation":9223372036854775808}}`,
		`{"apiVersion":"apiextensions.k8s.io/v1","kind":"CustomResourceDefinition","metadata":{"generation":"1"}}`,
		`{"apiVersion":"apiextensions.k8s.io/v1","kind":"CustomResourceDefinition","metadata":{"name":1}}`,
		`{"apiVersion":"apiextensions.k8s.io/v1","kind":"CustomResourceDefinition","metadata":{"creationTimestamp":"yesterday"}}`,
		`{"apiVersion":"apiextensions.k8s.io/v1","kind":"CustomResourceDefinition","metadata":{"name":"\ud800"}}`,
		"{\"apiVersion\":\"apiextensions.k8s.io/v1\",\"kind\":\"CustomResourceDefinition\",\"metadata\":{\"name\":\"\xff\"}}",
		"{\"apiVersion\":\"apiextensions.k8s.io/v1\",\"kind\":\"CustomResourceDefinition\",\"metadata\":{\"name\":\"a\nb\"}}",
		`{"apiVersion":"apiextensions.k8s.io/v1","kind":"CustomResourceDefinition","metadata":{"name":"\x"}}`,
		`{"apiVersion":"apiextensions.k8s.io/v1","kind":"CustomResourceDefinition","spec":{"versions":[{"schema":{"openAPIV3Schema":{"additionalProperties":1}}}]}}`,
		`{"apiVersion":"apiextensions.k8s.io/v1","kind":"CustomResourceDefinition","spec":{"versions":[{"schema":{"openAPIV3Schema":{"maximum":1e400}}}]}}`,
		`{"apiVersion":"apiextensions.k8s.io/v1","kind":"CustomResourceDefinition","spec":{"versions":[{"schema":{"openAPIV3Schema":{"type":"a","type":"b"}}}]}}`,
		`{"apiVersion":"apiextensions.k8s.io/v1","kind":"CustomResourceDefinition","spec":{"versions":[{"schema":{"openAPIV3Schema":{"properties":{"a":{},"a":{}}}}}]}}`,
		`{"apiVersion":"apiextensions.k8s.io/v1","kind":"CustomResourceDefinition","spec":{"versions":[{"additionalPrinterColumns":[{"priority":2147483648}]}]}}`,
		`{"apiVersion":"apiextensions.k8s.io/v1","kind":"CustomResourceDefinition","spec":{"conversion":{"webhook":{"clientConfig":{"caBundle":"!!"}}}}}`,
		`{"apiVersion":"apiextensions.k8s.io/v1","kind":"CustomResourceDefinition","spec":{"versions":{}}}`,
		`{"apiVersion":"apiextensions.k8s.io/v1","kind":"CustomResourceDefinition","spec":{"versions":[{"schema":{"openAPIV3Schema":{"default":01}}}]}}`,
		`{"apiVersion":"apiextensions.k8s.io/v1","kind":"CustomResourceDefinition","spec":{"versions":[{"schema":{"openAPIV3Schema":{"default":[1,]}}}]}}`,
		`{"apiVersion":"apiextensions.k8s.io/v1","kind":"CustomResourceDefinition","spec":{"versions":[{"schema":{"openAPIV3Schema":{"default":tru}}}]}}`,
		`{"apiVersion":"apiextensions.k8s.io/v1","kind":"CustomResourceDefinition","spec":{"versions":[{"schema":{"openAPIV3Schema":{"default":"\u12"}}}]}}`,
		`{"apiVersion":"apiextensions.k8s.io/v1","kind":"CustomResourceDefinition","spec":{"versions":[{"schema":{"openAPIV3Schema":{"default":-}}}]}}`,
		`{"apiVersion":"apiextensions.k8s.io/v1","kind":"CustomResourceDefinition","spec":{"versions":[{"schema":{"openAPIV3Schema":{"default":1.}}}]}}`,
		`{"apiVersion":"apiextensions.k8s.io/v1","kind":"CustomResourceDefinition","spec":{"versions":[{"schema":{"openAPIV3Schema":{"default":1e}}}]}}`,
		`{"apiVersion":"apiextensions.k8s.io/v1","kind":"CustomResourceDefinition","spec":{"versions":[{"schema":{"openAPIV3Schema":{"default":{"a" 1}}}}]}}`,
		`{"apiVersion":"apiextensions.k8s.io/v1","kind":"CustomResourceDefinition","spec":{"versions":[{"schema":{"openAPIV3Schema":{"default":{1:1}}}}]}}`,
		`{"apiVersion":"apiextensions.k8s.io/v1","kind":"CustomResourceDefinition","spec":` + strings.Repeat("[", 10001) + strings.Repeat("]", 10001) + `}`,
	}
	for _, s := range declined {
		got := &apiextensionsv1.CustomResourceDefinition{}
		if DecodeCRDJSON([]byte(s), got) {
			t.Errorf("handled, want declined: %.200q", s)
		}
		checkDecode(t, codec, scheme, []byte(s))
	}
}

// TestDecodeCRDJSONMutations mutates valid stored CRDs at random: each
// result must decode as the codec does or be declined, never differ.
func TestDecodeCRDJSONMutations(t *testing.T) {
	codec, scheme := storeCodec(t)
	seeds := [][]byte{[]byte(edgeCRD)}
	for i, crd := range yamlCRDs(t, "testdata/crontabs.yaml") {
		seeds = append(seeds, stored(t, codec, crd, i))
	}
	seeds = append(seeds, stored(t, codec, crdgen.ProviderCRDs(1, 3)[0], 0))
	tokens := []string{`null`, `true`, `false`, `0`, `-1`, `1.5`, `1e400`, `""`, `"x"`, `{}`, `[]`, `[null]`, `{"a":1}`,
		`,`, `:`, `"`, `\`, `\u00e9`, `\ud800`, "\xff", `"type":"string",`, `"properties":{},`, `"items":{},`, `"items":[],`}
	r := rand.New(rand.NewPCG(1, 2))
	iterations := 3000
	if testing.Short() {
		iterations = 300
	}
	handled := 0
	for n := range iterations {
		data := bytes.Clone(seeds[n%len(seeds)])
		for range 1 + r.IntN(3) {
			data = mutate(r, data, tokens)
		}
		if checkDecode(t, codec, scheme, data) {
			handled++
		}
	}
	t.Logf("%d of %d mutations handled", handled, iterations)
	if handled == 0 || handled == iterations {
		t.Fatalf("mutations should be partly handled, partly not: %d of %d", handled, iterations)
	}
}

func mutate(r *rand.Rand, data []byte, tokens []string) []byte {
	if len(data) == 0 {
		return []byte(tokens[r.IntN(len(tokens))])
	}
	i := r.IntN(len(data))
	switch r.IntN(6) {
	case 0: // delete a byte
		return append(data[:i], data[i+1:]...)
	case 1: // change a byte
		data[i] = byte(r.IntN(256))
		return data
	case 2: // insert a token
		return append(data[:i], append([]byte(tokens[r.IntN(len(tokens))]), data[i:]...)...)
	case 3: // replace the value after a colon with a token
		j := bytes.IndexByte(data[i:], ':')
		if j < 0 {
			return data
		}
		start := i + j + 1
		end := start
		for end < len(data) && data[end] != ',' && data[end] != '}' && data[end] != ']' {
			end++
		}
		return append(data[:start], append([]byte(tokens[r.IntN(len(tokens))]), data[end:]...)...)
	case 4: // duplicate a key/value pair
		j := bytes.Index(data[i:], []byte(`,"`))
		if j < 0 {
			return data
		}
		start := i + j
		end := start + 1
		for end < len(data) && data[end] != ',' && data[end] != '}' {
			end++
		}
		return append(data[:end], append(bytes.Clone(data[start:end]), data[end:]...)...)
	default: // change a key's case
		j := bytes.IndexByte(data[i:], '"')
		if j < 0 || i+j+1 >= len(data) {
			return data
		}
		c := data[i+j+1]
		if 'a' <= c && c <= 'z' {
			data[i+j+1] = c - 'a' + 'A'
		}
		return data
	}
}

func FuzzDecodeCRDJSON(f *testing.F) {
	codec, scheme := storeCodec(f)
	f.Add([]byte(edgeCRD))
	for i, crd := range yamlCRDs(f, filepath.Join("testdata", "crontabs.yaml")) {
		f.Add(stored(f, codec, crd, i))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		checkDecode(t, codec, scheme, data)
	})
}

// BenchmarkDecodeCRD decodes stored provider CRDs (~35–70 KB each) with the
// store's codec and with DecodeCRDJSON (plus the codec's defaulting);
// compare µs/CRD with -count.
func BenchmarkDecodeCRD(b *testing.B) {
	codec, scheme := storeCodec(b)
	crds := crdgen.ProviderCRDs(20, 1)
	data := make([][]byte, len(crds))
	size := 0
	for i, crd := range crds {
		data[i] = stored(b, codec, crd, i)
		size += len(data[i])
	}
	report := func(b *testing.B) {
		b.ReportMetric(float64(b.Elapsed().Microseconds())/float64(b.N*len(data)), "µs/CRD")
		b.SetBytes(int64(size))
	}
	b.Run("codec", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			for _, d := range data {
				if _, _, err := codec.Decode(d, nil, &apiextensionsv1.CustomResourceDefinition{}); err != nil {
					b.Fatal(err)
				}
			}
		}
		report(b)
	})
	b.Run("single-pass", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			for _, d := range data {
				crd := &apiextensionsv1.CustomResourceDefinition{}
				if !DecodeCRDJSON(d, crd) {
					b.Fatal("not handled")
				}
				scheme.Default(crd)
			}
		}
		report(b)
	})
}
