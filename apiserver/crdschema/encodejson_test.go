package crdschema

import (
	"bytes"
	"encoding/json"
	"math"
	"math/rand/v2"
	"strings"
	"testing"

	"github.com/devplane/devplane/apiserver/testenv/crdgen"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"sigs.k8s.io/randfill"
)

// checkEncode requires AppendCRDJSON to write what the store's codec writes
// of crd (less its newline), or to decline exactly when the codec fails.
func checkEncode(t *testing.T, codec runtime.Codec, crd *apiextensionsv1.CustomResourceDefinition) {
	t.Helper()
	want, err := runtime.Encode(codec, crd.DeepCopy())
	got, ok := AppendCRDJSON([]byte("prefix"), crd)
	if err != nil {
		if ok {
			t.Fatalf("the codec fails (%v) but AppendCRDJSON wrote %.300s", err, got)
		}
		return
	}
	if !ok {
		t.Fatalf("declined what the codec encodes: %.300s", want)
	}
	if !bytes.HasPrefix(got, []byte("prefix")) {
		t.Fatal("dst's content was not kept")
	}
	got = got[len("prefix"):]
	want = bytes.TrimSuffix(want, []byte("\n"))
	if !bytes.Equal(got, want) {
		i := 0
		for i < min(len(got), len(want)) && got[i] == want[i] {
			i++
		}
		lo := max(0, i-80)
		t.Fatalf("differs at byte %d:\nwant …%.160s\n got …%.160s", i, want[lo:], got[lo:])
	}
}

func TestAppendCRDJSONTestdata(t *testing.T) {
	codec, _ := storeCodec(t)
	files := []string{"testdata/crontabs.yaml", "testdata/nonstructural.yaml", "testdata/widgets.yaml",
		"../extensions/testdata/crontab-crd.yaml", "../../testdata/crds/collectors.yaml"}
	for _, f := range files {
		for i, crd := range yamlCRDs(t, f) {
			checkEncode(t, codec, crd)
			// As stored: defaulted, with server-set metadata and status.
			decoded := &apiextensionsv1.CustomResourceDefinition{}
			if _, _, err := codec.Decode(stored(t, codec, crd, i), nil, decoded); err != nil {
				t.Fatal(err)
			}
			checkEncode(t, codec, decoded)
		}
	}
	for i, crd := range crdgen.ProviderCRDs(40, 5) {
		checkEncode(t, codec, crd)
		decoded := &apiextensionsv1.CustomResourceDefinition{}
		if _, _, err := codec.Decode(stored(t, codec, crd, i), nil, decoded); err != nil {
			t.Fatal(err)
		}
		checkEncode(t, codec, decoded)
	}
}

// Every schema field, raw values of each JSON kind with whitespace, escapes
// and HTML characters, nil and empty lists and maps.
func TestAppendCRDJSONEdgeCases(t *testing.T) {
	codec, _ := storeCodec(t)
	crd := &apiextensionsv1.CustomResourceDefinition{}
	if _, _, err := codec.Decode([]byte(edgeCRD), nil, crd); err != nil {
		t.Fatal(err)
	}
	checkEncode(t, codec, crd)

	schema := crd.Spec.Versions[0].Schema.OpenAPIV3Schema
	raw := func(s string) *apiextensionsv1.JSON { return &apiextensionsv1.JSON{Raw: []byte(s)} }
	for _, value := range []string{
		` { "a" : [ 1 , 2 ] } `, "\"<b>&amp;</b>\"", "\"\u2028\u2029\"", "\"caf\u00e9 \u00e2\"", `"\u003c"`,
		`[1,2]`, `null`, ``, `{"a":`, `nul`, `1 2`, `"a"` + "\n", "\xff",
	} {
		schema.Default = raw(value)
		schema.Example = raw(value)
		schema.Enum = []apiextensionsv1.JSON{*raw(value), *raw(`1`)}
		checkEncode(t, codec, crd)
	}
	schema.Default, schema.Example, schema.Enum = nil, nil, []apiextensionsv1.JSON{{}}
	checkEncode(t, codec, crd)

	for _, s := range []string{"<script>&</script>", "a\u2028b\u2029c", "\x00\x01\x1f\x7f", "bad \xff\xfe utf-8", "tab\tquote\"back\\slash",
		"\b\f\n\r\t", "emoji 😀 é"} {
		schema.Description = s
		schema.Properties = map[string]apiextensionsv1.JSONSchemaProps{s: {Type: "string", Pattern: s}, "z": {}}
		crd.Name = s
		checkEncode(t, codec, crd)
	}
	for _, f := range []float64{0, math.Copysign(0, -1), 1e-7, 1e-6, 1e20, 1e21, 123.456, -2.5e-300, math.MaxFloat64, math.NaN(), math.Inf(1)} {
		schema.Maximum, schema.Minimum, schema.MultipleOf = &f, &f, &f
		checkEncode(t, codec, crd)
	}
	schema.Maximum, schema.Minimum, schema.MultipleOf = nil, nil, nil
	schema.Items = &apiextensionsv1.JSONSchemaPropsOrArray{}
	schema.AdditionalProperties = &apiextensionsv1.JSONSchemaPropsOrBool{}
	schema.AdditionalItems = &apiextensionsv1.JSONSchemaPropsOrBool{Allows: true}
	schema.Dependencies = apiextensionsv1.JSONSchemaDependencies{"x": {}, "y": {Property: []string{}}}
	checkEncode(t, codec, crd)
	crd.Spec.Versions = nil
	checkEncode(t, codec, crd)
}

