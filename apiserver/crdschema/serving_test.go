package crdschema

import (
	"context"
	"slices"
	"strings"
	"testing"
	"time"

	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/kube-openapi/pkg/validation/spec"
)

func TestNamesAccepted(t *testing.T) {
	existing := loadCRD(t, "crontabs.yaml")
	existing.Status.AcceptedNames = existing.Spec.Names
	otherGroup := loadCRD(t, "widgets.yaml")
	otherGroup.Status.AcceptedNames = otherGroup.Spec.Names
	others := []*apiextensionsv1.CustomResourceDefinition{existing, otherGroup}
	noBuiltins := func(string, string) bool { return false }

	fresh := func(mutate func(*apiextensionsv1.CustomResourceDefinitionNames)) *apiextensionsv1.CustomResourceDefinition {
		crd := readCRD(t, "crontabs.yaml")
		crd.Name = "other.stable.example.com"
		crd.Spec.Names = apiextensionsv1.CustomResourceDefinitionNames{Plural: "others", Singular: "other", Kind: "Other", ListKind: "OtherList"}
		mutate(&crd.Spec.Names)
		return crd
	}
	tests := []struct {
		name         string
		crd          *apiextensionsv1.CustomResourceDefinition
		builtins     func(string, string) bool
		ok           bool
		reason, msg  string
		acceptedKind string
	}{
		{"no conflicts", fresh(func(*apiextensionsv1.CustomResourceDefinitionNames) {}), noBuiltins, true, "NoConflicts", "no conflicts found", "Other"},
		{"itself again", existing, noBuiltins, true, "NoConflicts", "no conflicts found", "CronTab"},
		{"plural", fresh(func(n *apiextensionsv1.CustomResourceDefinitionNames) { n.Plural = "crontabs" }), noBuiltins, false, "PluralConflict", `"crontabs" is already in use`, "Other"},
		{"singular vs shortName", fresh(func(n *apiextensionsv1.CustomResourceDefinitionNames) { n.Singular = "ct" }), noBuiltins, false, "SingularConflict", `"ct" is already in use`, "Other"},
		{"shortNames", fresh(func(n *apiextensionsv1.CustomResourceDefinitionNames) { n.ShortNames = []string{"ct", "crontab"} }), noBuiltins, false, "ShortNamesConflict", `["ct" is already in use, "crontab" is already in use]`, "Other"},
		{"kind", fresh(func(n *apiextensionsv1.CustomResourceDefinitionNames) { n.Kind = "CronTab" }), noBuiltins, false, "KindConflict", `"CronTab" is already in use`, ""},
		{"listKind", fresh(func(n *apiextensionsv1.CustomResourceDefinitionNames) { n.ListKind = "CronTabList" }), noBuiltins, false, "ListKindConflict", `"CronTabList" is already in use`, "Other"},
		{"other group is no conflict", fresh(func(n *apiextensionsv1.CustomResourceDefinitionNames) { n.Plural, n.Kind = "widgets", "Widget" }), noBuiltins, true, "NoConflicts", "no conflicts found", "Widget"},
		{"built-in resource", fresh(func(*apiextensionsv1.CustomResourceDefinitionNames) {}), func(g, r string) bool { return g == "stable.example.com" && r == "others" }, false, "PluralConflict", `"others" is already in use by a built-in resource`, "Other"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			ok, reason, msg := NamesAccepted(tt.crd, others, tt.builtins)
			if ok != tt.ok || reason != tt.reason || msg != tt.msg {
				t.Errorf("NamesAccepted = %v, %q, %q; want %v, %q, %q", ok, reason, msg, tt.ok, tt.reason, tt.msg)
			}
			names, _ := AcceptNames(tt.crd, others, tt.builtins)
			if names.Kind != tt.acceptedKind {
				t.Errorf("accepted kind = %q, want %q", names.Kind, tt.acceptedKind)
			}
		})
	}
}

