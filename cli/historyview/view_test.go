package historyview

import (
	"encoding/json"
	"fmt"
	"reflect"
	"strings"
	"testing"

	"github.com/devplane/devplane/apiserver/history"
)

// deployment is a version of a Deployment with replicas (nil: unset) and
// an image.
func deployment(rv string, replicas *int, image string) history.Version {
	spec := map[string]any{"template": map[string]any{"spec": map[string]any{
		"containers": []any{map[string]any{"name": "web", "image": image}}}}}
	if replicas != nil {
		spec["replicas"] = *replicas
	}
	obj := map[string]any{"apiVersion": "apps/v1", "kind": "Deployment",
		"metadata": map[string]any{"name": "web", "resourceVersion": rv,
			"labels":        map[string]any{"app.kubernetes.io/name": "web"},
			"managedFields": []any{map[string]any{"manager": "kubectl", "operation": "Update"}}},
		"spec": spec}
	raw, _ := json.Marshal(obj)
	return history.Version{ResourceVersion: rv, Object: raw}
}

func replicas(n int) *int { return &n }

func TestParseField(t *testing.T) {
	for path, want := range map[string][]step{
		"spec.replicas": {{key: "spec", index: -1}, {key: "replicas", index: -1}},
		"spec.template.spec.containers[0].image": {{key: "spec", index: -1}, {key: "template", index: -1},
			{key: "spec", index: -1}, {key: "containers", index: -1}, {index: 0}, {key: "image", index: -1}},
		`metadata.labels.app\.kubernetes\.io/name`: {{key: "metadata", index: -1}, {key: "labels", index: -1},
			{key: "app.kubernetes.io/name", index: -1}},
		"status.conditions[1][2]": {{key: "status", index: -1}, {key: "conditions", index: -1}, {index: 1}, {index: 2}},
	} {
		f, err := ParseField(path)
		if err != nil || !reflect.DeepEqual(f.steps, want) || f.String() != path {
			t.Errorf("ParseField(%q) = %+v, %v; want %+v", path, f.steps, err, want)
		}
	}
	for _, bad := range []string{"", ".spec", "spec.", "spec..replicas", "[0].a", "spec.containers[x]", "spec.containers[0", `spec\`} {
		if f, err := ParseField(bad); err == nil {
			t.Errorf("ParseField(%q) = %+v, want an error", bad, f.steps)
		}
	}
}

func TestChangesOfAField(t *testing.T) {
	created := deployment("10", replicas(3), "nginx:1")
	created.Created = true
	versions := []history.Version{
		created,
		deployment("11", replicas(3), "nginx:2"), // the image only
		deployment("12", replicas(5), "nginx:2"), // kubectl scale
		deployment("13", nil, "nginx:2"),         // replicas dropped
		{ResourceVersion: "14", Deleted: true},
	}
	recreated := deployment("20", replicas(1), "nginx:2")
	recreated.Created = true
	versions = append(versions, recreated)

	describe := func(changes []Change, of []history.Version) []string {
		var out []string
		for _, c := range changes {
			out = append(out, fmt.Sprintf("%s %s→%s", of[c.Version].ResourceVersion, c.Old, c.New))
		}
		return out
	}
	for path, want := range map[string][]string{
		"spec.replicas":                          {"10 <unset>→3", "12 3→5", "13 5→<unset>", "20 <unset>→1"},
		"spec.template.spec.containers[0].image": {"10 <unset>→nginx:1", "11 nginx:1→nginx:2", "14 nginx:2→<deleted>", "20 <unset>→nginx:2"},
		"spec.template.spec.containers[0]":       {`10 <unset>→{"image":"nginx:1","name":"web"}`, `11 {"image":"nginx:1","name":"web"}→{"image":"nginx:2","name":"web"}`, `14 {"image":"nginx:2","name":"web"}→<deleted>`, `20 <unset>→{"image":"nginx:2","name":"web"}`},
		"spec.template.spec.containers[1].image": nil,
		"spec.paused":                            nil,
	} {
		f, err := ParseField(path)
		if err != nil {
			t.Fatal(err)
		}
		changes, err := Changes(versions, f)
		if got := describe(changes, versions); err != nil || !reflect.DeepEqual(got, want) {
			t.Errorf("%s: %q, %v; want %q", path, got, err, want)
		}
	}

	// When older versions were compacted away, the oldest kept one is
	// where the values start: its writer did not necessarily set them.
	f, _ := ParseField("spec.replicas")
	changes, err := Changes(versions[1:4], f)
	if got := describe(changes, versions[1:4]); err != nil || !reflect.DeepEqual(got, []string{"12 3→5", "13 5→<unset>"}) {
		t.Errorf("from a compacted start: %q, %v", got, err)
	}
}

func TestYAMLAndDiff(t *testing.T) {
	a, err := YAML(deployment("10", replicas(3), "nginx:1"), false)
	if err != nil {
		t.Fatal(err)
	}
	b, err := YAML(deployment("12", replicas(5), "nginx:1"), false)
	if err != nil {
		t.Fatal(err)
	}
	for _, hidden := range []string{"managedFields", "resourceVersion"} {
		if strings.Contains(a, hidden) {
			t.Errorf("YAML shows %s:\n%s", hidden, a)
		}
	}
	if withManaged, _ := YAML(deployment("10", replicas(3), "nginx:1"), true); !strings.Contains(withManaged, "manager: kubectl") {
		t.Errorf("YAML with managed fields leaves them out:\n%s", withManaged)
	}
	diff := Diff(a, b, "10", "12")
	for _, line := range []string{"--- 10", "+++ 12", "-  replicas: 3", "+  replicas: 5"} {
		if !strings.Contains(diff, line+"\n") {
			t.Errorf("diff lacks %q:\n%s", line, diff)
		}
	}
	if n := strings.Count(diff, "\n-") + strings.Count(diff, "\n+"); n != 3 { // "+++" and one line each way
		t.Errorf("diff has %d changed lines, want one each way:\n%s", n-1, diff)
	}
	if created := Diff("", a, "nothing", "10"); strings.Count(created, "\n+") != strings.Count(a, "\n")+1 || strings.Contains(created, "\n \n") {
		t.Errorf("a creation is not all added lines:\n%s", created)
	}
	if d := Diff(a, a, "10", "10"); d != "" {
		t.Errorf("diff of equal texts: %q", d)
	}
	if gone, err := YAML(history.Version{ResourceVersion: "14", Deleted: true}, false); err != nil || gone != "" {
		t.Errorf("YAML of a deletion: %q, %v", gone, err)
	}
}
