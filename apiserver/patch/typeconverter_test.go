package patch

import (
	"reflect"
	"slices"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/util/intstr"
	"k8s.io/apimachinery/pkg/util/managedfields"
	"k8s.io/kube-openapi/pkg/schemaconv"
	"k8s.io/kube-openapi/pkg/validation/spec"
	"k8s.io/utils/ptr"
	smdschema "sigs.k8s.io/structured-merge-diff/v6/schema"
	"sigs.k8s.io/structured-merge-diff/v6/typed"
	"sigs.k8s.io/structured-merge-diff/v6/value"

	"github.com/devplane/devplane/apiserver/internal/populate"
	"github.com/devplane/devplane/apiserver/openapi"
)

// kindsOf lists the kinds a definition's x-kubernetes-group-version-kind names.
func kindsOf(definition *spec.Schema) []schema.GroupVersionKind {
	entries, _ := definition.Extensions["x-kubernetes-group-version-kind"].([]interface{})
	var kinds []schema.GroupVersionKind
	for _, e := range entries {
		m := e.(map[string]interface{})
		kinds = append(kinds, schema.GroupVersionKind{Group: m["group"].(string), Version: m["version"].(string), Kind: m["kind"].(string)})
	}
	return kinds
}

// TestKindTypeConvertersMatchTheFullConverter checks, for every kind the
// full converter knows, that the kind's own converter is built from the
// same types and types an empty and a fully populated object the same way.
func TestKindTypeConvertersMatchTheFullConverter(t *testing.T) {
	full, err := BuiltinTypeConverter()
	if err != nil {
		t.Fatal(err)
	}
	definitions := openapi.Definitions()
	fullSchema, err := schemaconv.ToSchemaFromOpenAPI(definitions, false)
	if err != nil {
		t.Fatal(err)
	}
	fullTypes := map[string]smdschema.TypeDef{}
	for _, def := range fullSchema.Types {
		fullTypes[def.Name] = def
	}

	var kinds, populated, typed int
	for _, name := range slices.Sorted(func(yield func(string) bool) {
		for name := range definitions {
			if !yield(name) {
				return
			}
		}
	}) {
		gvks := kindsOf(definitions[name])
		if len(gvks) == 0 {
			continue
		}
		// Same type definitions, name by name: field sets, list and map
		// semantics and scalars all follow from them.
		reached := openapi.DefinitionsReachableFrom(name)
		kindSchema, err := schemaconv.ToSchemaFromOpenAPI(reached, false)
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		for _, def := range kindSchema.Types {
			want := fullTypes[def.Name]
			sortFields(&def.Atom)
			sortFields(&want.Atom)
			if !reflect.DeepEqual(def, want) {
				t.Errorf("%s: type %s differs from the full converter's", name, def.Name)
			}
		}
		for _, gvk := range gvks {
			kinds++
			kindConverter, err := BuiltinKindTypeConverter(gvk)
			if err != nil {
				t.Fatalf("%v: %v", gvk, err)
			}
			samples := []runtime.Object{newObject(gvk)}
			if obj := populatedObject(gvk); obj != nil {
				samples = append(samples, obj)
				populated++
			}
			for _, obj := range samples {
				if assertSameTyping(t, gvk.String(), full, kindConverter, obj) {
					typed++
				} else if gvk.Kind != "WatchEvent" { // has no apiVersion and kind to be typed by
					t.Errorf("%v: %T not typed", gvk, obj)
				}
			}
		}
	}
	t.Logf("%d kinds, %d populated, %d samples typed without error", kinds, populated, typed)
	if kinds < 100 || populated < kinds/2 {
		t.Errorf("only %d kinds, %d populated", kinds, populated)
	}
}

// sortFields puts the fields of atom's maps in name order: the converter
// lists them in the order it ranges over the schema's properties, which
// varies from run to run and means nothing.
func sortFields(atom *smdschema.Atom) {
	if atom.Map != nil {
		slices.SortFunc(atom.Map.Fields, func(a, b smdschema.StructField) int { return strings.Compare(a.Name, b.Name) })
		for i := range atom.Map.Fields {
			sortFields(&atom.Map.Fields[i].Type.Inlined)
		}
		sortFields(&atom.Map.ElementType.Inlined)
	}
	if atom.List != nil {
		sortFields(&atom.List.ElementType.Inlined)
	}
}

