package crdschema

import (
	"bytes"
	"fmt"
	"math/rand/v2"
	"strings"
	"testing"

	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/kube-openapi/pkg/schemamutation"
	"k8s.io/kube-openapi/pkg/validation/spec"
	"k8s.io/utils/ptr"

	"github.com/devplane/devplane/apiserver/testenv/crdgen"
)

const v2RefPrefix = "#/definitions/"

// schemaForm is one of the two forms the JSON writer makes.
type schemaForm struct {
	name      string
	v2        bool
	refPrefix string // where the documents of that form put definitions
}

var schemaForms = []schemaForm{{"v2", true, v2RefPrefix}, {"v3", false, v3RefPrefix}}

// appendJSON is AppendOpenAPISchemaV2JSON or AppendOpenAPISchemaV3JSON.
func (f schemaForm) appendJSON(v *Version, dst []byte) ([]byte, []string, bool) {
	if f.v2 {
		return v.AppendOpenAPISchemaV2JSON(dst, f.refPrefix)
	}
	return v.AppendOpenAPISchemaV3JSON(dst, f.refPrefix)
}

// referenceJSON is what the documents make of the version without the
// JSON writer: OpenAPISchemaV2 (kube's v2 schema,
// TestOpenAPISchemaV2IsKubesV2Schema) or OpenAPISchema (v3,
// TestOpenAPISchemaIsTheDocumentsSchema), refs moved under the form's
// prefix, marshalled.
func referenceJSON(t testing.TB, v *Version, f schemaForm) []byte {
	t.Helper()
	build := v.OpenAPISchema
	if f.v2 {
		build = v.OpenAPISchemaV2
	}
	s, err := build()
	if err != nil {
		t.Fatal(err)
	}
	walker := schemamutation.Walker{
		SchemaCallback: schemamutation.SchemaCallBackNoop,
		RefCallback: func(ref *spec.Ref) *spec.Ref {
			target, ok := strings.CutPrefix(ref.String(), v3RefPrefix) // as openapi's rewriteRefs
			if !ok {
				return ref
			}
			r := spec.MustCreateRef(f.refPrefix + target)
			return &r
		},
	}
	data, err := walker.WalkSchema(s).MarshalJSON()
	if err != nil {
		t.Fatal(err)
	}
	return data
}

// requireSameJSON checks the form's JSON writer against the reference,
// byte for byte; it reports whether the fast path took the version.
func requireSameJSON(t *testing.T, v *Version, f schemaForm) bool {
	t.Helper()
	got, refs, ok := f.appendJSON(v, nil)
	if !ok {
		return false
	}
	want := referenceJSON(t, v, f)
	if !bytes.Equal(got, want) {
		i := 0
		for i < len(got) && i < len(want) && got[i] == want[i] {
			i++
		}
		from := max(0, i-200)
		t.Fatalf("%s %s: differs at byte %d:\n got …%.400s\nwant …%.400s", f.name, v.GVK, i, got[from:], want[from:])
	}
	wantRefs := 0
	if bytes.Contains(want, []byte(f.refPrefix)) {
		wantRefs = 1
	}
	if len(refs) != wantRefs || (wantRefs == 1 && refs[0] != "io.k8s.apimachinery.pkg.apis.meta.v1.ObjectMeta") {
		t.Fatalf("%s %s: refs %v", f.name, v.GVK, refs)
	}
	return true
}

