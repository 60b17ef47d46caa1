package openapi

import (
	"bytes"
	"encoding/json"
	"reflect"
	"strings"
	"testing"

	"k8s.io/kube-openapi/pkg/spec3"

	"github.com/devplane/devplane/apiserver/builtin"
)

// everyBuiltinResource describes every built-in kind as the control plane
// does (controlplane.openAPIResources), with the subresources it serves.
func everyBuiltinResource() []Resource {
	var out []Resource
	for _, k := range builtin.Kinds() {
		pkg := reflect.TypeOf(k.New()).Elem().PkgPath()
		verbs := allVerbs
		if k.GroupVersion.Group == "" && k.Resource == "namespaces" {
			verbs = []string{"create", "delete", "get", "list", "patch", "update", "watch"}
		}
		var subresources []string
		if k.HasStatus {
			subresources = append(subresources, "status")
		}
		if k.Scale != nil {
			subresources = append(subresources, "scale")
		}
		out = append(out, Resource{
			Group: k.GroupVersion.Group, Version: k.GroupVersion.Version, Resource: k.Resource,
			Kind: k.Kind, ListKind: k.ListKind, Namespaced: k.Namespaced, Verbs: verbs, Subresources: subresources,
			DefinitionName: strings.Replace(strings.ReplaceAll(pkg, "/", "."), "k8s.io.", "io.k8s.", 1) + "." + k.Kind,
		})
	}
	return out
}

// pathTestState is every built-in resource and custom resources of both
// scopes, with and without status and scale, some with fewer verbs.
func pathTestState(t testing.TB) ([]Resource, SuppliedDefinitions) {
	crds := testdataCRDs(t)
	crds = append(crds, providerCRDs(20)...)
	custom, extra := crdState(t, crds, true)
	subresources := [][]string{{"status"}, nil, {"status", "scale"}, {"scale"}}
	for i := range custom {
		custom[i].Subresources = subresources[i%len(subresources)]
		if i%5 == 4 {
			custom[i].Verbs = []string{"get", "list", "watch"}
		}
	}
	return append(everyBuiltinResource(), custom...), extra
}

// oldPathItem is a path item as it was encoded before appendV2PathItem:
// through spec.PathItem's MarshalJSON.
func oldPathItem(t testing.TB, routes []route, path string) []byte {
	t.Helper()
	data, err := v2Paths(routes)[path].MarshalJSON()
	if err != nil {
		t.Fatal(err)
	}
	return data
}

// Every route of the built-in resources and of the custom resources is
// written by appendV2PathItem, byte for byte as MarshalJSON writes it.
func TestV2PathItemsMatchMarshalJSON(t *testing.T) {
	resources, extra := pathTestState(t)
	routes := routesForAll(resolveResources(resources, newDefinitionResolver(v2RefPrefix, extra)))
	if len(routes) < 500 {
		t.Fatalf("only %d routes: the comparison is weaker than meant", len(routes))
	}
	namespaced, cluster, scale := 0, 0, 0
	for _, rt := range routes {
		got, ok := appendV2PathItem(nil, rt)
		if !ok {
			t.Errorf("%s: not written directly", rt.path)
			continue
		}
		if want := oldPathItem(t, []route{rt}, rt.path); !bytes.Equal(got, want) {
			t.Errorf("%s differs:\n got %s\nwant %s", rt.path, got, want)
		}
		switch {
		case strings.HasSuffix(rt.path, "/scale"):
			scale++
		case strings.Contains(rt.path, "{namespace}"):
			namespaced++
		case strings.Contains(rt.path, "{name}"):
			cluster++
		}
	}
	if namespaced == 0 || cluster == 0 || scale == 0 {
		t.Errorf("%d namespaced, %d cluster-scoped and %d scale paths: the comparison is weaker than meant", namespaced, cluster, scale)
	}
}

// Fragments, built-in and custom, hold each path as MarshalJSON writes it.
func TestV2FragmentPathsMatchMarshalJSON(t *testing.T) {
	resources, extra := pathTestState(t)
	var base []Resource
	fragments := map[*v2Fragment][]Resource{}
	for _, r := range resources {
		if own := ownDefinitions(r, extra); own != nil {
			fragments[customV2Fragment(r, own)] = []Resource{r}
		} else {
			base = append(base, r)
		}
	}
	fragments[baseV2Fragment(base)] = base
	for f, rs := range fragments {
		if err := f.encode(); err != nil {
			t.Fatal(err)
		}
		routes := routesForAll(resolveResources(rs, newDefinitionResolver(v2RefPrefix, extra)))
		want := v2Paths(routes)
		section := f.sections[pathsSection]
		if len(section.names) != len(want) {
			t.Fatalf("%d paths, want %d", len(section.names), len(want))
		}
		for i, name := range section.names {
			member := f.json[section.json[i].start:section.json[i].end]
			wantMember := append([]byte(`"`+name+`":`), oldPathItem(t, routes, name)...)
			if !bytes.Equal(member, wantMember) {
				t.Errorf("%s differs:\n got %s\nwant %s", name, member, wantMember)
			}
		}
	}
}