// assertSameTyping types obj with both converters and reports whether it
// typed without error (both must agree on errors too).
func assertSameTyping(t *testing.T, what string, full, kind managedfields.TypeConverter, obj runtime.Object) bool {
	t.Helper()
	want, wantErr := full.ObjectToTyped(obj)
	got, gotErr := kind.ObjectToTyped(obj)
	if wantErr != nil || gotErr != nil {
		// Messages are not compared: with several undeclared fields, which
		// one is reported varies from run to run.
		if wantErr == nil || gotErr == nil {
			t.Errorf("%s: full converter error %v, kind converter error %v", what, wantErr, gotErr)
		}
		return false
	}
	wantFields, err := want.ToFieldSet()
	if err != nil {
		t.Fatalf("%s: %v", what, err)
	}
	gotFields, err := got.ToFieldSet()
	if err != nil {
		t.Fatalf("%s: %v", what, err)
	}
	if !gotFields.Equals(wantFields) || gotFields.String() != wantFields.String() {
		t.Errorf("%s: field sets differ:\nfull: %s\nkind: %s", what, wantFields, gotFields)
	}
	if !value.Equals(got.AsValue(), want.AsValue()) {
		t.Errorf("%s: typed values differ", what)
	}
	wantObj, wantErr := full.TypedToObject(want)
	gotObj, gotErr := kind.TypedToObject(got)
	if wantErr != nil || gotErr != nil || !reflect.DeepEqual(gotObj, wantObj) {
		t.Errorf("%s: objects back differ (errors %v, %v)", what, wantErr, gotErr)
	}
	return true
}

// populatedObject returns an object of gvk with every field set (nil for
// kinds only known as unstructured), so that typing it goes through every
// field of the kind's schema.
func populatedObject(gvk schema.GroupVersionKind) runtime.Object {
	obj := newObject(gvk)
	if _, ok := obj.(*unstructured.Unstructured); ok {
		return nil
	}
	populate.Fill(obj)
	obj.GetObjectKind().SetGroupVersionKind(gvk)
	return obj
}