func TestOpenAPISchemaJSONTestdata(t *testing.T) {
	preserveRoot := embeddingCRD()
	preserveRoot.Spec.Versions[0].Schema.OpenAPIV3Schema.XPreserveUnknownFields = ptr.To(true)
	nullable := nullableCRD()
	spec := nullable.Spec.Versions[0].Schema.OpenAPIV3Schema.Properties["spec"]
	delete(spec.Properties, "either") // an anyOf neither form writes
	nullable.Spec.Versions[0].Schema.OpenAPIV3Schema.Properties["spec"] = spec
	for _, tc := range []struct {
		crd      *apiextensionsv1.CustomResourceDefinition
		versions []string
		v2, v3   bool // on the fast path in that form
	}{
		{loadCRD(t, "crontabs.yaml"), []string{"v1", "v2"}, true, true},
		{loadCRD(t, "widgets.yaml"), []string{"v1alpha1", "v1"}, true, true},
		{readCRD(t, "nonstructural.yaml"), nil, false, false},
		{largeCRD(), []string{"v1"}, true, true},
		{embeddingCRD(), []string{"v1"}, true, true},
		{preserveRoot, []string{"v1"}, false, true},
		{nullableCRD(), []string{"v1"}, false, false},
		{nullable, []string{"v1"}, false, true},
	} {
		versions := tc.versions
		if versions == nil {
			for _, version := range tc.crd.Spec.Versions {
				versions = append(versions, version.Name)
			}
		}
		for _, version := range versions {
			v := compileVersion(t, tc.crd, version)
			for _, f := range schemaForms {
				want := tc.v3
				if f.v2 {
					want = tc.v2
				}
				if fast := requireSameJSON(t, v, f); fast != want {
					t.Errorf("%s %s %s: fast path %v, want %v", f.name, tc.crd.Name, version, fast, want)
				}
			}
		}
	}
}

func TestOpenAPISchemaJSONProviderCRDs(t *testing.T) {
	for i, crd := range crdgen.ProviderCRDs(20, 1) {
		DefaultCRD(crd)
		for _, version := range crd.Spec.Versions {
			v := compileVersion(t, crd, version.Name)
			for _, f := range schemaForms {
				if !requireSameJSON(t, v, f) {
					t.Fatalf("%s: provider CRD %d %s: not on the fast path", f.name, i, version.Name)
				}
			}
		}
	}
}

// A version without a schema is a bare object on both paths.
func TestOpenAPISchemaJSONWithoutSchema(t *testing.T) {
	crd := embeddingCRD()
	crd.Spec.Versions[0].Schema = nil
	v := compileVersion(t, crd, "v1")
	for _, f := range schemaForms {
		if !requireSameJSON(t, v, f) {
			t.Fatalf("%s: not on the fast path", f.name)
		}
	}
}

func schemaCRD(schema *apiextensionsv1.JSONSchemaProps, selectable ...string) *apiextensionsv1.CustomResourceDefinition {
	crd := &apiextensionsv1.CustomResourceDefinition{
		ObjectMeta: metav1.ObjectMeta{Name: "edges.example.com"},
		Spec: apiextensionsv1.CustomResourceDefinitionSpec{
			Group: "example.com", Scope: apiextensionsv1.NamespaceScoped,
			Names: apiextensionsv1.CustomResourceDefinitionNames{Plural: "edges", Kind: "Edge", ListKind: "EdgeList"},
			Versions: []apiextensionsv1.CustomResourceDefinitionVersion{{
				Name: "v1", Served: true, Storage: true,
				Schema: &apiextensionsv1.CustomResourceValidation{OpenAPIV3Schema: schema},
			}},
		},
	}
	for _, path := range selectable {
		crd.Spec.Versions[0].SelectableFields = append(crd.Spec.Versions[0].SelectableFields, apiextensionsv1.SelectableField{JSONPath: path})
	}
	return crd
}

func raw(s string) *apiextensionsv1.JSON { return &apiextensionsv1.JSON{Raw: []byte(s)} }

