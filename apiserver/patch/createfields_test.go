package patch

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"reflect"
	"strings"
	"sync"
	"testing"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/util/intstr"
	"k8s.io/apimachinery/pkg/util/managedfields"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/yaml"

	"github.com/devplane/devplane/apiserver/builtin"
	"github.com/devplane/devplane/apiserver/crdschema"
)

// createViaChain records a create the way UpdateManagedFields did before
// the shortcut: through apimachinery's field manager, on a copy of obj.
func createViaChain(t *testing.T, f *FieldManager, obj runtime.Object, manager string) (runtime.Object, error) {
	t.Helper()
	m, err := f.forSubresource("")
	if err != nil {
		t.Fatal(err)
	}
	return m.Update(f.newEmpty(), obj.DeepCopyObject(), manager)
}

// createsAlike checks that a create of obj by manager ends the same,
// managedFields times aside, through the shortcut, through
// UpdateManagedFields and through the chain. It reports whether the
// shortcut recorded it, and the chain's error.
func createsAlike(t *testing.T, what string, f *FieldManager, obj runtime.Object, manager string) (bool, error) {
	t.Helper()
	before := time.Now().UTC().Truncate(time.Second)
	want, wantErr := createViaChain(t, f, obj, manager)
	got := obj.DeepCopyObject()
	took := f.createEntry(got, manager)
	var gotErr error
	if !took {
		got, gotErr = createViaChain(t, f, got, manager)
	}
	public, publicErr := f.UpdateManagedFields(nil, obj.DeepCopyObject(), manager, "")
	after := time.Now().UTC()
	if wantErr != nil {
		if took || gotErr == nil || gotErr.Error() != wantErr.Error() || publicErr == nil {
			t.Errorf("%s: chain error %v; shortcut took it %v, then %v; UpdateManagedFields %v", what, wantErr, took, gotErr, publicErr)
		}
		return took, wantErr
	}
	if gotErr != nil || publicErr != nil {
		t.Fatalf("%s: errors %v, %v where the chain has none", what, gotErr, publicErr)
	}
	sameObjects(t, what+" (shortcut)", want, got, before, after)
	sameObjects(t, what+" (UpdateManagedFields)", want, public, before, after)
	return took, nil
}

// createsAlikeByShortcut is createsAlike for creates the shortcut must
// take.
func createsAlikeByShortcut(t *testing.T, what string, f *FieldManager, obj runtime.Object, manager string) {
	t.Helper()
	if took, err := createsAlike(t, what, f, obj, manager); !took {
		t.Errorf("%s: the chain was used (its error: %v)", what, err)
	}
}

// sameObjects fails on any difference between want and got but the times
// of their managedFields entries, which must both lie in [from, to].
func sameObjects(t *testing.T, what string, want, got runtime.Object, from, to time.Time) {
	t.Helper()
	want, got = want.DeepCopyObject(), got.DeepCopyObject()
	for _, obj := range []runtime.Object{want, got} {
		accessor, err := meta.Accessor(obj)
		if err != nil {
			t.Fatal(err)
		}
		entries := accessor.GetManagedFields()
		for i := range entries {
			if tm := entries[i].Time; tm == nil || tm.Time.Before(from) || tm.Time.After(to) {
				t.Errorf("%s: entry time %v not in [%v, %v]", what, tm, from, to)
			}
			entries[i].Time = nil
		}
		if entries != nil {
			accessor.SetManagedFields(entries)
		}
	}
	wantJSON, err := json.Marshal(want)
	if err != nil {
		t.Fatal(err)
	}
	gotJSON, err := json.Marshal(got)
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(gotJSON, wantJSON) || !reflect.DeepEqual(got, want) {
		t.Errorf("%s: differs from the chain's\nchain:    %s\nshortcut: %s", what, wantJSON, gotJSON)
	}
}

func managedFieldsOf(t *testing.T, obj runtime.Object) []metav1.ManagedFieldsEntry {
	t.Helper()
	accessor, err := meta.Accessor(obj)
	if err != nil {
		t.Fatal(err)
	}
	return accessor.GetManagedFields()
}

const lastApplied = `{"apiVersion":"v1","data":{"a":"1"},"kind":"ConfigMap","metadata":{"annotations":{},"name":"cfg","namespace":"default"}}`