// Hand-written objects of a few kinds, in two versions, exercising
// list-map keys (containers by name, ports by port and protocol),
// IntOrString and Quantity; both converters must agree on each object and
// on what changed between the versions.
func TestKindTypeConvertersCompareAndMergeLikeTheFullConverter(t *testing.T) {
	full, err := BuiltinTypeConverter()
	if err != nil {
		t.Fatal(err)
	}
	deploymentV2 := testDeployment()
	deploymentV2.TypeMeta = metav1.TypeMeta{APIVersion: "apps/v1", Kind: "Deployment"}
	deploymentV2.Spec.Replicas = ptr.To[int32](3)
	deploymentV2.Spec.Template.Spec.Containers = append(deploymentV2.Spec.Template.Spec.Containers, corev1.Container{
		Name: "metrics", Image: "busybox",
		Ports:     []corev1.ContainerPort{{ContainerPort: 9090, Protocol: corev1.ProtocolTCP}, {ContainerPort: 9090, Protocol: corev1.ProtocolUDP}},
		Resources: corev1.ResourceRequirements{Limits: corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("500m")}},
		Env:       []corev1.EnvVar{{Name: "A", Value: "1"}},
	})
	deploymentV1 := testDeployment()
	deploymentV1.TypeMeta = deploymentV2.TypeMeta

	service := func(targetPort intstr.IntOrString, extra ...corev1.ServicePort) *corev1.Service {
		return &corev1.Service{
			TypeMeta:   metav1.TypeMeta{APIVersion: "v1", Kind: "Service"},
			ObjectMeta: metav1.ObjectMeta{Name: "web", Namespace: "default", Annotations: map[string]string{"a": "b"}},
			Spec: corev1.ServiceSpec{
				Selector: map[string]string{"app": "web"},
				Ports: append([]corev1.ServicePort{
					{Name: "http", Port: 80, Protocol: corev1.ProtocolTCP, TargetPort: targetPort},
				}, extra...),
				IPFamilies: []corev1.IPFamily{corev1.IPv4Protocol},
			},
		}
	}
	configMap := func(data map[string]string) *corev1.ConfigMap {
		return &corev1.ConfigMap{
			TypeMeta: metav1.TypeMeta{APIVersion: "v1", Kind: "ConfigMap"},
			ObjectMeta: metav1.ObjectMeta{Name: "cfg", Namespace: "default", OwnerReferences: []metav1.OwnerReference{
				{APIVersion: "apps/v1", Kind: "Deployment", Name: "web", UID: "u1", Controller: ptr.To(true)},
			}},
			Data:       data,
			BinaryData: map[string][]byte{"bin": {0, 1}},
		}
	}
	for _, pair := range []struct {
		name   string
		v1, v2 runtime.Object
	}{
		{"Deployment", deploymentV1, deploymentV2},
		{"Service", service(intstr.FromInt32(8080)), service(intstr.FromString("http"), corev1.ServicePort{Name: "https", Port: 443, Protocol: corev1.ProtocolTCP})},
		{"ConfigMap", configMap(map[string]string{"a": "1"}), configMap(map[string]string{"a": "2", "b": "3"})},
		{"Pod", &corev1.Pod{
			TypeMeta: metav1.TypeMeta{APIVersion: "v1", Kind: "Pod"},
			Spec:     deploymentV1.Spec.Template.Spec,
		}, &corev1.Pod{
			TypeMeta: metav1.TypeMeta{APIVersion: "v1", Kind: "Pod"},
			Spec:     deploymentV2.Spec.Template.Spec,
		}},
	} {
		gvk := pair.v1.GetObjectKind().GroupVersionKind()
		kind, err := BuiltinKindTypeConverter(gvk)
		if err != nil {
			t.Fatal(err)
		}
		for _, obj := range []runtime.Object{pair.v1, pair.v2} {
			if !assertSameTyping(t, pair.name, full, kind, obj) {
				_, err := full.ObjectToTyped(obj)
				t.Fatalf("%s: not typed: %v", pair.name, err)
			}
		}
		compare := func(c managedfields.TypeConverter, opts ...typed.ValidationOptions) (string, string) {
			a, err := c.ObjectToTyped(pair.v1, opts...)
			if err != nil {
				t.Fatal(err)
			}
			b, err := c.ObjectToTyped(pair.v2, opts...)
			if err != nil {
				t.Fatal(err)
			}
			comparison, err := a.Compare(b)
			if err != nil {
				t.Fatalf("%s: compare: %v", pair.name, err)
			}
			merged, err := a.Merge(b)
			if err != nil {
				t.Fatalf("%s: merge: %v", pair.name, err)
			}
			mergedFields, err := merged.ToFieldSet()
			if err != nil {
				t.Fatal(err)
			}
			return comparison.String(), mergedFields.String()
		}
		wantComparison, wantMerged := compare(full)
		gotComparison, gotMerged := compare(kind)
		if gotComparison != wantComparison || gotMerged != wantMerged {
			t.Errorf("%s: kind converter compares %s merges %s; full converter %s, %s", pair.name, gotComparison, gotMerged, wantComparison, wantMerged)
		}
		// As a field manager types live and updated objects: unvalidated
		// once the kind's type is known, with the same outcome.
		if kind.(*kindTypeConverter).kind.Load() == nil {
			t.Fatalf("%s: the kind converter did not learn its type", pair.name)
		}
		gotComparison, gotMerged = compare(kind, typed.AllowDuplicates)
		if gotComparison != wantComparison || gotMerged != wantMerged {
			t.Errorf("%s: kind converter, unvalidated, compares %s merges %s; full converter %s, %s", pair.name, gotComparison, gotMerged, wantComparison, wantMerged)
		}
		if wantComparison == "" || !strings.Contains(wantComparison, "Modified") && !strings.Contains(wantComparison, "Added") {
			t.Errorf("%s: versions should differ: %q", pair.name, wantComparison)
		}
	}
}

