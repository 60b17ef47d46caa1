package crdschema

import (
	"context"
	"fmt"
	"strings"
	"testing"

	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/yaml"
)

// largeDepth gives a schema of about 13,000 YAML lines (0.8 MB), the size
// class of prometheus-operator's biggest CRDs and under etcd's 1.5 MB limit.
const largeDepth = 4

// largeCRD generates a deeply nested CRD: every object level has described
// scalars with formats, enums, bounds and defaults, a string map, a
// preserve-unknown-fields blob, and three nested children (an object, a
// list-map of objects, and a list of objects); objects along the "nested"
// chain carry CEL rules.
func largeCRD() *apiextensionsv1.CustomResourceDefinition {
	crd := &apiextensionsv1.CustomResourceDefinition{
		TypeMeta:   metav1.TypeMeta{APIVersion: "apiextensions.k8s.io/v1", Kind: "CustomResourceDefinition"},
		ObjectMeta: metav1.ObjectMeta{Name: "monitors.monitoring.example.io"},
		Spec: apiextensionsv1.CustomResourceDefinitionSpec{
			Group: "monitoring.example.io",
			Scope: apiextensionsv1.NamespaceScoped,
			Names: apiextensionsv1.CustomResourceDefinitionNames{Plural: "monitors", Kind: "Monitor"},
			Versions: []apiextensionsv1.CustomResourceDefinitionVersion{{
				Name: "v1", Served: true, Storage: true,
				Subresources: &apiextensionsv1.CustomResourceSubresources{Status: &apiextensionsv1.CustomResourceSubresourceStatus{}},
				Schema: &apiextensionsv1.CustomResourceValidation{OpenAPIV3Schema: &apiextensionsv1.JSONSchemaProps{
					Type:        "object",
					Description: "Monitor declares how a group of targets is scraped.",
					Properties: map[string]apiextensionsv1.JSONSchemaProps{
						"spec":   largeLevel(largeDepth, true),
						"status": {Type: "object", XPreserveUnknownFields: ptr.To(true)},
					},
				}},
			}},
		},
	}
	DefaultCRD(crd)
	return crd
}

