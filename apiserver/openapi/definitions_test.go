package openapi

import (
	"maps"
	"reflect"
	"slices"
	"strings"
	"sync"
	"testing"

	appsv1 "k8s.io/api/apps/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	apischema "k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/util/managedfields"
	"k8s.io/kube-openapi/pkg/common"
	"k8s.io/kube-openapi/pkg/validation/spec"
	"k8s.io/utils/ptr"
)

func TestDefinitionsAreKeyedByKubernetesNames(t *testing.T) {
	definitions := Definitions()
	for _, name := range []string{
		"io.k8s.api.apps.v1.Deployment",
		"io.k8s.api.core.v1.PodSpec",
		"io.k8s.apimachinery.pkg.apis.meta.v1.ObjectMeta",
		"io.k8s.apimachinery.pkg.util.intstr.IntOrString",
		"io.k8s.apimachinery.pkg.api.resource.Quantity",
		"io.k8s.apimachinery.pkg.runtime.RawExtension",
		"io.k8s.apimachinery.pkg.version.Info",
		"io.k8s.apiextensions-apiserver.pkg.apis.apiextensions.v1.CustomResourceDefinition",
		"io.k8s.api.authorization.v1.SubjectAccessReview",
	} {
		if definitions[name] == nil {
			t.Errorf("definition %s missing", name)
		}
	}
	for name := range definitions {
		if strings.Contains(name, "/") {
			t.Errorf("definition %q is keyed by Go path, not Kubernetes name", name)
		}
	}
}

func TestDeploymentDefinitionHasDescriptionAndKind(t *testing.T) {
	deployment := Definitions()["io.k8s.api.apps.v1.Deployment"]
	if !strings.Contains(deployment.Description, "Deployment enables declarative updates") {
		t.Errorf("Deployment description = %q", deployment.Description)
	}
	want := []interface{}{map[string]interface{}{"group": "apps", "version": "v1", "kind": "Deployment"}}
	if got := deployment.Extensions[extensionGroupVersionKind]; !reflect.DeepEqual(got, want) {
		t.Errorf("x-kubernetes-group-version-kind = %#v, want %#v", got, want)
	}
	if _, ok := Definitions()["io.k8s.api.apps.v1.DeploymentSpec"].Extensions[extensionGroupVersionKind]; ok {
		t.Error("DeploymentSpec is not a kind but carries x-kubernetes-group-version-kind")
	}
}

func TestMetaTypesListEveryServedGroupVersion(t *testing.T) {
	kinds, _ := Definitions()["io.k8s.apimachinery.pkg.apis.meta.v1.DeleteOptions"].Extensions[extensionGroupVersionKind].([]interface{})
	var groups []string
	for _, k := range kinds {
		groups = append(groups, k.(map[string]interface{})["group"].(string)+"/"+k.(map[string]interface{})["version"].(string))
	}
	joined := strings.Join(groups, ",")
	for _, want := range []string{"/v1", "apps/v1", "apiextensions.k8s.io/v1", "autoscaling/v2"} {
		if !strings.Contains(","+joined+",", ","+want+",") {
			t.Errorf("DeleteOptions kinds %s lack %s", joined, want)
		}
	}
}

func TestFieldDescriptionsAndPatchMarkers(t *testing.T) {
	strategy := Definitions()["io.k8s.api.apps.v1.DeploymentSpec"].Properties["strategy"]
	if !strings.Contains(strategy.Description, "deployment strategy") {
		t.Errorf("DeploymentSpec.strategy description = %q", strategy.Description)
	}
	// v3 form: a ref with a sibling description is wrapped in allOf.
	if len(strategy.AllOf) != 1 || strategy.AllOf[0].Ref.String() != v3RefPrefix+"io.k8s.api.apps.v1.DeploymentStrategy" {
		t.Errorf("DeploymentSpec.strategy should allOf-wrap its ref, got %#v", strategy.SchemaProps)
	}

	containers := Definitions()["io.k8s.api.core.v1.PodSpec"].Properties["containers"]
	if got := containers.Extensions["x-kubernetes-patch-merge-key"]; got != "name" {
		t.Errorf("PodSpec.containers x-kubernetes-patch-merge-key = %v", got)
	}
	if got := containers.Extensions["x-kubernetes-patch-strategy"]; got != "merge" {
		t.Errorf("PodSpec.containers x-kubernetes-patch-strategy = %v", got)
	}
	if got := containers.Extensions["x-kubernetes-list-type"]; got != "atomic" && got != "map" {
		t.Errorf("PodSpec.containers x-kubernetes-list-type = %v", got)
	}
}