func TestOpenAPISchemaJSONEdgeCases(t *testing.T) {
	str := apiextensionsv1.JSONSchemaProps{Type: "string"}
	object := func(properties map[string]apiextensionsv1.JSONSchemaProps) *apiextensionsv1.JSONSchemaProps {
		return &apiextensionsv1.JSONSchemaProps{Type: "object", Properties: properties}
	}
	embedded := apiextensionsv1.JSONSchemaProps{Type: "object", XEmbeddedResource: true, Required: []string{"apiVersion", "spec"},
		Properties: map[string]apiextensionsv1.JSONSchemaProps{"spec": {Type: "object", XPreserveUnknownFields: ptr.To(true)}, "kind": str}}
	reason := apiextensionsv1.FieldValueRequired
	empty := apiextensionsv1.FieldValueErrorReason("")
	for name, tc := range map[string]struct {
		schema     *apiextensionsv1.JSONSchemaProps
		selectable []string
		v2, v3     bool // on the fast path in that form
	}{
		"embedded resources": {schema: object(map[string]apiextensionsv1.JSONSchemaProps{
			"one":  embedded,
			"list": {Type: "array", Items: &apiextensionsv1.JSONSchemaPropsOrArray{Schema: &embedded}},
			"map":  {Type: "object", AdditionalProperties: &apiextensionsv1.JSONSchemaPropsOrBool{Allows: true, Schema: &embedded}},
		}), v2: true, v3: true},
		// v2 publishes a preserve-unknown-fields root as a bare object.
		"embedded root": {schema: &apiextensionsv1.JSONSchemaProps{Type: "object", XEmbeddedResource: true, XPreserveUnknownFields: ptr.To(true)}, v3: true},
		"int-or-string": {schema: object(map[string]apiextensionsv1.JSONSchemaProps{
			"bare":    {XIntOrString: true},
			"pattern": {XIntOrString: true, AnyOf: []apiextensionsv1.JSONSchemaProps{{Type: "integer"}, {Type: "string"}}, Pattern: "^[0-9]+%?$"},
			"typed":   {Type: "string", AnyOf: []apiextensionsv1.JSONSchemaProps{{Type: "integer"}, {Type: "string"}}},
		}), v2: true, v3: true},
		"preserve unknown fields at the root": {schema: &apiextensionsv1.JSONSchemaProps{Type: "object", XPreserveUnknownFields: ptr.To(true),
			Properties: map[string]apiextensionsv1.JSONSchemaProps{"any": {XPreserveUnknownFields: ptr.To(true)}}}, v3: true},
		"preserve unknown fields": {schema: object(map[string]apiextensionsv1.JSONSchemaProps{
			"any":    {XPreserveUnknownFields: ptr.To(true)},
			"object": {Type: "object", XPreserveUnknownFields: ptr.To(true), Properties: map[string]apiextensionsv1.JSONSchemaProps{"kept": {Type: "string"}}},
			"list":   {Type: "array", XPreserveUnknownFields: ptr.To(true), Items: &apiextensionsv1.JSONSchemaPropsOrArray{Schema: &apiextensionsv1.JSONSchemaProps{Type: "string"}}},
			"embedded": {Type: "object", XEmbeddedResource: true, XPreserveUnknownFields: ptr.To(true),
				Properties: map[string]apiextensionsv1.JSONSchemaProps{"spec": {Type: "object"}}},
		}), v2: true, v3: true},
		// v2 strips nullable nodes and their parents' required: left to
		// OpenAPISchemaV2. v3 keeps them as they are.
		"nullable": {schema: object(map[string]apiextensionsv1.JSONSchemaProps{
			"a": {Type: "string", Nullable: true}}), v3: true},
		"nullable everywhere": {schema: &apiextensionsv1.JSONSchemaProps{Type: "object", Required: []string{"a", "list"},
			Properties: map[string]apiextensionsv1.JSONSchemaProps{
				"a":      {Type: "object", Nullable: true, Properties: map[string]apiextensionsv1.JSONSchemaProps{"b": {Type: "string", Nullable: true, Default: raw(`null`)}}},
				"list":   {Type: "array", Nullable: true, Items: &apiextensionsv1.JSONSchemaPropsOrArray{Schema: &apiextensionsv1.JSONSchemaProps{Type: "integer", Nullable: true}}},
				"map":    {Type: "object", AdditionalProperties: &apiextensionsv1.JSONSchemaPropsOrBool{Allows: true, Schema: &apiextensionsv1.JSONSchemaProps{Type: "string", Nullable: true}}},
				"port":   {XIntOrString: true, Nullable: true},
				"any":    {Type: "object", Nullable: true, XPreserveUnknownFields: ptr.To(true)},
				"object": {Type: "object", Nullable: true, XEmbeddedResource: true, Properties: map[string]apiextensionsv1.JSONSchemaProps{"spec": str}},
			}}, v3: true},
		"defaults, examples, enums": {schema: object(map[string]apiextensionsv1.JSONSchemaProps{
			"a": {Type: "string", Default: raw(`"x<&>\u2028y"`), Enum: []apiextensionsv1.JSON{*raw(`"x<&>\u2028y"`), *raw(`null`), *raw(`"b"`)}},
			"b": {Type: "number", Default: raw(`1.0`), Example: raw(`1e21`), Minimum: ptr.To(-0.000000125), Maximum: ptr.To(1e300), MultipleOf: ptr.To(0.5)},
			"c": {Type: "integer", Default: raw(`12345678901234567890`), Example: raw(`0`), ExclusiveMinimum: true, Minimum: ptr.To(0.0)},
			"d": {Type: "object", Default: raw(`{"z":[1,2.5,{"y":null,"x":true}],"a":"\u0001"}`), Example: raw(`{}`), XPreserveUnknownFields: ptr.To(true)},
			"e": {Type: "array", Default: raw(`[]`), Example: raw(`""`), Items: &apiextensionsv1.JSONSchemaPropsOrArray{Schema: &str}, UniqueItems: true, MinItems: ptr.To[int64](0)},
			"f": {Type: "string", Default: raw(`null`), Example: raw(`null`), Title: "F", Format: "byte",
				ExternalDocs: &apiextensionsv1.ExternalDocumentation{URL: "https://example.com/?a=1&b=2"}},
			"g": {Type: "boolean", Default: raw(`false`), Example: raw(`false`)},
			"h": {Type: "string", Description: "quote \" backslash \\ tab \t newline \n nul \x00 del \x7f é 𝄞", Example: raw(`[1]`)},
		}), v2: true, v3: true},
		"lists and maps": {schema: object(map[string]apiextensionsv1.JSONSchemaProps{
			"set":    {Type: "array", XListType: ptr.To("set"), Items: &apiextensionsv1.JSONSchemaPropsOrArray{Schema: &str}},
			"map":    {Type: "array", XListType: ptr.To("map"), XListMapKeys: []string{"name", "port"}, Items: &apiextensionsv1.JSONSchemaPropsOrArray{Schema: object(map[string]apiextensionsv1.JSONSchemaProps{"name": str, "port": {Type: "integer", Format: "int32"}})}},
			"empty":  {Type: "array", XListType: ptr.To(""), Items: &apiextensionsv1.JSONSchemaPropsOrArray{Schema: &str}},
			"atomic": {Type: "object", XMapType: ptr.To("atomic"), AdditionalProperties: &apiextensionsv1.JSONSchemaPropsOrBool{Allows: true}},
			"closed": {Type: "object", AdditionalProperties: &apiextensionsv1.JSONSchemaPropsOrBool{Allows: false}, MaxProperties: ptr.To[int64](3), MinProperties: ptr.To[int64](1)},
			"both":   {Type: "object", Properties: map[string]apiextensionsv1.JSONSchemaProps{"x": str}, AdditionalProperties: &apiextensionsv1.JSONSchemaPropsOrBool{Schema: &str}},
		}), v2: true, v3: true},
		"validations": {schema: &apiextensionsv1.JSONSchemaProps{Type: "object",
			XValidations: apiextensionsv1.ValidationRules{
				{Rule: "self.a == self.b", Message: "a <> b"},
				{Rule: "self.a > 0", MessageExpression: "'a is ' + string(self.a)", Reason: &reason, FieldPath: ".a"},
				{Rule: "oldSelf == self", Reason: &empty, OptionalOldSelf: ptr.To(false)},
				{Rule: "true", OptionalOldSelf: ptr.To(true)},
			},
			Properties: map[string]apiextensionsv1.JSONSchemaProps{"a": {Type: "integer"}, "b": {Type: "integer",
				XValidations: apiextensionsv1.ValidationRules{{Rule: "self >= 0"}}}}}, v2: true, v3: true},
		"selectable fields": {schema: object(map[string]apiextensionsv1.JSONSchemaProps{
			"spec": *object(map[string]apiextensionsv1.JSONSchemaProps{"color": str, "size": {Type: "integer"}})}),
			selectable: []string{".spec.color", ".spec.size"}, v2: true, v3: true},
		"root metadata, apiVersion and kind replaced": {schema: &apiextensionsv1.JSONSchemaProps{Type: "object", Required: []string{"spec"},
			Properties: map[string]apiextensionsv1.JSONSchemaProps{
				"apiVersion": {Type: "string", Description: "mine"}, "kind": str,
				"metadata": {Type: "object", Properties: map[string]apiextensionsv1.JSONSchemaProps{"name": {Type: "string", MaxLength: ptr.To[int64](10)}}},
				"spec":     {Type: "object"}}}, v2: true, v3: true},
		"nested validations: not covered": {schema: object(map[string]apiextensionsv1.JSONSchemaProps{
			"x": {Type: "object", OneOf: []apiextensionsv1.JSONSchemaProps{{Required: []string{"a"}}, {Required: []string{"b"}}},
				Properties: map[string]apiextensionsv1.JSONSchemaProps{"a": str, "b": str}}})},
		"non-structural: no type":         {schema: object(map[string]apiextensionsv1.JSONSchemaProps{"x": {Description: "untyped"}})},
		"non-structural: metadata fields": {schema: object(map[string]apiextensionsv1.JSONSchemaProps{"metadata": *object(map[string]apiextensionsv1.JSONSchemaProps{"labels": str})})},
		"non-structural: bad pattern":     {schema: object(map[string]apiextensionsv1.JSONSchemaProps{"x": {Type: "string", Pattern: "("}})},
		"non-structural: bad type":        {schema: object(map[string]apiextensionsv1.JSONSchemaProps{"x": {Type: "text"}})},
		"invalid UTF-8":                   {schema: object(map[string]apiextensionsv1.JSONSchemaProps{"x": {Type: "string", Description: "bad \xff"}})},
	} {
		t.Run(name, func(t *testing.T) {
			v := compileVersion(t, schemaCRD(tc.schema, tc.selectable...), "v1")
			for _, f := range schemaForms {
				if tc.schema.Properties["x"].Description == "bad \xff" {
					if _, _, ok := f.appendJSON(v, nil); ok {
						t.Fatalf("%s: invalid UTF-8 on the fast path", f.name)
					}
					continue
				}
				want := tc.v3
				if f.v2 {
					want = tc.v2
				}
				if fast := requireSameJSON(t, v, f); fast != want {
					t.Errorf("%s: fast path %v, want %v", f.name, fast, want)
				}
			}
		})
	}
}