func largeLevel(depth int, celChain bool) apiextensionsv1.JSONSchemaProps {
	desc := func(what string) string {
		return fmt.Sprintf("%s at depth %d. %s", what, depth, strings.Repeat("It is documented as thoroughly as generated operator APIs are. ", 2))
	}
	s := apiextensionsv1.JSONSchemaProps{
		Type:        "object",
		Description: desc("A configuration block"),
		Required:    []string{"name"},
		Properties: map[string]apiextensionsv1.JSONSchemaProps{
			"name":     {Type: "string", Description: desc("Name"), MaxLength: ptr.To[int64](63), Pattern: `^[a-z0-9]([-a-z0-9]*[a-z0-9])?$`},
			"interval": {Type: "string", Description: desc("Interval"), MaxLength: ptr.To[int64](16), Pattern: `^(0|(([0-9]+)h)?(([0-9]+)m)?(([0-9]+)s)?)$`, Default: &apiextensionsv1.JSON{Raw: []byte(`"30s"`)}},
			"scheme":   {Type: "string", Description: desc("Scheme"), Enum: []apiextensionsv1.JSON{{Raw: []byte(`"http"`)}, {Raw: []byte(`"https"`)}}, Default: &apiextensionsv1.JSON{Raw: []byte(`"http"`)}},
			"port":     {Description: desc("Port"), XIntOrString: true, AnyOf: []apiextensionsv1.JSONSchemaProps{{Type: "integer"}, {Type: "string"}}},
			"limit":    {Type: "integer", Format: "int32", Description: desc("Limit"), Minimum: ptr.To[float64](0), Maximum: ptr.To[float64](10000)},
			"ratio":    {Type: "number", Description: desc("Ratio"), Minimum: ptr.To[float64](0), Maximum: ptr.To[float64](1)},
			"enabled":  {Type: "boolean", Description: desc("Enabled"), Default: &apiextensionsv1.JSON{Raw: []byte(`true`)}},
			"since":    {Type: "string", Format: "date-time", Description: desc("Since")},
			"labels":   {Type: "object", Description: desc("Labels"), MaxProperties: ptr.To[int64](32), AdditionalProperties: &apiextensionsv1.JSONSchemaPropsOrBool{Allows: true, Schema: &apiextensionsv1.JSONSchemaProps{Type: "string", MaxLength: ptr.To[int64](63)}}},
			"raw":      {Type: "object", Description: desc("Raw passthrough"), XPreserveUnknownFields: ptr.To(true)},
			"tags":     {Type: "array", Description: desc("Tags"), MaxItems: ptr.To[int64](16), XListType: ptr.To("set"), Items: &apiextensionsv1.JSONSchemaPropsOrArray{Schema: &apiextensionsv1.JSONSchemaProps{Type: "string", MaxLength: ptr.To[int64](63)}}},
		},
	}
	if celChain {
		s.XValidations = apiextensionsv1.ValidationRules{
			{Rule: "!has(self.limit) || self.limit >= 1 || !self.enabled", Message: "an enabled block needs a positive limit"},
			{Rule: "self.name.startsWith('x-') == false", MessageExpression: "'name ' + self.name + ' uses the reserved x- prefix'"},
		}
	}
	if depth == 0 {
		return s
	}
	s.Properties["nested"] = largeLevel(depth-1, celChain)
	endpoint := largeLevel(depth-1, false)
	s.Properties["endpoints"] = apiextensionsv1.JSONSchemaProps{
		Type: "array", Description: desc("Endpoints"), MaxItems: ptr.To[int64](8),
		XListType: ptr.To("map"), XListMapKeys: []string{"name"},
		Items: &apiextensionsv1.JSONSchemaPropsOrArray{Schema: &endpoint},
	}
	rule := largeLevel(depth-1, false)
	s.Properties["rules"] = apiextensionsv1.JSONSchemaProps{
		Type: "array", Description: desc("Rules"), MaxItems: ptr.To[int64](8),
		Items: &apiextensionsv1.JSONSchemaPropsOrArray{Schema: &rule},
	}
	return s
}

// largeObject fills every level of the large schema with one element per list.
func largeObject(depth int) map[string]any {
	o := map[string]any{
		"name":   fmt.Sprintf("level-%d", depth),
		"port":   "metrics",
		"limit":  int64(100),
		"ratio":  0.5,
		"since":  "2024-05-01T10:00:00Z",
		"labels": map[string]any{"team": "observability"},
		"raw":    map[string]any{"anything": []any{"goes", int64(1)}},
		"tags":   []any{"a", "b"},
	}
	if depth > 0 {
		o["nested"] = largeObject(depth - 1)
		o["endpoints"] = []any{largeObject(depth - 1)}
		o["rules"] = []any{largeObject(depth - 1)}
	}
	return o
}

func largeCR() *unstructured.Unstructured {
	return &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": "monitoring.example.io/v1",
		"kind":       "Monitor",
		"metadata":   map[string]any{"name": "big", "namespace": "monitoring"},
		"spec":       largeObject(largeDepth),
	}}
}

