package openapi

import (
	"bytes"
	"errors"
	"fmt"
	"math/rand/v2"
	"runtime"
	"slices"
	"strings"
	"testing"

	"github.com/google/gnostic-models/compiler"
	openapi_v2 "github.com/google/gnostic-models/openapiv2"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	"k8s.io/kube-openapi/pkg/validation/spec"

	"github.com/devplane/devplane/apiserver/crdschema"
)

// referenceV2Protobuf is the conversion the transcoder replaces, as it was:
// the whole fragment in one small document through gnostic, each member
// marshalled as a one-member Document.
func referenceV2Protobuf(f *v2Fragment) ([]byte, [2][]span, error) {
	var spans [2][]span
	var mini bytes.Buffer
	mini.WriteString(`{"swagger":"2.0","info":{"title":"","version":""},"paths":{`)
	f.writeJSON(&mini, pathsSection, 0, len(f.sections[pathsSection].names))
	mini.WriteString(`},"definitions":{`)
	f.writeJSON(&mini, definitionsSection, 0, len(f.sections[definitionsSection].names))
	mini.WriteString(`}}`)
	doc, err := parseV2Document(mini.Bytes())
	if err != nil {
		return nil, spans, err
	}
	paths := doc.GetPaths().GetPath()
	definitions := doc.GetDefinitions().GetAdditionalProperties()
	if len(paths) != len(f.sections[pathsSection].names) || len(definitions) != len(f.sections[definitionsSection].names) {
		return nil, spans, errors.New("openapi v2: protobuf conversion changed the number of members")
	}
	var out []byte
	spans = [2][]span{make([]span, len(paths)), make([]span, len(definitions))}
	for i, item := range paths {
		start := len(out)
		if out, err = marshalAppend(out, &openapi_v2.Document{Paths: &openapi_v2.Paths{Path: []*openapi_v2.NamedPathItem{item}}}); err != nil {
			return nil, spans, err
		}
		spans[pathsSection][i] = span{start, len(out)}
	}
	for i, schema := range definitions {
		start := len(out)
		if out, err = marshalAppend(out, &openapi_v2.Document{Definitions: &openapi_v2.Definitions{AdditionalProperties: []*openapi_v2.NamedSchema{schema}}}); err != nil {
			return nil, spans, err
		}
		spans[definitionsSection][i] = span{start, len(out)}
	}
	return out, spans, nil
}

// onlyTranscoded converts with the transcoder alone, counting the members
// it leaves to gnostic.
func onlyTranscoded(fallbacks *[]string) v2Member {
	return func(section int, member []byte) (*openapi_v2.Document, error) {
		t := &v2Transcoder{jsonScanner: jsonScanner{data: member}}
		doc, err := t.member(section)
		if errors.Is(err, errFallback) {
			*fallbacks = append(*fallbacks, string(member[:min(len(member), 80)]))
			return gnosticV2Member(section, member)
		}
		return doc, err
	}
}

// v2Fragments builds s's /openapi/v2 fragments (the shared one included).
func v2Fragments(t testing.TB, s *Service) []*v2Fragment {
	t.Helper()
	s.mu.Lock()
	doc := s.v2
	s.mu.Unlock()
	if err := doc.assemble(); err != nil {
		t.Fatal(err)
	}
	return append(slices.Clone(doc.fragments), doc.shared.fragment)
}

// assertTranscodedLikeGnostic compares every member's encoding, returning
// how many members were compared and the ones the transcoder left. A
// fragment gnostic rejects is compared member by member: the transcoder
// must fail on the same ones.
func assertTranscodedLikeGnostic(t *testing.T, fragments []*v2Fragment) (members int, fallbacks []string) {
	t.Helper()
	for _, f := range fragments {
		want, wantSpans, err := referenceV2Protobuf(f)
		if err != nil {
			for section := range f.sections {
				for i, name := range f.sections[section].names {
					member := f.jsonRun(section, i, i+1)
					_, wantErr := gnosticV2Member(section, member)
					_, gotErr := onlyTranscoded(&fallbacks)(section, member)
					if (gotErr == nil) != (wantErr == nil) {
						t.Errorf("%s: transcoder error %v, gnostic error %v", name, gotErr, wantErr)
					}
				}
			}
			continue
		}
		got, gotSpans, err := f.protoMembers(onlyTranscoded(&fallbacks))
		if err != nil {
			t.Fatalf("transcoder: %v", err)
		}
		for section := range gotSpans {
			for i, name := range f.sections[section].names {
				members++
				g, w := gotSpans[section][i], wantSpans[section][i]
				if !bytes.Equal(got[g.start:g.end], want[w.start:w.end]) {
					t.Errorf("%s: transcoded protobuf differs from gnostic's:\n got %q\nwant %q", name, got[g.start:g.end], want[w.start:w.end])
				}
			}
		}
		if !bytes.Equal(got, want) {
			t.Errorf("fragment %q: transcoded bytes differ", f.key)
		}
	}
	return members, fallbacks
}

