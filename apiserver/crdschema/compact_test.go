package crdschema

import (
	"encoding/json"
	"fmt"
	"reflect"
	"testing"

	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
)

// nodeCount counts schema nodes reachable from the versions, once per
// distinct pointer or map: what the cache holds.
func nodeCount(crd *apiextensionsv1.CustomResourceDefinition) int {
	seenMaps := map[uintptr]bool{}
	seenNodes := map[*apiextensionsv1.JSONSchemaProps]bool{}
	var walk func(s *apiextensionsv1.JSONSchemaProps) int
	walkMap := func(m map[string]apiextensionsv1.JSONSchemaProps) int {
		if m == nil || seenMaps[reflect.ValueOf(m).Pointer()] {
			return 0
		}
		seenMaps[reflect.ValueOf(m).Pointer()] = true
		n := 0
		for _, v := range m {
			n += walk(&v)
		}
		return n
	}
	walkPtr := func(s *apiextensionsv1.JSONSchemaProps) int {
		if s == nil || seenNodes[s] {
			return 0
		}
		seenNodes[s] = true
		return walk(s)
	}
	walk = func(s *apiextensionsv1.JSONSchemaProps) int {
		n := 1 + walkMap(s.Properties)
		if s.Items != nil {
			n += walkPtr(s.Items.Schema)
		}
		if s.AdditionalProperties != nil {
			n += walkPtr(s.AdditionalProperties.Schema)
		}
		return n
	}
	n := 0
	for _, v := range crd.Spec.Versions {
		if v.Schema != nil {
			n += walkPtr(v.Schema.OpenAPIV3Schema)
		}
	}
	return n
}

// providerStyleCRD is shaped like a generated provider CRD: two versions
// with the same schema, initProvider mirroring forProvider but for the
// required fields, and a status that repeats parts of the spec.
func providerStyleCRD() *apiextensionsv1.CustomResourceDefinition {
	ref := apiextensionsv1.JSONSchemaProps{Type: "object", Description: "A reference to another object.",
		Properties: map[string]apiextensionsv1.JSONSchemaProps{
			"name":   {Type: "string", Description: "Name of the referenced object."},
			"policy": {Type: "object", Properties: map[string]apiextensionsv1.JSONSchemaProps{"resolve": {Type: "string", Enum: []apiextensionsv1.JSON{{Raw: []byte(`"Always"`)}, {Raw: []byte(`"IfNotPresent"`)}}}}},
		}, Required: []string{"name"}}
	params := func(required bool) apiextensionsv1.JSONSchemaProps {
		p := apiextensionsv1.JSONSchemaProps{Type: "object", Properties: map[string]apiextensionsv1.JSONSchemaProps{}}
		for i := range 30 {
			p.Properties[fmt.Sprintf("field%d", i)] = apiextensionsv1.JSONSchemaProps{Type: "string", Description: fmt.Sprintf("Field %d of the resource.", i)}
			p.Properties[fmt.Sprintf("field%dRef", i)] = ref
			p.Properties[fmt.Sprintf("block%d", i)] = apiextensionsv1.JSONSchemaProps{Type: "array", Items: &apiextensionsv1.JSONSchemaPropsOrArray{
				Schema: &apiextensionsv1.JSONSchemaProps{Type: "object", Properties: map[string]apiextensionsv1.JSONSchemaProps{
					"key": {Type: "string"}, "value": {Type: "string"}, "selector": ref,
				}}}}
		}
		if required {
			p.Required = []string{"field0"}
		}
		return p
	}
	schema := func() *apiextensionsv1.CustomResourceValidation {
		return &apiextensionsv1.CustomResourceValidation{OpenAPIV3Schema: &apiextensionsv1.JSONSchemaProps{
			Type: "object", Properties: map[string]apiextensionsv1.JSONSchemaProps{
				"spec": {Type: "object", Properties: map[string]apiextensionsv1.JSONSchemaProps{
					"forProvider": params(true), "initProvider": params(false),
				}},
				"status": {Type: "object", Properties: map[string]apiextensionsv1.JSONSchemaProps{"atProvider": params(false)}},
			}}}
	}
	return &apiextensionsv1.CustomResourceDefinition{Spec: apiextensionsv1.CustomResourceDefinitionSpec{
		Versions: []apiextensionsv1.CustomResourceDefinitionVersion{{Name: "v1beta1", Schema: schema()}, {Name: "v1beta2", Schema: schema()}},
	}}
}