// Random schemas over every field the writer handles, and some it leaves to
// OpenAPISchema: whatever it takes must come out byte for byte the same.
func TestOpenAPISchemaJSONRandom(t *testing.T) {
	fast := map[string]int{}
	const n = 3000
	for seed := range uint64(n) {
		g := &schemaGen{r: rand.New(rand.NewPCG(seed, 7))}
		schema := g.schema(0)
		schema.Type = "object"
		if g.r.IntN(3) > 0 { // keep most roots structural there
			schema.AdditionalProperties, schema.Items = nil, nil
		}
		var selectable []string
		if g.r.IntN(4) == 0 {
			selectable = []string{".spec.a", ".b"}
		}
		v := compileVersion(t, schemaCRD(schema, selectable...), "v1")
		t.Run(fmt.Sprint(seed), func(t *testing.T) {
			for _, f := range schemaForms {
				if requireSameJSON(t, v, f) {
					fast[f.name]++
				}
			}
		})
	}
	for _, f := range schemaForms {
		t.Logf("%s: %d of %d random schemas on the fast path", f.name, fast[f.name], n)
		if fast[f.name] < n/4 {
			t.Errorf("%s: only %d of %d random schemas on the fast path", f.name, fast[f.name], n)
		}
	}
}

type schemaGen struct{ r *rand.Rand }