// Typing skips validation only where it can find nothing: Go objects with
// duplicates allowed. Duplicates are still refused where not allowed, and
// unstructured objects are still checked against the schema.
func TestKindTypeConverterValidatesWhereItMatters(t *testing.T) {
	configMaps, err := BuiltinKindTypeConverter(configMapGVK)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := configMaps.ObjectToTyped(&corev1.ConfigMap{TypeMeta: metav1.TypeMeta{APIVersion: "v1", Kind: "ConfigMap"}}); err != nil {
		t.Fatal(err)
	}
	owner := metav1.OwnerReference{APIVersion: "v1", Kind: "Pod", Name: "p", UID: "u1"}
	duplicated := &corev1.ConfigMap{TypeMeta: metav1.TypeMeta{APIVersion: "v1", Kind: "ConfigMap"},
		ObjectMeta: metav1.ObjectMeta{Name: "c", OwnerReferences: []metav1.OwnerReference{owner, owner}}}
	if _, err := configMaps.ObjectToTyped(duplicated); err == nil || !strings.Contains(err.Error(), "duplicate") {
		t.Errorf("duplicate owner references, duplicates not allowed: %v, want a duplicate entry error", err)
	}
	if _, err := configMaps.ObjectToTyped(duplicated, typed.AllowDuplicates); err != nil {
		t.Errorf("duplicate owner references, duplicates allowed: %v", err)
	}
	wrongType := &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": "v1", "kind": "ConfigMap", "metadata": map[string]any{"name": "c"}, "data": "not a map",
	}}
	if _, err := configMaps.ObjectToTyped(wrongType, typed.AllowDuplicates); err == nil {
		t.Error("an unstructured ConfigMap whose data is a string was typed")
	}
}

// An apply body may name another kind of the group version; it is typed as
// the converter of every kind types it, and unknown kinds fail the same way.
func TestKindTypeConverterTypesOtherKindsLikeTheFullConverter(t *testing.T) {
	full, err := BuiltinTypeConverter()
	if err != nil {
		t.Fatal(err)
	}
	configMaps, err := BuiltinKindTypeConverter(configMapGVK)
	if err != nil {
		t.Fatal(err)
	}
	secret := &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": "v1", "kind": "Secret", "metadata": map[string]any{"name": "s"}, "stringData": map[string]any{"a": "b"},
	}}
	assertSameTyping(t, "Secret through the ConfigMap converter", full, configMaps, secret)
	unknown := &unstructured.Unstructured{Object: map[string]any{"apiVersion": "v1", "kind": "NoSuchKind"}}
	_, wantErr := full.ObjectToTyped(unknown)
	_, gotErr := configMaps.ObjectToTyped(unknown)
	if wantErr == nil || gotErr == nil || wantErr.Error() != gotErr.Error() {
		t.Errorf("unknown kind: full converter %v, kind converter %v", wantErr, gotErr)
	}
	if _, err := BuiltinKindTypeConverter(schema.GroupVersionKind{Version: "v1", Kind: "NoSuchKind"}); err != nil {
		t.Errorf("converter for an unknown kind: %v", err)
	}
	if _, ok := kindTypeConverters.Load(schema.GroupVersionKind{Version: "v1", Kind: "NoSuchKind"}); ok {
		t.Error("a converter was kept for an unknown kind")
	}
}

// BenchmarkKindTypeConverter measures building one kind's converter as its
// first write does: finding and building the definitions it reaches, then
// the converter. Compare with BenchmarkBuiltinTypeConverter, which is what
// the first write of any kind used to cost on top of building every
// definition.
func BenchmarkKindTypeConverter(b *testing.B) {
	for _, gvk := range []schema.GroupVersionKind{configMapGVK, deploymentGVK, corev1.SchemeGroupVersion.WithKind("Pod")} {
		name, ok := openapi.KindDefinitionName(gvk)
		if !ok {
			b.Fatalf("no definition for %v", gvk)
		}
		b.Run(gvk.Kind, func(b *testing.B) {
			for b.Loop() {
				if _, err := newKindTypeConverter(gvk, name); err != nil {
					b.Fatal(err)
				}
			}
			b.ReportMetric(float64(len(openapi.DefinitionsReachableFrom(name))), "definitions")
		})
	}
}