func TestCompactSchemasSharesAndKeepsContent(t *testing.T) {
	for name, crd := range map[string]*apiextensionsv1.CustomResourceDefinition{
		"crontabs": readCRD(t, "crontabs.yaml"), "widgets": readCRD(t, "widgets.yaml"),
		"nonstructural": readCRD(t, "nonstructural.yaml"), "large": largeCRD(), "provider": providerStyleCRD(),
	} {
		t.Run(name, func(t *testing.T) {
			before := crd.DeepCopy()
			wantJSON, _ := json.Marshal(before)
			nodes := nodeCount(crd)
			CompactSchemas(crd)
			if !reflect.DeepEqual(before, crd) {
				t.Fatal("compaction changed the CRD")
			}
			if got, _ := json.Marshal(crd); string(got) != string(wantJSON) {
				t.Fatal("compaction changed the CRD's JSON")
			}
			after := nodeCount(crd)
			t.Logf("%d schema nodes before, %d after", nodes, after)
			if name == "provider" {
				// Both versions are one tree; within it initProvider and
				// atProvider are one, and the reference shape is shared.
				if crd.Spec.Versions[0].Schema.OpenAPIV3Schema != crd.Spec.Versions[1].Schema.OpenAPIV3Schema {
					t.Error("identical version schemas are not shared")
				}
				if after*5 > nodes {
					t.Errorf("%d nodes after compaction of %d: want at most a fifth", after, nodes)
				}
			}
		})
	}
}

// TestCompactSchemasKeysEveryField: siblings that differ in one field (or
// one field of a nested struct, or nil against empty) must stay
// different. A field the interner's key leaves out merges two of them, so
// a JSONSchemaProps gaining a field fails here until the key has it.
func TestCompactSchemasKeysEveryField(t *testing.T) {
	schemaType := reflect.TypeFor[apiextensionsv1.JSONSchemaProps]()
	variants := []apiextensionsv1.JSONSchemaProps{{}} // and the empty one
	for i := range schemaType.NumField() {
		field := schemaType.Field(i)
		for _, value := range fieldVariants(field.Type) {
			var s apiextensionsv1.JSONSchemaProps
			reflect.ValueOf(&s).Elem().Field(i).Set(value)
			variants = append(variants, s)
		}
	}
	if len(variants) < 2*schemaType.NumField() {
		t.Fatalf("only %d variants for %d fields", len(variants), schemaType.NumField())
	}
	properties := map[string]apiextensionsv1.JSONSchemaProps{}
	for i, v := range variants {
		properties[fmt.Sprintf("p%03d", i)] = v
		// The same variants again, nested: shared with the first ones.
		properties[fmt.Sprintf("nested%03d", i)] = apiextensionsv1.JSONSchemaProps{Type: "object",
			Properties: map[string]apiextensionsv1.JSONSchemaProps{"x": v}}
	}
	crd := &apiextensionsv1.CustomResourceDefinition{Spec: apiextensionsv1.CustomResourceDefinitionSpec{
		Versions: []apiextensionsv1.CustomResourceDefinitionVersion{{Name: "v1", Schema: &apiextensionsv1.CustomResourceValidation{
			OpenAPIV3Schema: &apiextensionsv1.JSONSchemaProps{Type: "object", Properties: properties}}}},
	}}
	before := crd.DeepCopy()
	CompactSchemas(crd)
	if !reflect.DeepEqual(before, crd) {
		got := crd.Spec.Versions[0].Schema.OpenAPIV3Schema.Properties
		want := before.Spec.Versions[0].Schema.OpenAPIV3Schema.Properties
		for name := range want {
			if !reflect.DeepEqual(got[name], want[name]) {
				t.Errorf("%s changed: %+v, want %+v", name, got[name], want[name])
			}
		}
		t.Fatal("compaction merged schemas that differ")
	}
}