func TestV2TranscoderMatchesGnosticOnBuiltins(t *testing.T) {
	s := NewService("v1.37.0")
	resources, extra := mixedState(newWidgets(4, "r1"))
	s.Update(append(resources, everyGeneratedKind()...), extra)
	s.SetExternal("gadgets.example.com", "v1", gadgetExternal())
	members, fallbacks := assertTranscodedLikeGnostic(t, v2Fragments(t, s))
	if members < 1000 {
		t.Errorf("only %d members compared", members)
	}
	if len(fallbacks) > 0 {
		t.Errorf("%d of %d members left to gnostic, e.g. %s", len(fallbacks), members, fallbacks[0])
	}
}

// crdFixtures are the custom resources of the CRDs under testdata, with
// their schemas as the extensions server supplies them.
func crdFixtures(t testing.TB, compatible bool) ([]Resource, SuppliedDefinitions) {
	t.Helper()
	var resources []Resource
	extra := SuppliedDefinitions{}
	for _, path := range []string{
		"../crdschema/testdata/crontabs.yaml", "../crdschema/testdata/widgets.yaml", "../crdschema/testdata/nonstructural.yaml",
		"../extensions/testdata/crontab-crd.yaml", "../../testdata/crds/collectors.yaml",
	} {
		crd := readTestCRD(t, path)
		for _, version := range crd.Spec.Versions {
			v, err := crdschema.Compile(crd, version.Name)
			if err != nil {
				t.Fatalf("%s %s: %v", path, version.Name, err)
			}
			r, own := crdResource(t, v, crd, version.Name, compatible)
			resources = append(resources, r)
			for name, supply := range own {
				extra[name] = supply
			}
		}
	}
	return resources, extra
}

// crdResource is what the extensions server gives the service for a
// served version (the list schema simplified).
func crdResource(t testing.TB, v *crdschema.Version, crd *apiextensionsv1.CustomResourceDefinition, version string, compatible bool) (Resource, SuppliedDefinitions) {
	t.Helper()
	// compatible: as /openapi/v2 publishes it; otherwise the v3 form, with
	// what gnostic rejects (anyOf).
	build := v.OpenAPISchema
	if compatible {
		build = v.OpenAPISchemaV2
	}
	schema, err := build()
	if err != nil {
		t.Fatal(err)
	}
	names := crd.Spec.Names
	model := v.ModelName()
	listModel := strings.TrimSuffix(model, names.Kind) + names.ListKind
	r := Resource{Group: crd.Spec.Group, Version: version, Resource: names.Plural, Kind: names.Kind, ListKind: names.ListKind,
		Namespaced: crd.Spec.Scope == apiextensionsv1.NamespaceScoped, Verbs: allVerbs, Subresources: []string{"status"},
		DefinitionName: model, PatchTypes: []string{PatchTypeJSON, PatchTypeMerge, PatchTypeApplyYAML}}
	return r, SuppliedDefinitions{
		model: {Schema: func() *spec.Schema { return schema }},
		listModel: {Schema: func() *spec.Schema {
			return &spec.Schema{SchemaProps: spec.SchemaProps{Type: []string{"object"}, Required: []string{"items"}, Properties: map[string]spec.Schema{
				"items": {SchemaProps: spec.SchemaProps{Type: []string{"array"}, Items: &spec.SchemaOrArray{Schema: &spec.Schema{
					SchemaProps: spec.SchemaProps{Ref: spec.MustCreateRef(v2RefPrefix + model)}}}}},
			}}}
		}},
	}
}

func TestV2TranscoderMatchesGnosticOnCRDs(t *testing.T) {
	for _, compatible := range []bool{false, true} {
		t.Run(fmt.Sprintf("v2 form=%v", compatible), func(t *testing.T) {
			resources, extra := crdFixtures(t, compatible)
			s := NewService("v1.37.0")
			s.Update(resources, extra)
			members, fallbacks := assertTranscodedLikeGnostic(t, v2Fragments(t, s))
			if compatible && members < 20 {
				t.Errorf("only %d members compared", members)
			}
			if compatible && len(fallbacks) > 0 {
				t.Errorf("%d of %d members left to gnostic, e.g. %s", len(fallbacks), members, fallbacks[0])
			}
		})
	}
}