func builtinCreates() map[string]runtime.Object {
	cm := func(mutate func(*corev1.ConfigMap)) *corev1.ConfigMap {
		c := &corev1.ConfigMap{
			ObjectMeta: metav1.ObjectMeta{Name: "cfg", Namespace: "default"},
			Data:       map[string]string{"a": "1", "b": ""},
		}
		mutate(c)
		return c
	}
	pod := &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{Name: "p", Namespace: "default", Labels: map[string]string{"app": "p"}},
		Spec: corev1.PodSpec{
			InitContainers: []corev1.Container{{Name: "init", Image: "busybox", Command: []string{"true"}}},
			Containers: []corev1.Container{{
				Name:  "main",
				Image: "nginx",
				Args:  []string{"-g", "daemon off;", "-g"},
				Ports: []corev1.ContainerPort{
					{ContainerPort: 80}, // protocol from the key's default
					{ContainerPort: 53, Protocol: corev1.ProtocolUDP, Name: "dns"},
					{ContainerPort: 53, Protocol: corev1.ProtocolTCP, Name: "dns-tcp"},
				},
				Env: []corev1.EnvVar{
					{Name: "A", Value: "1"},
					{Name: "A", Value: "2"}, // a repeated key: one entry for both
					{Name: "B", ValueFrom: &corev1.EnvVarSource{FieldRef: &corev1.ObjectFieldSelector{FieldPath: "metadata.name"}}},
				},
				Resources: corev1.ResourceRequirements{
					Limits:   corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("500m")},
					Requests: corev1.ResourceList{corev1.ResourceMemory: resource.MustParse("64Mi")},
				},
				VolumeMounts: []corev1.VolumeMount{{Name: "data", MountPath: "/data"}},
				SecurityContext: &corev1.SecurityContext{
					RunAsNonRoot: ptr.To(true),
					Capabilities: &corev1.Capabilities{Drop: []corev1.Capability{"ALL"}},
				},
			}},
			Volumes:      []corev1.Volume{{Name: "data", VolumeSource: corev1.VolumeSource{EmptyDir: &corev1.EmptyDirVolumeSource{}}}},
			NodeSelector: map[string]string{"kubernetes.io/os": "linux"},
			Tolerations:  []corev1.Toleration{{Key: "k", Operator: corev1.TolerationOpExists}},
		},
	}
	service := &corev1.Service{
		ObjectMeta: metav1.ObjectMeta{Name: "web", Namespace: "default"},
		Spec: corev1.ServiceSpec{
			Selector: map[string]string{"app": "web"},
			Ports: []corev1.ServicePort{
				{Name: "http", Port: 80, TargetPort: intstr.FromString("http")},
				{Name: "https", Port: 443, Protocol: corev1.ProtocolTCP, TargetPort: intstr.FromInt32(8443)},
				{Name: "dns", Port: 53, Protocol: corev1.ProtocolUDP},
			},
			Type: corev1.ServiceTypeClusterIP,
		},
	}
	repeatedPorts := service.DeepCopy()
	repeatedPorts.Spec.Ports = append(repeatedPorts.Spec.Ports, corev1.ServicePort{Name: "again", Port: 443, Protocol: corev1.ProtocolTCP})
	objects := map[string]runtime.Object{
		"configmap":                  cm(func(*corev1.ConfigMap) {}),
		"configmap with only a name": &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "cfg"}},
		"configmap with empty maps": cm(func(c *corev1.ConfigMap) {
			c.Data, c.BinaryData, c.Labels = map[string]string{}, map[string][]byte{}, map[string]string{}
		}),
		"configmap with metadata": cm(func(c *corev1.ConfigMap) {
			c.GenerateName = "cfg-"
			c.Labels = map[string]string{"app": "web", "tier": ""}
			c.Annotations = map[string]string{corev1.LastAppliedConfigAnnotation: lastApplied, "note": "x"}
			c.OwnerReferences = []metav1.OwnerReference{
				{APIVersion: "apps/v1", Kind: "Deployment", Name: "web", UID: "u-1", Controller: ptr.To(true)},
				{APIVersion: "v1", Kind: "Pod", Name: "p", UID: "u-2", BlockOwnerDeletion: ptr.To(false)},
			}
			c.Finalizers = []string{"example.com/a", "example.com/b"}
			c.Immutable = ptr.To(true)
			c.BinaryData = map[string][]byte{"bin": {0, 1}}
		}),
		"configmap with repeated finalizers": cm(func(c *corev1.ConfigMap) {
			c.Finalizers = []string{"example.com/a", "example.com/a", "example.com/b"}
		}),
		"configmap with server-set metadata": cm(func(c *corev1.ConfigMap) {
			c.UID, c.ResourceVersion, c.Generation = "u", "7", 3
			c.CreationTimestamp = metav1.NewTime(time.Date(2024, 1, 2, 3, 4, 5, 0, time.UTC))
			c.DeletionGracePeriodSeconds = ptr.To[int64](30)
		}),
		"configmap with empty managedFields": cm(func(c *corev1.ConfigMap) {
			c.ManagedFields = []metav1.ManagedFieldsEntry{}
		}),
		"secret": &corev1.Secret{
			ObjectMeta: metav1.ObjectMeta{Name: "s", Namespace: "default"},
			Data:       map[string][]byte{"password": []byte("hunter2")},
			StringData: map[string]string{"user": "admin"},
			Type:       corev1.SecretTypeOpaque,
		},
		"namespace":              &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: "ns", Labels: map[string]string{"a": "b"}}},
		"pod":                    pod,
		"deployment":             testDeployment(),
		"service":                service,
		"service repeated ports": repeatedPorts,
	}
	for name, obj := range objects {
		if _, ok := obj.(*corev1.ConfigMap); ok {
			continue
		}
		defaulted := obj.DeepCopyObject()
		gvk := kindOf(defaulted)
		kindDefaulter(gvk).Default(defaulted)
		objects[name+", defaulted"] = defaulted
	}
	return objects
}

