package crdschema

import (
	"encoding/json"
	"reflect"
	"strings"
	"testing"

	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"
)

// embeddingCRD has embedded resources at the root, in a list and in a map,
// a preserve-unknown-fields object and selectable fields.
func embeddingCRD() *apiextensionsv1.CustomResourceDefinition {
	embedded := apiextensionsv1.JSONSchemaProps{Type: "object", XEmbeddedResource: true, XPreserveUnknownFields: ptr.To(true)}
	crd := &apiextensionsv1.CustomResourceDefinition{
		ObjectMeta: metav1.ObjectMeta{Name: "holders.example.com"},
		Spec: apiextensionsv1.CustomResourceDefinitionSpec{
			Group: "example.com", Scope: apiextensionsv1.ClusterScoped,
			Names: apiextensionsv1.CustomResourceDefinitionNames{Plural: "holders", Kind: "Holder"},
			Versions: []apiextensionsv1.CustomResourceDefinitionVersion{{
				Name: "v1", Served: true, Storage: true,
				SelectableFields: []apiextensionsv1.SelectableField{{JSONPath: ".spec.color"}},
				Schema: &apiextensionsv1.CustomResourceValidation{OpenAPIV3Schema: &apiextensionsv1.JSONSchemaProps{
					Type: "object",
					Properties: map[string]apiextensionsv1.JSONSchemaProps{
						"spec": {Type: "object", Required: []string{"template"}, Properties: map[string]apiextensionsv1.JSONSchemaProps{
							"color":    {Type: "string", Description: "Color of the holder."},
							"template": embedded,
							"list":     {Type: "array", Items: &apiextensionsv1.JSONSchemaPropsOrArray{Schema: &embedded}},
							"byName":   {Type: "object", AdditionalProperties: &apiextensionsv1.JSONSchemaPropsOrBool{Allows: true, Schema: &embedded}},
							"anything": {Type: "object", XPreserveUnknownFields: ptr.To(true)},
						}},
					},
				}},
			}},
		},
	}
	DefaultCRD(crd)
	return crd
}

type schemaCase struct {
	crd      *apiextensionsv1.CustomResourceDefinition
	versions []string
}

// schemaCases are the CRDs and versions the OpenAPI schema tests build.
func schemaCases(t *testing.T) []schemaCase {
	return []schemaCase{
		{loadCRD(t, "crontabs.yaml"), []string{"v1", "v2"}},
		{loadCRD(t, "widgets.yaml"), []string{"v1alpha1", "v1"}},
		{largeCRD(), []string{"v1"}},
		{embeddingCRD(), []string{"v1"}},
	}
}

// OpenAPISchema builds the kind's schema alone; it must be what kube's
// builder puts in the whole document.
func TestOpenAPISchemaIsTheDocumentsSchema(t *testing.T) {
	for _, tc := range schemaCases(t) {
		for _, version := range tc.versions {
			v := compileVersion(t, tc.crd, version)
			doc, err := v.OpenAPIV3()
			if err != nil {
				t.Fatal(err)
			}
			got, err := v.OpenAPISchema()
			if err != nil {
				t.Fatal(err)
			}
			if !reflect.DeepEqual(jsonValue(t, got), jsonValue(t, doc.Components.Schemas[v.ModelName()])) {
				gotJSON, _ := json.Marshal(got)
				wantJSON, _ := json.Marshal(doc.Components.Schemas[v.ModelName()])
				t.Errorf("%s %s:\n got %.3000s\nwant %.3000s", tc.crd.Name, version, gotJSON, wantJSON)
			}
		}
	}
}