// What appendV2PathItem and appendV3PathItem do not render themselves is
// left to the spec types' MarshalJSON, so the fragment's and the v3
// document's bytes are the same.
func TestPathItemFallback(t *testing.T) {
	r := Resource{Group: "stable.example.com", Version: "v1", Resource: "crontabs", Kind: "CronTab", ListKind: "CronTabList",
		Namespaced: true, Verbs: allVerbs, Subresources: []string{"status", "scale"}, DefinitionName: "com.example.stable.v1.CronTab"}
	plain := routesFor(r, "com.example.stable.v1.CronTabList", false)
	cases := map[string]func(routes []route) []route{
		"quote": func(routes []route) []route {
			routes[0].operations[0].description = `list "quoted" <things> & more`
			return routes
		},
		"non-ASCII": func(routes []route) []route {
			routes[0].parameters = []parameter{{name: "pretty", in: "query", typeName: "string", description: "joli, très joli\u2028"}}
			return routes
		},
		"control": func(routes []route) []route {
			routes[1].operations[0].kind.kind = "Tab\tCron"
			return routes
		},
		"definition to escape": func(routes []route) []route {
			routes[1].operations[0].responses = []response{{200, "OK", "a/b~c"}, {401, "Unauthorized", ""}}
			return routes
		},
		"body to escape": func(routes []route) []route {
			routes[1].operations[1].body = "with space"
			return routes
		},
		"responses out of order": func(routes []route) []route {
			routes[1].operations[0].responses = []response{{401, "Unauthorized", ""}, {200, "OK", r.DefinitionName}}
			return routes
		},
		"repeated response": func(routes []route) []route {
			routes[1].operations[0].responses = []response{{200, "OK", ""}, {200, "Fine", r.DefinitionName}}
			return routes
		},
		"odd code": func(routes []route) []route {
			routes[1].operations[0].responses = []response{{42, "", r.DefinitionName}}
			return routes
		},
		"repeated method": func(routes []route) []route {
			routes[1].operations = append(routes[1].operations, routes[1].operations[0])
			routes[1].operations[len(routes[1].operations)-1].id = "again"
			return routes
		},
		"unknown method": func(routes []route) []route {
			routes[1].operations[0].method = "options"
			return routes
		},
		"shared path": func(routes []route) []route {
			extra := routes[2]
			extra.path = routes[1].path
			return append(routes, extra)
		},
		// Not fallbacks, but rarely seen: the writer must render them too.
		"no responses": func(routes []route) []route {
			routes[1].operations[0].responses = nil
			return routes
		},
		"empty strings": func(routes []route) []route {
			op := &routes[1].operations[0]
			op.description, op.id, op.action, op.tag, op.kind = "", "", "", "", groupVersionKind{}
			op.consumes, op.produces = []string{}, nil
			op.responses[0].description = ""
			routes[0].parameters = []parameter{{name: "x"}}
			routes[2].parameters, routes[2].operations = nil, nil
			return routes
		},
	}
	for name, change := range cases {
		t.Run(name, func(t *testing.T) {
			routes := change(routesFor(r, "com.example.stable.v1.CronTabList", false))
			if reflect.DeepEqual(routes, plain) {
				t.Fatal("nothing changed")
			}
			single, merged := routesByPath(routes)
			for _, form := range []struct {
				name        string
				appendItem  func([]byte, route) ([]byte, bool)
				wantRefused bool
			}{
				{"v2", appendV2PathItem, name != "empty strings" && name != "no responses"},
				{"v3", appendV3PathItem, name != "no responses"}, // v3 refuses a parameter without type
			} {
				refused := len(merged) > 0
				for _, rt := range single {
					_, ok := form.appendItem(nil, rt)
					refused = refused || !ok
				}
				if refused != form.wantRefused {
					t.Errorf("%s: refused: %v, want %v", form.name, refused, form.wantRefused)
				}
			}

			v3, err := appendV3Paths([]byte{'{'}, routes)
			if err != nil {
				t.Fatal(err)
			}
			v3 = append(v3, '}')
			if want := mustMarshal(t, &spec3.Paths{Paths: v3Paths(routes)}); !bytes.Equal(v3, want) {
				t.Errorf("v3 paths differ:\n got %s\nwant %s", v3, want)
			}

			parts := v2Parts{routes: single, paths: v2Paths(merged)}
			out, section, err := appendMembers(nil, parts.pathNames(), parts.appendPath)
			if err != nil {
				t.Fatal(err)
			}
			want := v2Paths(routes)
			if len(section.names) != len(want) {
				t.Fatalf("%d paths, want %d", len(section.names), len(want))
			}
			for i, path := range section.names {
				member := out[section.json[i].start:section.json[i].end]
				wantMember := append([]byte(`"`+path+`":`), oldPathItem(t, routes, path)...)
				if !bytes.Equal(member, wantMember) {
					t.Errorf("%s differs:\n got %s\nwant %s", path, member, wantMember)
				}
			}
		})
	}
}

// Each path and definition of the document served is, byte for byte, the
// full build's spec.Swagger's (the order of the members differs: the
// assembled document has them fragment by fragment).
func TestV2DocumentMembersMatchFullBuild(t *testing.T) {
	resources, extra := pathTestState(t)
	s := NewService("v1.37.0")
	s.Update(resources, extra)
	got, _ := fetchV2(t, s, "application/json")
	want, err := fullV2Document("v1.37.0", resources, extra).MarshalJSON()
	if err != nil {
		t.Fatal(err)
	}
	members := func(doc []byte, section string) map[string]json.RawMessage {
		var top map[string]json.RawMessage
		if err := json.Unmarshal(doc, &top); err != nil {
			t.Fatal(err)
		}
		var out map[string]json.RawMessage
		if err := json.Unmarshal(top[section], &out); err != nil {
			t.Fatal(err)
		}
		return out
	}
	for _, section := range []string{"paths", "definitions"} {
		got, want := members(got, section), members(want, section)
		if len(got) != len(want) || len(want) < 500 {
			t.Errorf("%d %s, want %d", len(got), section, len(want))
		}
		for name, value := range want {
			if !bytes.Equal(got[name], value) {
				t.Errorf("%s %s differs:\n got %.300s\nwant %.300s", section, name, got[name], value)
			}
		}
	}
}