// TestV2TranscoderEdgeCases: schemas and paths with values of every kind,
// and shapes the transcoder leaves to gnostic, against gnostic.
func TestV2TranscoderEdgeCases(t *testing.T) {
	definitions := []string{
		`{"type":"object","default":{"a":[1,"b",null],"":"","t":"true"},"enum":[1,2.5,"x",false,null,"1.0","","- a","a: b"],"example":[[],{}]}`,
		`{"type":["string","null"],"maxLength":63,"minLength":0,"minimum":-1.25,"maximum":1e3,"multipleOf":0.5,"exclusiveMinimum":true,"pattern":"^[a-z]+$"}`,
		`{"type":"string","format":"int-or-string","x-kubernetes-int-or-string":true,"x-kubernetes-validations":[{"rule":"self.size() <= 10 && self != 'a: b'","message":"must be \"short\"\n\tand nice"}]}`,
		`{"properties":{"a":{"$ref":"#/definitions/A"},"b":{"type":"array","items":{"type":"integer","format":"int64"}},"c":{"additionalProperties":false},"d":{"additionalProperties":{"type":"string"}},"e":{"allOf":[{"$ref":"#/definitions/E"}]}},"required":["a","b"]}`,
		`{"title":"T","description":"ünïcode ✓ 😀 \u0000 \u007f \u0085 \u00a0 \ufeff","readOnly":true,"discriminator":"kind","uniqueItems":true,"minItems":1,"maxItems":9223372036854775807,"minProperties":1,"maxProperties":2}`,
		`{"type":"integer","maximum":18446744073709551615,"default":18446744073709551616}`,
		`{"x-big":[18446744073709551615,-9223372036854775808,1.7976931348623157e308,5e-324,0,-0,1E+2]}`,
		`{"x-strings":["true","True","yes","no","on","off","~","null","NULL",".inf","-.inf",".nan",".5","+1","0x1F","0o17","0b101","1_000","1e3","2001-12-14","2001-12-14t21:59:43.10-05:00","12:30","-","--","---","...","- a","? a","?a",":a","a:","a:b","a :b","a #b","a#b","#a","&a","*a","!a","|a",">a","'a'","\"a\"","%a","@a","` + "`a`" + `","{a}","[a]","a,b"," a","a ","a  b","\ta","a\tb","\n","a\n","a\nb","a\n\nb\n\n"," a\nb","a \nb","a\n b","\na","a\r\nb","é\nè","a\u2028b","\u2029"]}`,
		`{"x-map":{"":1,"a b":{"c":{"d":[{"e":[[1,[2,{}]],{"f":"g\nh"}]}]}},"-":[],"true":{},"k\n":1,"` + strings.Repeat("k", 129) + `":1,"` + strings.Repeat("k", 128) + `":"` + strings.Repeat("v", 200) + `"}}`,
		`{"x-root-scalar":"a\n","x-root-literal":"\n\n","x-root-null":null,"x-root-empty":"","x-root-seq":[],"x-root-map":{}}`,
		`{"type":"object","xml":{"name":"x"}}`,         // left to gnostic
		`{"type":"object","externalDocs":{"url":"u"}}`, // left to gnostic
		`{"type":"object","nullable":true}`,            // gnostic rejects it
		`{"enum":"not a list"}`,                        // gnostic ignores it
		`{"additionalProperties":"x"}`,                 // gnostic makes an empty schema of it
		`{"type":1}`,
		`{"maxLength":1.5}`,
		`{"maximum":1e999}`,
		`{"required":[1,"a",null]}`,
		`{"description":null}`,
		`{"description":"escaped \u00e9 \" \\ \/ \b \f \n \r \t \ud83d\ude00"}`,
	}
	paths := []string{
		`{"get":{"responses":{"200":{"description":"OK","schema":{"$ref":"#/definitions/A"}},"default":{"$ref":"#/responses/R"},"x-r":1},"parameters":[{"$ref":"#/parameters/P"},{"name":"body","in":"body","required":true,"schema":{"type":"object"}},{"name":"q","in":"query","type":"boolean","uniqueItems":true,"allowEmptyValue":true},{"name":"p","in":"path","required":true,"type":"string"}],"schemes":["https","wss"],"deprecated":true,"tags":["t"],"summary":"s","x-kubernetes-action":"get"},"parameters":[{"name":"pretty","in":"query","type":"string"}],"x-p":{"a":1}}`,
		`{"$ref":"#/paths/x","put":{"responses":{"201":{"description":"Created","schema":{"type":"file"}}}}}`,          // FileSchema: left to gnostic
		`{"get":{"responses":{"200":{"description":"OK","headers":{"X":{"type":"string"}}}}}}`,                         // left to gnostic
		`{"get":{"responses":{"200":{"description":"OK"}},"parameters":[{"name":"h","in":"header","type":"string"}]}}`, // left to gnostic
		`{"get":{"responses":{"200":{"description":"OK"}},"parameters":[{"name":"q","in":"query","type":"string","enum":["a"],"default":"a"}]}}`,
		`{"get":{"responses":{"200":{"description":"OK"}},"parameters":[{"name":"p","in":"path","type":"string"}]}}`, // path without required: rejected
		`{"get":{"responses":{"200":{"description":"OK"}},"schemes":["ftp"]}}`,
		`{"get":{"description":"no responses"}}`,
		`{"get":{"responses":{"2000":{"description":"OK"}}}}`,
		`{"get":{"responses":{"200":{"$ref":"#/responses/R","description":"d","x-a":1}}}}`,
	}
	check := func(section int, name, value string) {
		t.Helper()
		member := []byte(fmt.Sprintf("%q:%s", name, value))
		want, wantErr := gnosticV2Member(section, member)
		got, gotErr := transcodeV2Member(section, member)
		if (wantErr != nil) != (gotErr != nil) {
			t.Errorf("%s: transcoder error %v, gnostic error %v", value, gotErr, wantErr)
			return
		}
		if wantErr != nil {
			return
		}
		wantBytes, _ := marshalAppend(nil, want)
		gotBytes, _ := marshalAppend(nil, got)
		if !bytes.Equal(gotBytes, wantBytes) {
			t.Errorf("%s:\n got %v\nwant %v", value, got, want)
		}
	}
	for _, value := range definitions {
		check(definitionsSection, "D", value)
	}
	for _, value := range paths {
		check(pathsSection, "/p", value)
	}
	check(pathsSection, "x-not-a-path", paths[0])
	check(definitionsSection, "escaped\u00e9", definitions[0])
}