func TestScale(t *testing.T) {
	v := compileVersion(t, loadCRD(t, "crontabs.yaml"), "v1")
	obj := object(t, validCronTab)
	obj.SetUID("uid-1")
	obj.SetResourceVersion("42")
	if err := unstructured.SetNestedField(obj.Object, map[string]any{"replicas": int64(1), "labelSelector": "app=backup"}, "status"); err != nil {
		t.Fatal(err)
	}
	scale, err := v.GetScale(obj)
	if err != nil {
		t.Fatal(err)
	}
	if scale.Spec.Replicas != 2 || scale.Status.Replicas != 1 || scale.Status.Selector != "app=backup" {
		t.Errorf("scale = %+v", scale)
	}
	if scale.Name != "nightly" || scale.Namespace != "default" || scale.UID != "uid-1" || scale.ResourceVersion != "42" || scale.Kind != "Scale" || scale.APIVersion != "autoscaling/v1" {
		t.Errorf("scale meta = %+v %+v", scale.TypeMeta, scale.ObjectMeta)
	}

	if err := v.SetReplicas(obj, 7); err != nil {
		t.Fatal(err)
	}
	if n, _, _ := unstructured.NestedInt64(obj.Object, "spec", "replicas"); n != 7 {
		t.Errorf("spec.replicas = %d after SetReplicas(7)", n)
	}

	// Missing replicas read as zero; a missing spec is created on write.
	bare := object(t, `{apiVersion: stable.example.com/v1, kind: CronTab, metadata: {name: x}}`)
	if scale, err := v.GetScale(bare); err != nil || scale.Spec.Replicas != 0 || scale.Status.Replicas != 0 {
		t.Errorf("GetScale(bare) = %+v, %v", scale, err)
	}
	if err := v.SetReplicas(bare, 3); err != nil {
		t.Fatal(err)
	}
	if n, _, _ := unstructured.NestedInt64(bare.Object, "spec", "replicas"); n != 3 {
		t.Errorf("spec.replicas = %d", n)
	}

	widgets := compileVersion(t, loadCRD(t, "widgets.yaml"), "v1")
	if _, err := widgets.GetScale(bare); err != ErrNoScale {
		t.Errorf("GetScale without subresource: %v", err)
	}
}

func TestSubresourcesAndDeprecation(t *testing.T) {
	crontabs := loadCRD(t, "crontabs.yaml")
	v1 := compileVersion(t, crontabs, "v1")
	v2 := compileVersion(t, crontabs, "v2")
	if !v1.StatusEnabled || v1.ScaleSubresource == nil || v1.Deprecated || !v1.NamespaceScoped {
		t.Errorf("v1: status=%v scale=%v deprecated=%v namespaced=%v", v1.StatusEnabled, v1.ScaleSubresource, v1.Deprecated, v1.NamespaceScoped)
	}
	if !v2.Deprecated || v2.DeprecationWarning != "stable.example.com/v2 CronTab is deprecated" {
		t.Errorf("v2 deprecation = %v %q", v2.Deprecated, v2.DeprecationWarning)
	}
	widget := compileVersion(t, loadCRD(t, "widgets.yaml"), "v1alpha1")
	if widget.DeprecationWarning != "example.dev/v1alpha1 Widget is going away; use v1" || widget.NamespaceScoped || widget.ListKind != "WidgetList" {
		t.Errorf("widget: %q namespaced=%v listKind=%s", widget.DeprecationWarning, widget.NamespaceScoped, widget.ListKind)
	}
	if _, err := Compile(crontabs, "v9"); err == nil || !strings.Contains(err.Error(), `version "v9" not found`) {
		t.Errorf("Compile of unknown version: %v", err)
	}
}

func TestCompileIsCachedPerGeneration(t *testing.T) {
	crd := loadCRD(t, "crontabs.yaml")
	crd.UID, crd.Generation = "cache-test", 1
	first := compileVersion(t, crd, "v1")
	if again := compileVersion(t, crd, "v1"); again != first {
		t.Error("same generation compiled twice")
	}
	crd.Generation = 2
	if next := compileVersion(t, crd, "v1"); next == first {
		t.Error("new generation served the old compiled version")
	}
	Forget(crd.UID)
	if after := compileVersion(t, crd, "v1"); after == first {
		t.Error("Forget kept the entry")
	}
}