func TestLargeGeneratedCRD(t *testing.T) {
	crd := largeCRD()
	data, err := yaml.Marshal(crd)
	if err != nil {
		t.Fatal(err)
	}
	lines := strings.Count(string(data), "\n")
	if lines < 5000 {
		t.Fatalf("generated CRD has only %d lines; the test wants a big one", lines)
	}
	t.Logf("generated CRD: %d YAML lines, %d bytes", lines, len(data))
	if errs := ValidateCRD(crd); len(errs) > 0 {
		t.Fatalf("large CRD invalid: %v", errs.ToAggregate())
	}
	v := compileVersion(t, crd, "v1")

	obj := largeCR()
	obj.Object["spec"].(map[string]any)["nested"].(map[string]any)["unknownDeep"] = "x"
	v.Default(obj)
	pruned, err := v.Prune(obj)
	if err != nil {
		t.Fatal(err)
	}
	if len(pruned) != 1 || pruned[0] != "spec.nested.unknownDeep" {
		t.Errorf("pruned = %v", pruned)
	}
	if got, _, _ := unstructured.NestedString(obj.Object, "spec", "nested", "nested", "nested", "interval"); got != "30s" {
		t.Errorf("deep default interval = %q", got)
	}
	if errs := v.Validate(context.Background(), obj, nil); len(errs) > 0 {
		t.Fatalf("valid large CR rejected: %v", errs.ToAggregate())
	}

	deep := obj.Object["spec"].(map[string]any)["endpoints"].([]any)[0].(map[string]any)["rules"].([]any)[0].(map[string]any)
	deep["limit"] = int64(20000)
	chain := obj.Object["spec"].(map[string]any)["nested"].(map[string]any)["nested"].(map[string]any)
	chain["name"] = "x-reserved"
	requireErrors(t, v.Validate(context.Background(), obj, nil),
		`spec.endpoints[0].rules[0].limit: Invalid value: 20000: spec.endpoints[0].rules[0].limit in body should be less than or equal to 10000`,
		`spec.nested.nested: Invalid value: name x-reserved uses the reserved x- prefix`,
	)

	schema, err := v.OpenAPISchema()
	if err != nil {
		t.Fatal(err)
	}
	if !strings.HasPrefix(schema.Properties["spec"].Properties["nested"].Description, "A configuration block at depth 3.") {
		t.Errorf("nested description = %q", schema.Properties["spec"].Properties["nested"].Description)
	}
}

func BenchmarkCompileLargeCRD(b *testing.B) {
	crd := largeCRD()
	b.ReportAllocs()
	for b.Loop() {
		// No UID: bypasses the cache, measuring a real compile.
		if _, err := Compile(crd, "v1"); err != nil {
			b.Fatal(err)
		}
	}
	reportMicros(b)
}

// reportMicros adds µs/op, the unit the integrator budgets requests in.
func reportMicros(b *testing.B) {
	b.ReportMetric(float64(b.Elapsed().Microseconds())/float64(b.N), "µs/op")
}

func BenchmarkValidateCRDLarge(b *testing.B) {
	crd := largeCRD()
	b.ReportAllocs()
	for b.Loop() {
		if errs := ValidateCRD(crd); len(errs) > 0 {
			b.Fatal(errs.ToAggregate())
		}
	}
	reportMicros(b)
}

func benchmarkCR(b *testing.B, v *Version, newObj func() *unstructured.Unstructured) {
	ctx := context.Background()
	objs := make([]*unstructured.Unstructured, 0, 1024)
	b.ReportAllocs()
	for b.Loop() {
		if len(objs) == 0 {
			// Build inputs outside the timer: the pipeline mutates its object.
			b.StopTimer()
			for range cap(objs) {
				objs = append(objs, newObj())
			}
			b.StartTimer()
		}
		obj := objs[len(objs)-1]
		objs = objs[:len(objs)-1]
		v.Default(obj)
		if _, err := v.Prune(obj); err != nil {
			b.Fatal(err)
		}
		if errs := v.Validate(ctx, obj, nil); len(errs) > 0 {
			b.Fatal(errs.ToAggregate())
		}
	}
	reportMicros(b)
}

// BenchmarkDefaultPruneValidateLargeCR is the create path of one CR of the large CRD.
func BenchmarkDefaultPruneValidateLargeCR(b *testing.B) {
	v, err := Compile(largeCRD(), "v1")
	if err != nil {
		b.Fatal(err)
	}
	benchmarkCR(b, v, largeCR)
}

// BenchmarkDefaultPruneValidateCronTab is the create path of a typical small CR with CEL rules.
func BenchmarkDefaultPruneValidateCronTab(b *testing.B) {
	v := compileVersion(b, loadCRD(b, "crontabs.yaml"), "v1")
	template := object(b, validCronTab)
	benchmarkCR(b, v, template.DeepCopy)
}