func TestEveryGeneratedRefResolves(t *testing.T) {
	for flavor, set := range map[string]*definitionCache{"v2": generatedV2, "v3": generatedV3} {
		schemas := set.all()
		for name, schema := range schemas {
			_, dependencies := set.lookup(name)
			for _, target := range referencedDefinitions(schema) {
				if schemas[target] == nil {
					t.Errorf("%s %s refers to missing definition %s", flavor, name, target)
				}
				// Closures follow the generator's dependencies, so every
				// ref must be among them.
				if !slices.Contains(dependencies, target) {
					t.Errorf("%s %s refers to %s, not among its dependencies %v", flavor, name, target, dependencies)
				}
			}
		}
	}
}

func TestV2FormUsesSwagger2ShapesWithoutDefaults(t *testing.T) {
	v2 := generatedV2.all()
	intOrString := v2["io.k8s.apimachinery.pkg.util.intstr.IntOrString"]
	if len(intOrString.OneOf) != 0 || !intOrString.Type.Contains("string") || intOrString.Format != "int-or-string" {
		t.Errorf("v2 IntOrString should be a plain string with format int-or-string, got %#v", intOrString.SchemaProps)
	}
	if _, ok := intOrString.Extensions[common.ExtensionV2Schema]; ok {
		t.Error("v2 IntOrString still embeds its v2 schema extension")
	}
	if metadata := v2["io.k8s.api.apps.v1.Deployment"].Properties["metadata"]; metadata.Default != nil {
		t.Errorf("v2 Deployment.metadata keeps default %v", metadata.Default)
	}
	if len(Definitions()["io.k8s.apimachinery.pkg.util.intstr.IntOrString"].OneOf) == 0 {
		t.Error("v3 IntOrString should keep its oneOf")
	}
}

func TestDefinitionName(t *testing.T) {
	for input, want := range map[string]string{
		"io.k8s.api.apps.v1.Deployment":                   "io.k8s.api.apps.v1.Deployment",
		"k8s.io/api/apps/v1.Deployment":                   "io.k8s.api.apps.v1.Deployment",
		"k8s.io/kubernetes/vendor/k8s.io/api/core/v1.Pod": "io.k8s.api.core.v1.Pod",
		"k8s.io/apimachinery/pkg/apis/meta/v1.ObjectMeta": "io.k8s.apimachinery.pkg.apis.meta.v1.ObjectMeta",
	} {
		if got := definitionName(input); got != want {
			t.Errorf("definitionName(%q) = %q, want %q", input, got, want)
		}
	}
}

// Server-side apply builds its type converter from these definitions.
func TestDefinitionsFeedManagedFieldsTypeConverter(t *testing.T) {
	converter, err := managedfields.NewTypeConverter(Definitions(), false)
	if err != nil {
		t.Fatalf("NewTypeConverter: %v", err)
	}
	deployment := &appsv1.Deployment{
		TypeMeta:   metav1.TypeMeta{APIVersion: "apps/v1", Kind: "Deployment"},
		ObjectMeta: metav1.ObjectMeta{Name: "web"},
		Spec:       appsv1.DeploymentSpec{Replicas: ptr.To[int32](2)},
	}
	typed, err := converter.ObjectToTyped(deployment)
	if err != nil {
		t.Fatalf("ObjectToTyped: %v", err)
	}
	if fields, err := typed.ToFieldSet(); err != nil || fields.Empty() {
		t.Fatalf("field set of a deployment: %v, err %v", fields, err)
	}
}

func TestRewriteRefsAcceptsEitherFlavor(t *testing.T) {
	schema := &spec.Schema{SchemaProps: spec.SchemaProps{Properties: map[string]spec.Schema{
		"metadata": {SchemaProps: spec.SchemaProps{Ref: spec.MustCreateRef(v2RefPrefix + "io.k8s.apimachinery.pkg.apis.meta.v1.ObjectMeta")}},
	}}}
	rewritten := rewriteRefs(schema, v3RefPrefix)
	metadata := rewritten.Properties["metadata"]
	if got := metadata.Ref.String(); got != v3RefPrefix+"io.k8s.apimachinery.pkg.apis.meta.v1.ObjectMeta" {
		t.Errorf("rewritten ref = %s", got)
	}
	original := schema.Properties["metadata"]
	if got := original.Ref.String(); !strings.HasPrefix(got, v2RefPrefix) {
		t.Errorf("rewriteRefs mutated its input: %s", got)
	}
}

// Definitions built alone, as DefinitionsReachableFrom builds them, must be
// the same as in the full set.
func TestDefinitionsBuiltAloneMatchTheFullSet(t *testing.T) {
	all := Definitions()
	ref := refCallback(v3RefPrefix)
	for name, schema := range all {
		rendered, ok := renderDefinition(v3RefPrefix, ref, name)
		if !ok || !reflect.DeepEqual(rendered.schema, schema) {
			t.Errorf("%s built alone differs from the full set", name)
		}
	}
	if len(all) != len(openAPIDefinitionFuncs()) {
		t.Errorf("Definitions has %d entries, the generator %d", len(all), len(openAPIDefinitionFuncs()))
	}
}

