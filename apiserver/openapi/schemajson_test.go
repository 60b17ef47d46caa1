package openapi

import (
	"bytes"
	"math"
	"testing"

	"github.com/devplane/devplane/apiserver/crdschema"
	"k8s.io/kube-openapi/pkg/validation/spec"
)

// checkSchemaJSON compares appendSchemaJSON with MarshalJSON on s, and,
// when strict, that it wrote every node itself.
func checkSchemaJSON(t *testing.T, name string, s *spec.Schema, strict bool) {
	t.Helper()
	want, wantErr := s.MarshalJSON()
	got, err := appendSchemaJSON([]byte("prefix"), s)
	if (err != nil) != (wantErr != nil) {
		t.Fatalf("%s: error %v, MarshalJSON's %v", name, err, wantErr)
	}
	if err != nil {
		return
	}
	if !bytes.Equal(got[len("prefix"):], want) {
		t.Errorf("%s: differs from MarshalJSON:\n got %s\nwant %s", name, got[len("prefix"):], want)
	}
	if strict {
		w := schemaJSON{}
		if !w.schema(s) {
			t.Errorf("%s: a node was left to MarshalJSON", name)
		}
	}
}

// Every generated definition, in both flavors, is written here whole and
// as MarshalJSON writes it.
func TestSchemaJSONMatchesMarshalJSONOnGeneratedDefinitions(t *testing.T) {
	for _, refPrefix := range []string{v2RefPrefix, v3RefPrefix} {
		cache := newDefinitionCache(refPrefix)
		n := 0
		for name := range definitionGenerators() {
			schema, _ := cache.lookup(name)
			checkSchemaJSON(t, refPrefix+name, schema, true)
			n++
		}
		if n < 500 {
			t.Errorf("only %d generated definitions", n)
		}
	}
}

// CRD schemas as the spec types hold them (what a supplied definition
// without JSON is), some with nodes left to MarshalJSON.
func TestSchemaJSONMatchesMarshalJSONOnCRDSchemas(t *testing.T) {
	crds := append(testdataCRDs(t), providerCRDs(10)...)
	for _, crd := range crds {
		for _, cv := range crd.Spec.Versions {
			v, err := crdschema.Compile(crd, cv.Name)
			if err != nil {
				t.Fatal(err)
			}
			for _, build := range []func() (*spec.Schema, error){v.OpenAPISchemaV2, v.OpenAPISchema} {
				schema, err := build()
				if err != nil {
					t.Fatal(err)
				}
				if schema != nil {
					checkSchemaJSON(t, v.ModelName(), schema, false)
				}
			}
		}
	}
}