// fieldVariants are values of t that differ from its zero value (but for
// a nested struct's) and from each other: a zero nested struct and one per
// single part of it set, the empty (not nil) slice or map, a pointer to
// the zero value.
func fieldVariants(t reflect.Type) []reflect.Value {
	switch t.Kind() {
	case reflect.Pointer:
		var out []reflect.Value
		for _, v := range append([]reflect.Value{reflect.Zero(t.Elem())}, fieldVariants(t.Elem())...) {
			p := reflect.New(t.Elem())
			p.Elem().Set(v)
			out = append(out, p)
		}
		return out
	case reflect.Slice:
		out := []reflect.Value{reflect.MakeSlice(t, 0, 0)}
		for _, v := range fieldVariants(t.Elem()) {
			s := reflect.MakeSlice(t, 1, 1)
			s.Index(0).Set(v)
			out = append(out, s)
		}
		return out
	case reflect.Map:
		out := []reflect.Value{reflect.MakeMap(t)}
		for _, v := range fieldVariants(t.Elem()) {
			m := reflect.MakeMap(t)
			m.SetMapIndex(reflect.ValueOf("k").Convert(t.Key()), v)
			out = append(out, m)
		}
		return out
	case reflect.Struct:
		if t == reflect.TypeFor[apiextensionsv1.JSONSchemaProps]() {
			// A nested schema: one that differs from an empty one.
			return []reflect.Value{reflect.ValueOf(apiextensionsv1.JSONSchemaProps{Description: "nested"})}
		}
		out := []reflect.Value{reflect.New(t).Elem()} // the zero struct, with each single part set below
		for i := range t.NumField() {
			for _, v := range fieldVariants(t.Field(i).Type) {
				s := reflect.New(t).Elem()
				s.Field(i).Set(v)
				out = append(out, s)
			}
		}
		return out
	case reflect.String:
		return []reflect.Value{reflect.ValueOf("x").Convert(t)}
	case reflect.Bool:
		return []reflect.Value{reflect.ValueOf(true)}
	case reflect.Int64:
		return []reflect.Value{reflect.ValueOf(int64(7))}
	case reflect.Float64:
		return []reflect.Value{reflect.ValueOf(1.5)}
	case reflect.Uint8:
		return []reflect.Value{reflect.ValueOf(uint8('x'))}
	}
	panic("fieldVariants: no variants for " + t.String())
}

func BenchmarkCompactSchemasLarge(b *testing.B) {
	crd := providerStyleCRD()
	for b.Loop() {
		CompactSchemas(crd.DeepCopy())
	}
}

// TestValidateCRDLeavesItsInputAlone: validation converts without a copy
// (readOnlyInternal), so it must not change the CRDs it is given, which
// may be the watch cache's own (compacted, shared) objects.
func TestValidateCRDLeavesItsInputAlone(t *testing.T) {
	for name, crd := range map[string]*apiextensionsv1.CustomResourceDefinition{
		"crontabs": readCRD(t, "crontabs.yaml"), "widgets": readCRD(t, "widgets.yaml"),
		"nonstructural": readCRD(t, "nonstructural.yaml"), "large": largeCRD(),
	} {
		CompactSchemas(crd)
		before := crd.DeepCopy()
		_ = ValidateCRD(crd)
		_ = ValidateCRDUpdate(crd, crd)
		if !reflect.DeepEqual(before, crd) {
			t.Errorf("%s: validation changed the CRD", name)
		}
	}
}

// TestCopySharingSchemas: equal to a deep copy, sharing the schemas only:
// what a caller changes in the copy (metadata, status, versions' other
// fields) leaves the original alone.
func TestCopySharingSchemas(t *testing.T) {
	crd := readCRD(t, "crontabs.yaml")
	crd.Labels = map[string]string{"a": "b"}
	crd.Finalizers = []string{"customresourcecleanup.apiextensions.k8s.io"}
	crd.Status.Conditions = []apiextensionsv1.CustomResourceDefinitionCondition{{Type: apiextensionsv1.Established, Status: apiextensionsv1.ConditionTrue}}
	crd.Status.StoredVersions = []string{crd.Spec.Versions[0].Name}
	crd.Spec.Versions[0].AdditionalPrinterColumns = []apiextensionsv1.CustomResourceColumnDefinition{{Name: "Age", Type: "date", JSONPath: ".metadata.creationTimestamp"}}
	before := crd.DeepCopy()

	cp := CopySharingSchemas(crd)
	if !reflect.DeepEqual(cp, before) {
		t.Fatal("the copy differs from a deep copy")
	}
	for i := range crd.Spec.Versions {
		if crd.Spec.Versions[i].Schema.OpenAPIV3Schema != cp.Spec.Versions[i].Schema.OpenAPIV3Schema {
			t.Errorf("version %d: schema not shared", i)
		}
		if crd.Spec.Versions[i].Schema == cp.Spec.Versions[i].Schema {
			t.Errorf("version %d: the CustomResourceValidation itself is shared (setting its schema would show through)", i)
		}
	}
	cp.Labels["a"] = "changed"
	cp.Finalizers[0] = "changed"
	cp.Status.Conditions[0].Status = apiextensionsv1.ConditionFalse
	cp.Status.StoredVersions[0] = "changed"
	cp.Spec.Versions[0].Name = "changed"
	cp.Spec.Versions[0].AdditionalPrinterColumns[0].Name = "changed"
	cp.Spec.Versions[0].Schema.OpenAPIV3Schema = nil
	cp.Spec.Names.Plural = "changed"
	cp.Spec.Conversion.Strategy = "changed"
	if !reflect.DeepEqual(crd, before) {
		t.Fatal("changing the copy changed the original")
	}
}