func kindOf(obj runtime.Object) schema.GroupVersionKind {
	gvks, _, err := builtin.Scheme.ObjectKinds(obj)
	if err != nil {
		panic(err)
	}
	return gvks[0]
}

func TestCreateShortcutMatchesChainForBuiltinObjects(t *testing.T) {
	for name, obj := range builtinCreates() {
		f := BuiltinFieldManager(kindOf(obj))
		for _, manager := range []string{"kubectl-create", "", "kubectl-client-side-apply", "ünïcode <&>"} {
			createsAlikeByShortcut(t, name+" by "+manager, f, obj, manager)
		}
	}
	// No fields left after stripMeta's: no entry at all.
	got := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "cfg", Namespace: "default", ManagedFields: []metav1.ManagedFieldsEntry{}}}
	if !BuiltinFieldManager(configMapGVK).createEntry(got, "m") || got.ManagedFields != nil {
		t.Errorf("a name-only create has managedFields %v", got.ManagedFields)
	}
}

func TestCreateShortcutMatchesChainForManifests(t *testing.T) {
	for _, file := range []string{"../../testdata/manifests/app.yaml", "../../testdata/manifests/more-kinds.yaml"} {
		data, err := os.ReadFile(file)
		if err != nil {
			t.Fatal(err)
		}
		for _, doc := range yamlDocuments(data) {
			var u unstructured.Unstructured
			if err := yaml.Unmarshal(doc, &u.Object); err != nil {
				t.Fatalf("%s: %v", file, err)
			}
			gvk := u.GroupVersionKind()
			obj, err := builtin.Scheme.New(gvk)
			if err != nil {
				t.Fatalf("%s: %v", gvk, err)
			}
			if err := runtime.DefaultUnstructuredConverter.FromUnstructured(u.Object, obj); err != nil {
				t.Fatalf("%s: %v", gvk, err)
			}
			f := BuiltinFieldManager(gvk)
			createsAlikeByShortcut(t, file+" "+gvk.Kind, f, obj, "kubectl-create")
			kindDefaulter(gvk).Default(obj)
			createsAlikeByShortcut(t, file+" "+gvk.Kind+", defaulted", f, obj, "kubectl-create")
		}
	}
}