func (g *schemaGen) pick(options ...string) string { return options[g.r.IntN(len(options))] }

func (g *schemaGen) maybe(p int) bool { return g.r.IntN(100) < p }

var rawValues = []string{`null`, `0`, `-0`, `1.0`, `1e3`, `1.5e-7`, `1e21`, `123456789.125`, `12345678901234567890`,
	`"a<b>&c"`, `""`, `"plain"`, `-12`, `"\u00e9"`, `"é"`, ` 7`, `"\u2028\u0007é"`, `{}`, `[]`, `{"b":1,"a":[true,null,{"d":"x","c":2.50}]}`, `false`, `true`, `[1,"2",[3]]`}

func (g *schemaGen) raw() *apiextensionsv1.JSON {
	return raw(rawValues[g.r.IntN(len(rawValues))])
}

func (g *schemaGen) text() string {
	return g.pick("", "plain", `quote " and \ slash`, "ctl \x01\x1f\t\n\r\b\f", "html <a href='x'>&amp;</a>", "uni é ü 𝄞 \u2028\u2029", "long "+strings.Repeat("words ", 20))
}

func (g *schemaGen) float() *float64 {
	if !g.maybe(15) {
		return nil
	}
	return ptr.To([]float64{0, 1.5, -2, 1e-7, 1e21, 123456789.125, 0.1}[g.r.IntN(7)])
}