// yamlV3 is what gnostic puts in an Any for a JSON value.
func yamlV3(t *testing.T, value string) string {
	t.Helper()
	node, err := (&jsonScanner{data: []byte(value)}).value()
	if err != nil {
		t.Fatalf("%s: %v", value, err)
	}
	return string(compiler.Marshal(node))
}

func writeYAML(value string) (string, bool) {
	w := &yamlWriter{}
	s := &jsonScanner{data: []byte(value)}
	if !w.value(s, -1, yamlRoot) {
		return "", false
	}
	return w.text(), true
}

func TestYAMLWriterMatchesYAMLv3(t *testing.T) {
	for _, value := range []string{
		`"true"`, `"1.0"`, `""`, `"null"`, `"- a"`, `"a\nb"`, `"a: b"`, `"ünïcode"`, `"it's"`, `"say \"hi\""`,
		`18446744073709551616`, `-1.5e-3`, `1.0`, `true`, `null`, `[]`, `{}`,
		`{"group":"","kind":"Deployment","version":"v1"}`, `[{"group":"apps","kind":"Deployment","version":"v1"}]`,
		`[{"rule":"self.x == 'a'","message":"x: must be a"}]`, `["a",["b",["c"]],{"d":{"e":["f"]}}]`,
		`{"a":{"b":"x\ny"},"c":["p\nq",{"r":"s\n"}],"t":"u"}`, `"\n a\n"`, `" a\n"`, `"a\n\n"`, `"a\t\nb"`, `"a\u00a0b"`,
	} {
		got, ok := writeYAML(value)
		if !ok {
			t.Errorf("%s: left to yaml.v3", value)
			continue
		}
		if want := yamlV3(t, value); got != want {
			t.Errorf("%s:\n got %q\nwant %q", value, got, want)
		}
	}
}