func TestConvertToTable(t *testing.T) {
	v := compileVersion(t, loadCRD(t, "crontabs.yaml"), "v1")
	obj := object(t, validCronTab)
	created := metav1.NewTime(time.Now().Add(-2 * time.Hour))
	obj.SetCreationTimestamp(created)
	list := &unstructured.UnstructuredList{Object: map[string]any{"apiVersion": "stable.example.com/v1", "kind": "CronTabList"}}
	list.SetResourceVersion("99")
	list.Items = []unstructured.Unstructured{*obj}

	table, err := v.ConvertToTable(context.Background(), list, &metav1.TableOptions{})
	if err != nil {
		t.Fatal(err)
	}
	var headers []string
	for _, c := range table.ColumnDefinitions {
		headers = append(headers, c.Name+"/"+c.Type)
	}
	if want := []string{"Name/string", "Spec/string", "Replicas/integer", "Image/string", "Age/date"}; !slices.Equal(headers, want) {
		t.Errorf("headers = %v, want %v", headers, want)
	}
	if table.ColumnDefinitions[3].Priority != 1 || table.ColumnDefinitions[1].Description != "The cron spec defining the interval a CronJob is run" {
		t.Errorf("column metadata lost: %+v", table.ColumnDefinitions)
	}
	if table.ResourceVersion != "99" || len(table.Rows) != 1 {
		t.Fatalf("table rv=%q rows=%d", table.ResourceVersion, len(table.Rows))
	}
	row := table.Rows[0]
	want := []any{"nightly", "0 3 * * *", int64(2), "registry.example.com/backup:1.2", "120m"} // kube prints minutes up to 3h
	if len(row.Cells) != len(want) {
		t.Fatalf("cells = %#v", row.Cells)
	}
	for i := range want {
		if row.Cells[i] != want[i] {
			t.Errorf("cell %d = %#v, want %#v", i, row.Cells[i], want[i])
		}
	}
	if row.Object.Object == nil {
		t.Error("row does not carry its object")
	}

	noHeaders, err := v.ConvertToTable(context.Background(), obj, &metav1.TableOptions{NoHeaders: true})
	if err != nil || len(noHeaders.ColumnDefinitions) != 0 || len(noHeaders.Rows) != 1 {
		t.Errorf("NoHeaders table = %+v, %v", noHeaders, err)
	}
}

func TestConvertToTableDefaultsToNameAndAge(t *testing.T) {
	v := compileVersion(t, loadCRD(t, "widgets.yaml"), "v1")
	obj := object(t, `{apiVersion: example.dev/v1, kind: Widget, metadata: {name: w1}, spec: {size: 3}}`)
	obj.SetCreationTimestamp(metav1.NewTime(time.Now().Add(-90 * time.Second)))
	table, err := v.ConvertToTable(context.Background(), obj, nil)
	if err != nil {
		t.Fatal(err)
	}
	if len(table.ColumnDefinitions) != 2 || table.ColumnDefinitions[0].Name != "Name" || table.ColumnDefinitions[1].Name != "Age" {
		t.Fatalf("columns = %+v", table.ColumnDefinitions)
	}
	if got := table.Rows[0].Cells; got[0] != "w1" || got[1] != "90s" {
		t.Errorf("cells = %#v", got)
	}
}

func TestOpenAPISchema(t *testing.T) {
	v := compileVersion(t, loadCRD(t, "crontabs.yaml"), "v1")
	s, err := v.OpenAPISchema()
	if err != nil {
		t.Fatal(err)
	}
	if s.Description != "CronTab runs a container image on a cron schedule." {
		t.Errorf("description = %q", s.Description)
	}
	specSchema := s.Properties["spec"]
	if specSchema.Properties["image"].Description != "Image is the container image to run." {
		t.Errorf("spec.image description = %q", specSchema.Properties["image"].Description)
	}
	if got := specSchema.Properties["containers"].Extensions["x-kubernetes-list-type"]; got != "map" {
		t.Errorf("x-kubernetes-list-type = %v", got)
	}
	if ref := s.Properties["metadata"]; !strings.HasSuffix(ref.Ref.String(), "io.k8s.apimachinery.pkg.apis.meta.v1.ObjectMeta") && !slices.ContainsFunc(ref.AllOf, func(a spec.Schema) bool {
		return strings.HasSuffix(a.Ref.String(), "io.k8s.apimachinery.pkg.apis.meta.v1.ObjectMeta")
	}) {
		t.Errorf("metadata is not a reference to ObjectMeta: %+v", ref)
	}
	gvk, ok := s.Extensions["x-kubernetes-group-version-kind"].([]any)
	if !ok || len(gvk) != 1 {
		t.Fatalf("x-kubernetes-group-version-kind = %#v", s.Extensions["x-kubernetes-group-version-kind"])
	}
	if m := gvk[0].(map[string]any); m["group"] != "stable.example.com" || m["version"] != "v1" || m["kind"] != "CronTab" {
		t.Errorf("gvk = %v", m)
	}

	doc, err := v.OpenAPIV3()
	if err != nil {
		t.Fatal(err)
	}
	if _, ok := doc.Components.Schemas["io.k8s.apimachinery.pkg.apis.meta.v1.ObjectMeta"]; !ok {
		t.Error("v3 document lacks ObjectMeta")
	}
	if _, ok := doc.Paths.Paths["/apis/stable.example.com/v1/namespaces/{namespace}/crontabs/{name}/scale"]; !ok {
		t.Error("v3 document lacks the scale path")
	}
	swagger, err := v.OpenAPIV2()
	if err != nil {
		t.Fatal(err)
	}
	if _, ok := swagger.Definitions["com.example.stable.v1.CronTab"]; !ok {
		t.Errorf("v2 definitions lack the kind: %v", len(swagger.Definitions))
	}
}