func (g *schemaGen) integer() *int64 {
	if !g.maybe(10) {
		return nil
	}
	return ptr.To([]int64{0, 1, 63, -5, 1 << 40}[g.r.IntN(5)])
}

func (g *schemaGen) schema(depth int) *apiextensionsv1.JSONSchemaProps {
	s := &apiextensionsv1.JSONSchemaProps{
		Type:        g.pick("object", "object", "array", "string", "integer", "number", "boolean", ""),
		Description: g.text(),
		Nullable:    g.maybe(10),
		Maximum:     g.float(), ExclusiveMaximum: g.maybe(5), Minimum: g.float(), ExclusiveMinimum: g.maybe(5),
		MaxLength: g.integer(), MinLength: g.integer(), MaxItems: g.integer(), MinItems: g.integer(),
		UniqueItems: g.maybe(5), MultipleOf: g.float(), MaxProperties: g.integer(), MinProperties: g.integer(),
	}
	if g.maybe(2) {
		s.Type = "bogus"
	}
	if g.maybe(10) {
		s.Format = g.pick("int32", "date-time", "byte")
	}
	if g.maybe(5) {
		s.Title = g.text()
	}
	if g.maybe(15) {
		s.Default = g.raw()
	}
	if g.maybe(10) {
		s.Example = g.raw()
	}
	if g.maybe(10) {
		s.Pattern = g.pick("^[a-z]+$", `^\d{1,3}(\.\d+)?$`, "(unclosed")
	}
	if g.maybe(10) {
		for range 1 + g.r.IntN(3) {
			s.Enum = append(s.Enum, *g.raw())
		}
	}
	if g.maybe(5) {
		s.ExternalDocs = &apiextensionsv1.ExternalDocumentation{Description: g.text(), URL: g.pick("", "https://x/?a&b")}
	}
	if g.maybe(15) {
		s.XPreserveUnknownFields = ptr.To(!g.maybe(5))
	}
	if s.Type == "" || g.maybe(3) {
		s.XIntOrString = true
		if g.maybe(50) {
			s.AnyOf = []apiextensionsv1.JSONSchemaProps{{Type: "integer"}, {Type: "string"}}
		}
	}
	if g.maybe(3) {
		s.AnyOf = []apiextensionsv1.JSONSchemaProps{{Type: "integer"}, {Type: "string", Description: "no"}}
	}
	if g.maybe(3) {
		s.AllOf = []apiextensionsv1.JSONSchemaProps{{Required: []string{"a"}}}
	}
	if g.maybe(10) {
		s.XListType = ptr.To(g.pick("atomic", "set", "map", ""))
	}
	if g.maybe(5) {
		s.XListMapKeys = []string{"name", g.pick("port", "proto")}
	}
	if g.maybe(5) {
		s.XMapType = ptr.To(g.pick("granular", "atomic"))
	}
	if g.maybe(10) {
		reason := apiextensionsv1.FieldValueErrorReason(g.pick("", "FieldValueInvalid"))
		rule := apiextensionsv1.ValidationRule{Rule: "self.x " + g.text(), Message: g.text(), FieldPath: g.pick("", ".x")}
		if g.maybe(50) {
			rule.Reason = &reason
		}
		if g.maybe(50) {
			rule.MessageExpression = "'x'"
		}
		if g.maybe(50) {
			rule.OptionalOldSelf = ptr.To(g.maybe(50))
		}
		s.XValidations = apiextensionsv1.ValidationRules{rule, {Rule: "true"}}
	}
	switch {
	case s.Type == "array" && depth < 4:
		s.Items = &apiextensionsv1.JSONSchemaPropsOrArray{Schema: g.schema(depth + 1)}
	case s.Type == "object" && depth < 4:
		if g.maybe(80) {
			s.Properties = map[string]apiextensionsv1.JSONSchemaProps{}
			for range g.r.IntN(6) {
				name := g.pick("a", "b", "spec", "status", "kind", "apiVersion", "metadata", "é", "x-y", "Z", "with space", `q"uote`)
				s.Properties[name] = *g.schema(depth + 1)
			}
		}
		if g.maybe(20) {
			s.AdditionalProperties = &apiextensionsv1.JSONSchemaPropsOrBool{Allows: g.maybe(50)}
			if g.maybe(60) {
				s.AdditionalProperties.Schema = g.schema(depth + 1)
			}
		}
		if g.maybe(15) {
			s.XEmbeddedResource = true
			s.AdditionalProperties = nil
		}
	}
	if len(s.Properties) > 0 && g.maybe(30) {
		for name := range s.Properties {
			s.Required = append(s.Required, name)
		}
		if g.maybe(30) {
			s.Required = append(s.Required, "kind")
		}
	}
	return s
}

