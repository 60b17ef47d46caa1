package extensions

import (
	"bytes"
	"strings"
	"testing"

	builderutil "k8s.io/kube-openapi/pkg/builder3/util"
	"k8s.io/kube-openapi/pkg/schemamutation"
	"k8s.io/kube-openapi/pkg/validation/spec"
)

// v3ListSchema is listSchema as /openapi/v3 holds it: refs moved under
// #/components/schemas/, refs with siblings wrapped in allOf (what the
// openapi package's resolver does to a supplied schema).
func v3ListSchema(itemModel, group, version, listKind string) *spec.Schema {
	walker := schemamutation.Walker{
		SchemaCallback: schemamutation.SchemaCallBackNoop,
		RefCallback: func(ref *spec.Ref) *spec.Ref {
			target, ok := strings.CutPrefix(ref.String(), v2RefPrefix)
			if !ok {
				return ref
			}
			moved := spec.MustCreateRef(v3RefPrefix + target)
			return &moved
		},
	}
	return builderutil.WrapRefs(walker.WalkSchema(listSchema(itemModel, group, version, listKind)))
}

// The list schemas written as JSON are, byte for byte, the spec.Schema's
// MarshalJSON in either form; names that would need escaping are left to
// the spec.Schema.
func TestListSchemaJSON(t *testing.T) {
	cases := []struct {
		model, group, version, listKind string
		ok                              bool
	}{
		{"com.example.stable.v1.CronTab", "stable.example.com", "v1", "CronTabList", true},
		{"io.example.provider.svc02.v1beta2.Resource029", "svc02.provider.example.io", "v1beta2", "Resource029List", true},
		{"io.example.edge.v1.Edge", "edge.example.io", "v1", "EdgeItems", true}, // no List suffix
		{"io.x-y.v1.Thing_2", "x-y.io", "v1", "Thing_2List", true},
		{"com.example.v1.Widget", "", "v1", "", true},
		{"com.example.v1.Odd/Name", "example.com", "v1", "OddList", false},
		{"com.example.v1.Quote", "example.com", "v1", `Quo"teList`, false},
		{"", "example.com", "v1", "NoneList", false},
	}
	for _, form := range []struct {
		name      string
		v2        bool
		reference func(itemModel, group, version, listKind string) *spec.Schema
	}{{"v2", true, listSchema}, {"v3", false, v3ListSchema}} {
		for _, c := range cases {
			got, refs, ok := appendListSchemaJSON([]byte("prefix:"), c.model, c.group, c.version, c.listKind, form.v2)
			if ok != c.ok {
				t.Errorf("%s %s: ok %v, want %v", form.name, c.model, ok, c.ok)
			}
			if !ok {
				continue
			}
			want, err := form.reference(c.model, c.group, c.version, c.listKind).MarshalJSON()
			if err != nil {
				t.Fatal(err)
			}
			if !bytes.Equal(got, append([]byte("prefix:"), want...)) {
				t.Errorf("%s %s differs:\n got %s\nwant prefix:%s", form.name, c.model, got, want)
			}
			if len(refs) != 2 || refs[0] != "io.k8s.apimachinery.pkg.apis.meta.v1.ListMeta" || refs[1] != c.model {
				t.Errorf("%s %s: refs %v", form.name, c.model, refs)
			}
		}
	}
}

func BenchmarkListSchema(b *testing.B) {
	b.Run("spec.Schema", func(b *testing.B) {
		for b.Loop() {
			if _, err := listSchema("com.example.stable.v1.CronTab", "stable.example.com", "v1", "CronTabList").MarshalJSON(); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("spec.Schema v3", func(b *testing.B) {
		for b.Loop() {
			if _, err := v3ListSchema("com.example.stable.v1.CronTab", "stable.example.com", "v1", "CronTabList").MarshalJSON(); err != nil {
				b.Fatal(err)
			}
		}
	})
	for _, v2 := range []bool{true, false} {
		name := "JSON v3"
		if v2 {
			name = "JSON"
		}
		b.Run(name, func(b *testing.B) {
			for b.Loop() {
				if _, _, ok := appendListSchemaJSON(nil, "com.example.stable.v1.CronTab", "stable.example.com", "v1", "CronTabList", v2); !ok {
					b.Fatal("not written")
				}
			}
		})
	}
}