// TestYAMLWriterMatchesYAMLv3Random: nested values of strings made of the
// characters that change how YAML writes them.
func TestYAMLWriterMatchesYAMLv3Random(t *testing.T) {
	pieces := []string{"a", "b", "1", "0", ".", "-", "+", "e", "x", "o", "_", " ", "  ", "\n", "\t", "\r", ":", "#", "?", "'", `"`, "\\",
		"{", "}", "[", "]", ",", "&", "*", "!", "|", ">", "%", "@", "`", "~", "true", "null", "é", "😀", "\u0085", "\u2028", "\ufeff", "\u00a0",
		"\x00", "\x7f", "---", "...", "2001-", "0x", "0b", "0o", ".inf", "1e5", "12"}
	random := rand.New(rand.NewPCG(1, 2))
	var str func() string
	str = func() string {
		var b strings.Builder
		for range random.IntN(5) {
			b.WriteString(pieces[random.IntN(len(pieces))])
		}
		return b.String()
	}
	quote := func(s string) string {
		var b bytes.Buffer
		fmt.Fprintf(&b, "%q", s) // Go quoting is valid JSON for these pieces but \x00 and \x7f
		out := strings.ReplaceAll(b.String(), `\x00`, `\u0000`)
		out = strings.ReplaceAll(out, `\x7f`, `\u007f`)
		out = strings.ReplaceAll(out, `\a`, `\u0007`)
		out = strings.ReplaceAll(out, `\v`, `\u000b`)
		return strings.ReplaceAll(out, `\u2028`, "\u2028")
	}
	var value func(depth int) string
	value = func(depth int) string {
		switch n := random.IntN(10); {
		case n < 4 || depth > 3:
			return quote(str())
		case n == 4:
			return []string{"0", "-7", "3.25", "1e400", "12345678901234567890", "true", "false", "null"}[random.IntN(8)]
		case n < 7:
			items := make([]string, random.IntN(4))
			for i := range items {
				items[i] = value(depth + 1)
			}
			return "[" + strings.Join(items, ",") + "]"
		default:
			members := make([]string, random.IntN(4))
			for i := range members {
				members[i] = quote(str()) + ":" + value(depth+1)
			}
			return "{" + strings.Join(members, ",") + "}"
		}
	}
	written := 0
	for range 20000 {
		v := value(0)
		got, ok := writeYAML(v)
		if !ok {
			continue
		}
		written++
		if want := yamlV3(t, v); got != want {
			t.Fatalf("%s:\n got %q\nwant %q", v, got, want)
		}
	}
	if written < 10000 {
		t.Errorf("the writer took only %d of 20000 values", written)
	}
}

// BenchmarkV2ProtobufConversion converts the fragments of 300 large custom
// resources (the generated collectors CRD under 300 groups) to protobuf,
// one after the other: gnostic as before, and the transcoder.
//
//	go test ./apiserver/openapi -run '^$' -bench V2ProtobufConversion -count 6
func BenchmarkV2ProtobufConversion(b *testing.B) {
	crd := readTestCRD(b, "../../testdata/crds/collectors.yaml")
	v, err := crdschema.Compile(crd, crd.Spec.Versions[0].Name)
	if err != nil {
		b.Fatal(err)
	}
	var resources []Resource
	extra := SuppliedDefinitions{}
	for i := range 300 {
		copied := crd.DeepCopy()
		copied.Spec.Group = fmt.Sprintf("g%d.example.io", i)
		r, own := crdResource(b, v, copied, crd.Spec.Versions[0].Name, true)
		r.DefinitionName = fmt.Sprintf("io.example.g%d.v1.%s", i, r.Kind)
		for name, supply := range own {
			extra[strings.Replace(name, "io.example.telemetry.", fmt.Sprintf("io.example.g%d.", i), 1)] = supply
		}
		resources = append(resources, r)
	}
	s := NewService("v1.37.0")
	s.Update(resources, extra)
	fragments := v2Fragments(b, s)
	var size int64
	for _, f := range fragments {
		size += int64(len(f.json))
	}
	for _, bc := range []struct {
		name    string
		convert func(f *v2Fragment) ([]byte, [2][]span, error)
	}{
		{"gnostic", referenceV2Protobuf},
		{"transcoder", func(f *v2Fragment) ([]byte, [2][]span, error) { return f.protoMembers(transcodeV2Member) }},
	} {
		b.Run(bc.name, func(b *testing.B) {
			b.SetBytes(size)
			runtime.GC()
			cpu := processCPU()
			for b.Loop() {
				for _, f := range fragments {
					if _, _, err := bc.convert(f); err != nil {
						b.Fatal(err)
					}
				}
			}
			// CPU of the whole process (garbage collection included), less
			// noisy than wall time on a shared machine.
			b.ReportMetric(float64((processCPU()-cpu).Milliseconds())/float64(b.N), "cpu-ms/op")
			b.ReportMetric(float64(len(fragments)), "fragments")
		})
	}
}