func TestSchemaJSONEdgeCases(t *testing.T) {
	ptr := func(f float64) *float64 { return &f }
	integer := func(i int64) *int64 { return &i }
	leaf := spec.Schema{SchemaProps: spec.SchemaProps{Type: spec.StringOrArray{"string"}}}
	odd := spec.Schema{SchemaProps: spec.SchemaProps{
		Type:              spec.StringOrArray{"object"},
		PatternProperties: map[string]spec.Schema{"^a": leaf},
	}}
	cases := map[string]spec.Schema{
		"empty": {},
		"escapes": {SchemaProps: spec.SchemaProps{
			Description: "quote \" backslash \\ newline \n tab \t cr \r bell \a del \x7f <html> & é 日本 \u2028 \u2029",
			Title:       "<b>&</b>", Format: "\x00", Pattern: "^[a-z]+\\.$",
		}},
		"invalid utf-8": {SchemaProps: spec.SchemaProps{Description: "a\xffb"}},
		"numbers": {SchemaProps: spec.SchemaProps{
			Maximum: ptr(1e21), Minimum: ptr(-1e-7), MultipleOf: ptr(0.5), ExclusiveMaximum: true, ExclusiveMinimum: true,
			MaxLength: integer(10), MinLength: integer(0), MaxItems: integer(-1), MinItems: integer(3),
			MaxProperties: integer(math.MaxInt64), MinProperties: integer(math.MinInt64),
		}},
		"negative zero": {SchemaProps: spec.SchemaProps{Maximum: ptr(math.Copysign(0, -1))}},
		"types":         {SchemaProps: spec.SchemaProps{Type: spec.StringOrArray{"string", "null"}, Nullable: true}},
		"empty type":    {SchemaProps: spec.SchemaProps{Type: spec.StringOrArray{}}},
		"values": {SchemaProps: spec.SchemaProps{
			Default: map[string]any{"b": []any{int64(1), 2.5, "x", true, nil, map[string]any{}}, "a": int(3)},
			Enum:    []any{"a", int32(2), 1e-9, false, nil, []string{"x"}},
		}, SwaggerSchemaProps: spec.SwaggerSchemaProps{Example: map[string]any{"k": "v"}}},
		"empty values": {SchemaProps: spec.SchemaProps{Default: "", Enum: []any{}},
			SwaggerSchemaProps: spec.SwaggerSchemaProps{Example: ""}},
		"empty example object": {SwaggerSchemaProps: spec.SwaggerSchemaProps{Example: map[string]any{}}},
		"nil slice value":      {SchemaProps: spec.SchemaProps{Default: []any(nil)}},
		"unusual value":        {SchemaProps: spec.SchemaProps{Default: uint8(1)}},
		"named values": {SchemaProps: spec.SchemaProps{Default: namedString("a<b"),
			Enum: []any{namedBool(true), namedInt(-3), namedFloat(1.5), withText(1)}}},
		"items and of": {SchemaProps: spec.SchemaProps{
			Items: &spec.SchemaOrArray{Schemas: []spec.Schema{leaf, odd}},
			AllOf: []spec.Schema{leaf}, OneOf: []spec.Schema{odd, leaf}, AnyOf: []spec.Schema{leaf},
			Not: &odd, Required: []string{"a", "b\"c"},
		}},
		"nil items": {SchemaProps: spec.SchemaProps{Items: &spec.SchemaOrArray{}}},
		"properties": {SchemaProps: spec.SchemaProps{
			Properties:           map[string]spec.Schema{"b": leaf, "a": odd, "A": leaf, "é": leaf, "a b": leaf},
			AdditionalProperties: &spec.SchemaOrBool{Allows: true},
		}},
		"additionalProperties false":  {SchemaProps: spec.SchemaProps{AdditionalProperties: &spec.SchemaOrBool{}}},
		"additionalProperties schema": {SchemaProps: spec.SchemaProps{AdditionalProperties: &spec.SchemaOrBool{Schema: &odd}}},
		"swagger": {SchemaProps: spec.SchemaProps{ID: "id", Schema: "http://json-schema.org/draft-04/schema#",
			Ref: spec.MustCreateRef("#/definitions/io.k8s.a~1b")},
			SwaggerSchemaProps: spec.SwaggerSchemaProps{Discriminator: "kind", ReadOnly: true,
				ExternalDocs: &spec.ExternalDocumentation{Description: "d", URL: "https://example.com/?a=b&c"}}},
		"extensions": {VendorExtensible: spec.VendorExtensible{Extensions: spec.Extensions{
			"x-b": []any{map[string]any{"group": "", "kind": "K"}}, "x-a": "s", "X-c": true,
			"not-extension": "dropped", "x-d": []string{"k"}, "x-e": int64(3),
		}}},
		"only non-extensions": {VendorExtensible: spec.VendorExtensible{Extensions: spec.Extensions{"y": 1}}},
		"extra props":         {ExtraProps: map[string]any{"foo": "bar"}},
		"deep fallback": {SchemaProps: spec.SchemaProps{Properties: map[string]spec.Schema{
			"a": {SchemaProps: spec.SchemaProps{Items: &spec.SchemaOrArray{Schema: &odd}}},
		}}},
	}
	for name, schema := range cases {
		checkSchemaJSON(t, name, &schema, false)
	}
}

type (
	namedString string
	namedBool   bool
	namedInt    int16
	namedFloat  float64
	withText    int
)

func (withText) MarshalText() ([]byte, error) { return []byte("text"), nil }