// Random CRDs, strings from an alphabet of what JSON escapes, raw values
// from valid, spaced and broken JSON.
func TestAppendCRDJSONRandom(t *testing.T) {
	codec, _ := storeCodec(t)
	alphabet := []string{"a", "Z", " ", "\"", "\\", "<", ">", "&", "\n", "\x00", "\x1f", "\u2028", "\u2029", "é", "😀", "\xff", "\xe2\x80"}
	raws := []string{`1`, `-0.5e10`, `"x"`, `true`, `null`, `{"a":[1,{"b":null}]}`, " [ 1 ,\n2 ] ", `"<&>"`, "\"\u2028\"", `{`, `]`, ``}
	f := randfill.NewWithSeed(1).NilChance(0.3).NumElements(0, 3).MaxDepth(14).Funcs(
		func(s *string, c randfill.Continue) {
			var sb strings.Builder
			for range c.Intn(6) {
				sb.WriteString(alphabet[c.Intn(len(alphabet))])
			}
			*s = sb.String()
		},
		func(j *apiextensionsv1.JSON, c randfill.Continue) {
			j.Raw = []byte(raws[c.Intn(len(raws))])
		},
		func(v *float64, c randfill.Continue) {
			*v = []float64{0, 1.5, -1e-9, 3e21, math.NaN()}[c.Intn(5)]
		},
		func(s *apiextensionsv1.JSONSchemaProps, c randfill.Continue) {
			c.FillNoCustom(s)
			// Keep the random trees small: recursion is the rule, not the size.
			if c.Intn(3) > 0 {
				s.AllOf, s.OneOf, s.Not, s.PatternProperties, s.Definitions, s.AdditionalItems = nil, nil, nil, nil, nil, nil
			}
		},
		func(r *runtime.RawExtension, c randfill.Continue) {},
	)
	rng := rand.New(rand.NewPCG(1, 2))
	declined := 0
	for i := range 3000 {
		crd := &apiextensionsv1.CustomResourceDefinition{}
		f.Fill(crd)
		crd.ManagedFields = nil // FieldsV1 raw: metadata goes through encoding/json anyway
		if rng.IntN(2) == 0 {
			crd.Spec.Versions = append(crd.Spec.Versions, apiextensionsv1.CustomResourceDefinitionVersion{Name: "v"})
		}
		if _, ok := AppendCRDJSON(nil, crd); !ok {
			declined++
		}
		t.Run("", func(t *testing.T) {
			if i%500 == 0 {
				t.Logf("case %d", i)
			}
			checkEncode(t, codec, crd)
		})
		if t.Failed() {
			data, _ := json.Marshal(crd)
			t.Fatalf("case %d: %.2000s", i, data)
		}
	}
	t.Logf("%d of 3000 declined", declined)
	if declined == 0 || declined > 2900 {
		t.Errorf("%d of 3000 declined: the cases do not cover both outcomes", declined)
	}
}

func BenchmarkAppendCRDJSON(b *testing.B) {
	crd := crdgen.ProviderCRDs(4, 1)[3]
	var buf []byte
	b.ReportAllocs()
	for b.Loop() {
		var ok bool
		if buf, ok = AppendCRDJSON(buf[:0], crd); !ok {
			b.Fatal("declined")
		}
	}
	b.SetBytes(int64(len(buf)))
}

func BenchmarkEncodingJSONCRD(b *testing.B) {
	crd := crdgen.ProviderCRDs(4, 1)[3]
	crd.Kind, crd.APIVersion = "CustomResourceDefinition", "apiextensions.k8s.io/v1"
	b.ReportAllocs()
	for b.Loop() {
		if _, err := json.Marshal(crd); err != nil {
			b.Fatal(err)
		}
	}
}