func yamlDocuments(data []byte) [][]byte {
	var docs [][]byte
	for _, doc := range strings.Split(string(data), "\n---") {
		if strings.TrimSpace(strings.TrimPrefix(doc, "\n")) != "" && strings.Contains(doc, "kind:") {
			docs = append(docs, []byte(doc))
		}
	}
	return docs
}

// Every built-in kind: a bare object, the same defaulted, and one with
// every field set (whose typing may fail: then both take the chain).
func TestCreateShortcutMatchesChainForEveryBuiltinKind(t *testing.T) {
	var populatedTaken int
	for _, k := range builtin.Kinds() {
		gvk := k.GroupVersion.WithKind(k.Kind)
		f := BuiltinFieldManager(gvk)
		bare := newObject(gvk)
		if _, ok := bare.(*unstructured.Unstructured); ok {
			continue
		}
		bare.(metav1.Object).SetName("x")
		createsAlikeByShortcut(t, k.Kind+" bare", f, bare, "m")
		if k.Default != nil {
			defaulted := bare.DeepCopyObject()
			k.Default(defaulted)
			createsAlikeByShortcut(t, k.Kind+" defaulted", f, defaulted, "m")
		}
		populated := populatedObject(gvk)
		populated.(metav1.Object).SetManagedFields(nil)
		took, err := createsAlike(t, k.Kind+" populated", f, populated, "m")
		switch {
		case took:
			populatedTaken++
		case err == nil && k.Kind != "ControllerRevision": // see TestCreateShortcutFallsBack
			t.Errorf("%s populated: the chain was used", k.Kind)
		}
	}
	if populatedTaken == 0 {
		t.Error("no populated object took the shortcut")
	}
	t.Logf("%d of %d populated kinds took the shortcut", populatedTaken, len(builtin.Kinds()))
}

// A schema with every kind of field custom resources can have.
const gadgetCRD = `
apiVersion: apiextensions.k8s.io/v1
kind: CustomResourceDefinition
metadata:
  name: gadgets.example.com
spec:
  group: example.com
  scope: Namespaced
  names: {plural: gadgets, singular: gadget, kind: Gadget, listKind: GadgetList}
  versions:
  - name: v1
    served: true
    storage: true
    subresources: {status: {}}
    schema:
      openAPIV3Schema:
        type: object
        properties:
          spec:
            type: object
            properties:
              size: {type: integer}
              ratio: {type: number}
              enabled: {type: boolean}
              name: {type: string, nullable: true}
              port: {x-kubernetes-int-or-string: true}
              tags:
                type: array
                items: {type: string}
              aliases:
                type: array
                x-kubernetes-list-type: set
                items: {type: string}
              ports:
                type: array
                x-kubernetes-list-type: map
                x-kubernetes-list-map-keys: [port, protocol]
                items:
                  type: object
                  required: [port]
                  properties:
                    port: {type: integer}
                    protocol: {type: string, default: TCP}
                    name: {type: string}
              matrix:
                type: array
                items:
                  type: array
                  items: {type: integer}
              labels:
                type: object
                additionalProperties: {type: string}
              selector:
                type: object
                x-kubernetes-map-type: atomic
                properties:
                  app: {type: string}
              nested:
                type: object
                properties:
                  deeper:
                    type: object
                    properties:
                      value: {type: string}
                      empty: {type: object}
              anything:
                type: object
                x-kubernetes-preserve-unknown-fields: true
              template:
                type: object
                x-kubernetes-embedded-resource: true
                x-kubernetes-preserve-unknown-fields: true
          status:
            type: object
            properties:
              phase: {type: string}
              conditions:
                type: array
                x-kubernetes-list-type: map
                x-kubernetes-list-map-keys: [type]
                items:
                  type: object
                  properties:
                    type: {type: string}
                    status: {type: string}
`

var gadgetGVK = schema.GroupVersionKind{Group: "example.com", Version: "v1", Kind: "Gadget"}