func TestDefinitionsReachableFromAKind(t *testing.T) {
	configMap := DefinitionsReachableFrom("io.k8s.api.core.v1.ConfigMap")
	for _, want := range []string{
		"io.k8s.api.core.v1.ConfigMap",
		"io.k8s.apimachinery.pkg.apis.meta.v1.ObjectMeta",
		"io.k8s.apimachinery.pkg.apis.meta.v1.ManagedFieldsEntry",
		"io.k8s.apimachinery.pkg.apis.meta.v1.OwnerReference",
		"io.k8s.apimachinery.pkg.apis.meta.v1.Time",
		"io.k8s.apimachinery.pkg.apis.meta.v1.FieldsV1",
	} {
		if configMap[want] == nil {
			t.Errorf("ConfigMap's definitions lack %s", want)
		}
	}
	if len(configMap) > 10 || configMap["io.k8s.api.core.v1.PodSpec"] != nil {
		t.Errorf("ConfigMap reaches %d definitions: %v", len(configMap), slices.Sorted(maps.Keys(configMap)))
	}
	all := Definitions()
	for _, root := range []string{"io.k8s.api.core.v1.ConfigMap", "io.k8s.api.apps.v1.Deployment", "io.k8s.api.core.v1.Pod"} {
		reached := DefinitionsReachableFrom(root)
		for name, schema := range reached {
			if !reflect.DeepEqual(schema, all[name]) {
				t.Errorf("%s: %s differs from Definitions()", root, name)
			}
			for _, target := range referencedDefinitions(schema) {
				if reached[target] == nil {
					t.Errorf("%s: %s refers to %s, which was not included", root, name, target)
				}
			}
		}
	}
	if got := DefinitionsReachableFrom("io.k8s.api.core.v1.NoSuchKind"); len(got) != 0 {
		t.Errorf("unknown name reaches %v", got)
	}
}

func TestKindDefinitionName(t *testing.T) {
	for gvk, want := range map[apischema.GroupVersionKind]string{
		{Version: "v1", Kind: "ConfigMap"}:                                               "io.k8s.api.core.v1.ConfigMap",
		{Group: "apps", Version: "v1", Kind: "Deployment"}:                               "io.k8s.api.apps.v1.Deployment",
		{Group: "autoscaling", Version: "v1", Kind: "Scale"}:                             "io.k8s.api.autoscaling.v1.Scale",
		{Group: "apps", Version: "v1", Kind: "DeleteOptions"}:                            "io.k8s.apimachinery.pkg.apis.meta.v1.DeleteOptions",
		{Group: "apiextensions.k8s.io", Version: "v1", Kind: "CustomResourceDefinition"}: "io.k8s.apiextensions-apiserver.pkg.apis.apiextensions.v1.CustomResourceDefinition",
	} {
		if got, ok := KindDefinitionName(gvk); !ok || got != want {
			t.Errorf("KindDefinitionName(%v) = %q, %v; want %q", gvk, got, ok, want)
		}
	}
	if got, ok := KindDefinitionName(apischema.GroupVersionKind{Version: "v1", Kind: "NoSuchKind"}); ok {
		t.Errorf("unknown kind names %q", got)
	}
}

// forgetBuiltDefinitions returns the package to a fresh process's state, in
// which no definition, index or kind table is built yet.
func forgetBuiltDefinitions() {
	definitionGenerators = sync.OnceValue(indexDefinitionGenerators)
	kindsByDefinition = sync.OnceValue(groupVersionKindsByDefinition)
	definitionsByKind = sync.OnceValue(indexDefinitionsByKind)
	generatedV2 = newDefinitionCache(v2RefPrefix)
	generatedV3 = newDefinitionCache(v3RefPrefix)
	allV3Definitions = sync.OnceValue(func() map[string]*spec.Schema { return generatedV3.all() })
}

// BenchmarkColdDefinitions measures building every v3 definition in a fresh
// process (what Definitions costs on its first call).
func BenchmarkColdDefinitions(b *testing.B) {
	defer forgetBuiltDefinitions()
	for b.Loop() {
		forgetBuiltDefinitions()
		if len(Definitions()) == 0 {
			b.Fatal("no definitions")
		}
	}
}

// BenchmarkColdKindDefinitions measures finding one kind's definition and
// building what it reaches in a fresh process, as a type converter for that
// kind does on first use.
func BenchmarkColdKindDefinitions(b *testing.B) {
	defer forgetBuiltDefinitions()
	for _, gvk := range []apischema.GroupVersionKind{
		{Version: "v1", Kind: "ConfigMap"},
		{Group: "apps", Version: "v1", Kind: "Deployment"},
	} {
		b.Run(gvk.Kind, func(b *testing.B) {
			var reached int
			for b.Loop() {
				forgetBuiltDefinitions()
				name, ok := KindDefinitionName(gvk)
				if !ok {
					b.Fatalf("no definition for %v", gvk)
				}
				reached = len(DefinitionsReachableFrom(name))
			}
			b.ReportMetric(float64(reached), "definitions")
		})
	}
}
