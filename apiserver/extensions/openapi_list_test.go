package extensions

import (
	"bytes"
	"testing"
)

// The list schemas written as JSON are, byte for byte, the spec.Schema's
// MarshalJSON; names that would need escaping are left to the spec.Schema.
func TestListSchemaV2JSON(t *testing.T) {
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
	for _, c := range cases {
		got, refs, ok := listSchemaV2JSON(c.model, c.group, c.version, c.listKind)
		if ok != c.ok {
			t.Errorf("%s: ok %v, want %v", c.model, ok, c.ok)
		}
		if !ok {
			continue
		}
		want, err := listSchema(c.model, c.group, c.version, c.listKind).MarshalJSON()
		if err != nil {
			t.Fatal(err)
		}
		if !bytes.Equal(got, want) {
			t.Errorf("%s differs:\n got %s\nwant %s", c.model, got, want)
		}
		if len(refs) != 2 || refs[0] != "io.k8s.apimachinery.pkg.apis.meta.v1.ListMeta" || refs[1] != c.model {
			t.Errorf("%s: refs %v", c.model, refs)
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
	b.Run("JSON", func(b *testing.B) {
		for b.Loop() {
			if _, _, ok := listSchemaV2JSON("com.example.stable.v1.CronTab", "stable.example.com", "v1", "CronTabList"); !ok {
				b.Fatal("not written")
			}
		}
	})
}