var gadgets = []string{
	`{"metadata":{"name":"g","namespace":"default"},"spec":{"size":1}}`,
	`{"metadata":{"name":"g"}}`,
	`{"metadata":{"name":"g","labels":{"a":"b"},"annotations":{"kubectl.kubernetes.io/last-applied-configuration":"{}"},
	  "finalizers":["x","x"],"ownerReferences":[{"apiVersion":"v1","kind":"Pod","name":"p","uid":"u"}],"managedFields":[]},
	  "spec":{"size":3,"ratio":0.5,"enabled":false,"name":null,"port":"http",
	    "tags":["a","a",""],"aliases":["x","y","x"],
	    "ports":[{"port":80},{"port":80,"protocol":"UDP","name":"u"},{"port":81,"protocol":"TCP"},{"port":81,"protocol":"TCP","name":"again"}],
	    "matrix":[[1,2],[]],"labels":{"k":"v","empty":""},"selector":{"app":"g"},
	    "nested":{"deeper":{"value":"v","empty":{}}},
	    "anything":{"list":[1,{"a":null}],"map":{"x":{"y":[]}},"null":null,"n":1.5},
	    "template":{"apiVersion":"v1","kind":"Pod","metadata":{"name":"t","labels":{"a":"b"}},"spec":{"containers":[{"name":"c"}]}}},
	  "status":{"phase":"Running","conditions":[{"type":"Ready","status":"True"}]}}`,
	`{"metadata":{"name":"g"},"spec":{"tags":[],"ports":[],"labels":{},"nested":{},"anything":{},"matrix":[]}}`,
	`{"metadata":{"name":"g"},"spec":null,"status":{}}`,
	`{"metadata":{"name":"g"},"spec":{"nested":null,"tags":null,"labels":null,"selector":{}}}`,
}

func decodeCRD(t *testing.T, data []byte) *apiextensionsv1.CustomResourceDefinition {
	t.Helper()
	crd := &apiextensionsv1.CustomResourceDefinition{}
	if err := yaml.Unmarshal(data, crd); err != nil {
		t.Fatal(err)
	}
	crdschema.DefaultCRD(crd)
	return crd
}

// customFieldManager is the field manager the server gives a version of
// crd, or one typing with deduced (atomic) types.
func customFieldManager(t *testing.T, crd *apiextensionsv1.CustomResourceDefinition, version string, deduced bool) *FieldManager {
	t.Helper()
	gvk := schema.GroupVersionKind{Group: crd.Spec.Group, Version: version, Kind: crd.Spec.Names.Kind}
	if deduced {
		return NewCustomFieldManager(gvk, nil)
	}
	v, err := crdschema.Compile(crd, version)
	if err != nil {
		t.Fatal(err)
	}
	if CustomResourceTypeConverter(v) == nil {
		t.Fatalf("%s: no type converter", gvk)
	}
	return NewCustomFieldManager(gvk, func() managedfields.TypeConverter { return CustomResourceTypeConverter(v) })
}

func customResource(t *testing.T, gvk schema.GroupVersionKind, body string) *unstructured.Unstructured {
	t.Helper()
	u := &unstructured.Unstructured{}
	if err := json.Unmarshal([]byte(body), &u.Object); err != nil {
		t.Fatalf("%s: %v", body, err)
	}
	u.SetGroupVersionKind(gvk)
	return u
}

func TestCreateShortcutMatchesChainForCustomResources(t *testing.T) {
	crd := decodeCRD(t, []byte(gadgetCRD))
	for _, deduced := range []bool{false, true} {
		f := customFieldManager(t, crd, "v1", deduced)
		for i, body := range gadgets {
			what := fmt.Sprintf("gadget %d (deduced types %v)", i, deduced)
			createsAlikeByShortcut(t, what, f, customResource(t, gadgetGVK, body), "controller")
		}
	}
}