func BenchmarkOpenAPISchemaJSONProviderCRDs(b *testing.B) {
	var versions []*Version
	for _, crd := range crdgen.ProviderCRDs(20, 1) {
		DefaultCRD(crd)
		for _, version := range crd.Spec.Versions {
			versions = append(versions, compileVersion(b, crd, version.Name))
		}
	}
	for _, f := range schemaForms {
		b.Run(f.name, func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				for _, v := range versions {
					if _, _, ok := f.appendJSON(v, nil); !ok {
						b.Fatal("not on the fast path")
					}
				}
			}
			b.ReportMetric(float64(b.Elapsed().Microseconds())/float64(b.N*len(versions)), "µs/version")
		})
	}
}

// The writers append: what dst held stays in front.
func TestAppendOpenAPISchemaJSONAppends(t *testing.T) {
	v := compileVersion(t, loadCRD(t, "crontabs.yaml"), "v1")
	for _, f := range schemaForms {
		want, _, ok := f.appendJSON(v, nil)
		if !ok {
			t.Fatalf("%s: crontabs v1 not on the fast path", f.name)
		}
		got, _, ok := f.appendJSON(v, []byte("prefix:"))
		if !ok || string(got) != "prefix:"+string(want) {
			t.Fatalf("%s: appended %.80q…, want prefix:%.80q…", f.name, got, want)
		}
	}
}