// nullableCRD has what kube's v2 builder strips: int-or-string, nullable
// fields (one required), a preserve-unknown-fields object and list, and
// an anyOf.
func nullableCRD() *apiextensionsv1.CustomResourceDefinition {
	crd := embeddingCRD()
	crd.Name, crd.Spec.Names = "nullables.example.com", apiextensionsv1.CustomResourceDefinitionNames{Plural: "nullables", Kind: "Nullable"}
	spec := crd.Spec.Versions[0].Schema.OpenAPIV3Schema.Properties["spec"]
	spec.Required = append(spec.Required, "maybe")
	spec.Properties["port"] = apiextensionsv1.JSONSchemaProps{XIntOrString: true, Description: "A port, by number or name."}
	spec.Properties["maybe"] = apiextensionsv1.JSONSchemaProps{Type: "object", Nullable: true,
		Properties: map[string]apiextensionsv1.JSONSchemaProps{"inner": {Type: "string"}}}
	spec.Properties["maybeList"] = apiextensionsv1.JSONSchemaProps{Type: "array", Nullable: true,
		Items: &apiextensionsv1.JSONSchemaPropsOrArray{Schema: &apiextensionsv1.JSONSchemaProps{Type: "string"}}}
	spec.Properties["raw"] = apiextensionsv1.JSONSchemaProps{Type: "array", XPreserveUnknownFields: ptr.To(true),
		Items: &apiextensionsv1.JSONSchemaPropsOrArray{Schema: &apiextensionsv1.JSONSchemaProps{Type: "string"}}}
	spec.Properties["either"] = apiextensionsv1.JSONSchemaProps{Type: "string",
		AnyOf: []apiextensionsv1.JSONSchemaProps{{Format: "ipv4"}, {Format: "ipv6"}}}
	crd.Spec.Versions[0].Schema.OpenAPIV3Schema.Properties["spec"] = spec
	return crd
}

// OpenAPISchemaV2 must be what kube's v2 builder puts in its document
// (refs aside: those are moved under #/definitions/ when assembled).
func TestOpenAPISchemaV2IsKubesV2Schema(t *testing.T) {
	preserveRoot := embeddingCRD()
	preserveRoot.Spec.Versions[0].Schema.OpenAPIV3Schema.XPreserveUnknownFields = ptr.To(true)
	for _, tc := range append(schemaCases(t), schemaCase{nullableCRD(), []string{"v1"}}, schemaCase{preserveRoot, []string{"v1"}}) {
		for _, version := range tc.versions {
			v := compileVersion(t, tc.crd, version)
			doc, err := v.OpenAPIV2()
			if err != nil {
				t.Fatal(err)
			}
			got, err := v.OpenAPISchemaV2()
			if err != nil {
				t.Fatal(err)
			}
			gotJSON, _ := json.Marshal(got)
			gotJSON = []byte(strings.ReplaceAll(string(gotJSON), "#/components/schemas/", "#/definitions/"))
			want := doc.Definitions[v.ModelName()]
			wantJSON, _ := json.Marshal(want)
			if !reflect.DeepEqual(jsonValue(t, json.RawMessage(gotJSON)), jsonValue(t, want)) {
				t.Errorf("%s %s:\n got %.3000s\nwant %.3000s", tc.crd.Name, version, gotJSON, wantJSON)
			}
			if strings.Contains(string(gotJSON), `"anyOf"`) || strings.Contains(string(gotJSON), `"nullable"`) {
				t.Errorf("%s %s: v2 schema with anyOf or nullable", tc.crd.Name, version)
			}
		}
	}
}

func jsonValue(t *testing.T, v any) any {
	t.Helper()
	data, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	var value any
	if err := json.Unmarshal(data, &value); err != nil {
		t.Fatal(err)
	}
	return value
}

func BenchmarkOpenAPISchemaCronTab(b *testing.B) {
	v := compileVersion(b, loadCRD(b, "crontabs.yaml"), "v1")
	b.ReportAllocs()
	for b.Loop() {
		if _, err := v.OpenAPISchema(); err != nil {
			b.Fatal(err)
		}
	}
}

func BenchmarkOpenAPISchemaLarge(b *testing.B) {
	v := compileVersion(b, largeCRD(), "v1")
	b.ReportAllocs()
	for b.Loop() {
		if _, err := v.OpenAPISchema(); err != nil {
			b.Fatal(err)
		}
	}
}