// The custom resources of the repository's test CRDs, and one generated
// with every field of each CRD version's schema.
func TestCreateShortcutMatchesChainForTestdataCustomResources(t *testing.T) {
	crontab, err := os.ReadFile("../extensions/testdata/crontab.yaml")
	if err != nil {
		t.Fatal(err)
	}
	var cr map[string]any
	if err := yaml.Unmarshal(crontab, &cr); err != nil {
		t.Fatal(err)
	}
	samples := map[string][]map[string]any{"stable.example.com/CronTab": {cr}}
	for _, file := range []string{
		"../extensions/testdata/crontab-crd.yaml",
		"../crdschema/testdata/crontabs.yaml",
		"../crdschema/testdata/widgets.yaml",
		"../../testdata/examples/crds/widgets.yaml",
		"../../testdata/crds/collectors.yaml",
	} {
		data, err := os.ReadFile(file)
		if err != nil {
			t.Fatal(err)
		}
		for _, doc := range yamlDocuments(data) {
			crd := decodeCRD(t, doc)
			for _, version := range crd.Spec.Versions {
				gvk := schema.GroupVersionKind{Group: crd.Spec.Group, Version: version.Name, Kind: crd.Spec.Names.Kind}
				objects := samples[crd.Spec.Group+"/"+crd.Spec.Names.Kind]
				if version.Schema != nil && version.Schema.OpenAPIV3Schema != nil {
					objects = append(objects, sampleOf(version.Schema.OpenAPIV3Schema, 0).(map[string]any))
				}
				for _, deduced := range []bool{false, true} {
					f := customFieldManager(t, crd, version.Name, deduced)
					for _, obj := range objects {
						u := &unstructured.Unstructured{Object: runtime.DeepCopyJSON(obj)}
						u.SetGroupVersionKind(gvk)
						u.SetName("sample")
						// Samples of other versions may not type.
						if took, err := createsAlike(t, file+" "+gvk.String(), f, u, "m"); !took && err == nil {
							t.Errorf("%s %s (deduced types %v): the chain was used", file, gvk, deduced)
						}
					}
				}
			}
		}
	}
}

// sampleOf returns a value with every field of s set, as JSON decoding
// gives it (one item in lists, one key in maps), down to a depth.
func sampleOf(s *apiextensionsv1.JSONSchemaProps, depth int) any {
	switch {
	case depth > 12:
		return nil
	case s.XIntOrString:
		return "x"
	case len(s.Enum) > 0:
		var v any
		_ = json.Unmarshal(s.Enum[0].Raw, &v)
		return normalizeNumber(v)
	}
	switch s.Type {
	case "string":
		return "x"
	case "integer":
		return int64(1)
	case "number":
		return 1.5
	case "boolean":
		return true
	case "array":
		if s.Items == nil || s.Items.Schema == nil {
			return []any{}
		}
		return []any{sampleOf(s.Items.Schema, depth+1)}
	}
	obj := map[string]any{}
	for name, p := range s.Properties {
		if depth == 0 && (name == "apiVersion" || name == "kind" || name == "metadata") {
			continue
		}
		obj[name] = sampleOf(&p, depth+1)
	}
	if s.AdditionalProperties != nil && s.AdditionalProperties.Schema != nil {
		obj["key"] = sampleOf(s.AdditionalProperties.Schema, depth+1)
	}
	if len(s.Properties) == 0 && ptr.Deref(s.XPreserveUnknownFields, false) {
		obj["unknown"] = map[string]any{"list": []any{int64(1), "a"}, "null": nil}
	}
	return obj
}

func normalizeNumber(v any) any {
	if f, ok := v.(float64); ok && f == float64(int64(f)) {
		return int64(f)
	}
	return v
}

func TestCreateShortcutFallsBack(t *testing.T) {
	cm := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "cfg", Namespace: "default"}, Data: map[string]string{"a": "1"}}
	withEntries := cm.DeepCopy()
	withEntries.ManagedFields = []metav1.ManagedFieldsEntry{{
		Manager: "someone", Operation: metav1.ManagedFieldsOperationApply, APIVersion: "v1",
		FieldsType: "FieldsV1", FieldsV1: &metav1.FieldsV1{Raw: []byte(`{"f:data":{"f:a":{}}}`)},
		Time: ptr.To(metav1.NewTime(time.Now().UTC())),
	}}
	revision := &appsv1.ControllerRevision{
		ObjectMeta: metav1.ObjectMeta{Name: "r"},
		Data:       runtime.RawExtension{Raw: []byte(`{"spec":{"replicas":1}}`)},
		Revision:   1,
	}
	crd := decodeCRD(t, []byte(gadgetCRD))
	otherVersion := customResource(t, gadgetGVK, gadgets[0])
	otherVersion.SetAPIVersion("example.com/v2")
	cases := []struct {
		name    string
		f       *FieldManager
		obj     runtime.Object
		manager string
	}{
		// Sent managedFields are kept, not replaced.
		{"managedFields sent", BuiltinFieldManager(configMapGVK), withEntries, "m"},
		// The chain's JSON turns invalid UTF-8 into U+FFFD.
		{"manager not UTF-8", BuiltinFieldManager(configMapGVK), cm, "bad\xffname"},
		// Typed as a Secret, compared with an empty ConfigMap.
		{"object of another kind", BuiltinFieldManager(configMapGVK), &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Name: "s"}}, "m"},
		// The empty revision's data is null, of an untyped type that data
		// narrows to a map: Compare then walks the field both ways.
		{"revision data", BuiltinFieldManager(appsv1.SchemeGroupVersion.WithKind("ControllerRevision")), revision, "m"},
		// A keyed list item without its key does not type.
		{"condition without type", customFieldManager(t, crd, "v1", false),
			customResource(t, gadgetGVK, `{"metadata":{"name":"g"},"status":{"conditions":[{"status":"True"}]}}`), "m"},
		{"undeclared field", customFieldManager(t, crd, "v1", false),
			customResource(t, gadgetGVK, `{"metadata":{"name":"g"},"spec":{"color":"red"}}`), "m"},
		{"custom resource of another version", customFieldManager(t, crd, "v1", false), otherVersion, "m"},
		{"typed object for an unstructured kind", customFieldManager(t, crd, "v1", false), cm, "m"},
		// builtin.Scheme does not know CRDs: the chain cannot convert them.
		{"CRD object", BuiltinFieldManager(apiextensionsv1.SchemeGroupVersion.WithKind("CustomResourceDefinition")), crd, "m"},
	}
	for _, c := range cases {
		if took, _ := createsAlike(t, c.name, c.f, c.obj, c.manager); took {
			t.Errorf("%s: the shortcut took it", c.name)
		}
	}

	// Subresource writes and updates never reach the shortcut.
	f := BuiltinFieldManager(deploymentGVK)
	before := time.Now().UTC().Truncate(time.Second)
	out, err := f.UpdateManagedFields(nil, testDeployment(), "controller", "status")
	if err != nil {
		t.Fatal(err)
	}
	status, err := f.forSubresource("status")
	if err != nil {
		t.Fatal(err)
	}
	want, err := status.Update(f.newEmpty(), testDeployment(), "controller")
	if err != nil {
		t.Fatal(err)
	}
	sameObjects(t, "status write", want, out, before, time.Now().UTC())
	if mf := managedFieldsOf(t, out); len(mf) != 1 || mf[0].Subresource != "status" {
		t.Errorf("status write: managedFields %+v", mf)
	}
	live, err := f.UpdateManagedFields(nil, testDeployment(), "creator", "")
	if err != nil {
		t.Fatal(err)
	}
	updated := live.(*appsv1.Deployment).DeepCopy()
	updated.Spec.Replicas = ptr.To[int32](5)
	out, err = f.UpdateManagedFields(live, updated, "scaler", "")
	if err != nil {
		t.Fatal(err)
	}
	if mf := managedFieldsOf(t, out); len(mf) != 2 || mf[1].Manager != "scaler" || string(mf[1].FieldsV1.Raw) != `{"f:spec":{"f:replicas":{}}}` {
		t.Errorf("update: managedFields %+v", mf)
	}
}

// Creates share the kind's baseline and pooled walkers.
func TestCreateShortcutConcurrently(t *testing.T) {
	f := BuiltinFieldManager(corev1.SchemeGroupVersion.WithKind("Service"))
	service := builtinCreates()["service repeated ports"]
	want, err := createViaChain(t, f, service, "m")
	if err != nil {
		t.Fatal(err)
	}
	wantFields := string(managedFieldsOf(t, want)[0].FieldsV1.Raw)
	var wg sync.WaitGroup
	for range 4 {
		wg.Go(func() {
			for range 50 {
				got := service.DeepCopyObject()
				if !f.createEntry(got, "m") {
					t.Error("the chain was used")
					return
				}
				if mf := managedFieldsOf(t, got); len(mf) != 1 || string(mf[0].FieldsV1.Raw) != wantFields {
					t.Errorf("managedFields %+v, want fields %s", mf, wantFields)
					return
				}
			}
		})
	}
	wg.Wait()
}
