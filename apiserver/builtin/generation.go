package builtin

import (
	"reflect"

	"k8s.io/apimachinery/pkg/api/equality"
	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
)

// generationRule is how kube 1.37's registry strategy for a kind keeps
// metadata.generation (pkg/registry/<group>/<kind>/strategy.go):
// PrepareForCreate sets it to 1 (onCreate), PrepareForUpdate bumps it when
// changed reports a change. Kinds without a rule keep none: the server
// never sets or moves it (a client's value on create stays, an update keeps
// the stored one).
type generationRule struct {
	onCreate bool
	changed  func(obj, old runtime.Object) bool
}

var generationRules = map[schema.GroupResource]generationRule{
	{Group: "", Resource: "pods"}:                   {true, fieldsChanged("Spec")},
	{Group: "", Resource: "podtemplates"}:           {true, fieldsChanged("Template")},
	{Group: "", Resource: "replicationcontrollers"}: {true, fieldsChanged("Spec")},

	{Group: "apps", Resource: "deployments"}:  {true, specOrAnnotationsChanged},
	{Group: "apps", Resource: "replicasets"}:  {true, fieldsChanged("Spec")},
	{Group: "apps", Resource: "statefulsets"}: {true, fieldsChanged("Spec")},
	{Group: "apps", Resource: "daemonsets"}:   {true, fieldsChanged("Spec")},

	{Group: "batch", Resource: "jobs"}:     {true, fieldsChanged("Spec")},
	{Group: "batch", Resource: "cronjobs"}: {true, fieldsChanged("Spec")},

	// Behind HPAGeneration, beta and on by default in 1.37.
	{Group: "autoscaling", Resource: "horizontalpodautoscalers"}: {true, fieldsChanged("Spec")},

	{Group: "discovery.k8s.io", Resource: "endpointslices"}: {true, endpointSliceChanged},

	{Group: "networking.k8s.io", Resource: "ingresses"}:       {true, fieldsChanged("Spec")},
	{Group: "networking.k8s.io", Resource: "ingressclasses"}:  {true, fieldsChanged("Spec")},
	{Group: "networking.k8s.io", Resource: "networkpolicies"}: {true, fieldsChanged("Spec")},

	{Group: "policy", Resource: "poddisruptionbudgets"}: {true, fieldsChanged("Spec")},

	// Set on create, never moved (PrepareForUpdate does nothing).
	{Group: "scheduling.k8s.io", Resource: "priorityclasses"}: {true, nil},

	// Not set on create, bumped by spec changes (0 → 1 on the first).
	{Group: "storage.k8s.io", Resource: "csidrivers"}: {false, fieldsChanged("Spec")},

	{Group: "resource.k8s.io", Resource: "deviceclasses"}:    {true, fieldsChanged("Spec")},
	{Group: "resource.k8s.io", Resource: "devicetaintrules"}: {true, fieldsChanged("Spec")},
	{Group: "resource.k8s.io", Resource: "resourceslices"}:   {true, fieldsChanged("Spec")},

	{Group: "flowcontrol.apiserver.k8s.io", Resource: "flowschemas"}:                 {true, fieldsChanged("Spec")},
	{Group: "flowcontrol.apiserver.k8s.io", Resource: "prioritylevelconfigurations"}: {true, fieldsChanged("Spec")},

	{Group: "admissionregistration.k8s.io", Resource: "mutatingwebhookconfigurations"}:     {true, fieldsChanged("Webhooks")},
	{Group: "admissionregistration.k8s.io", Resource: "validatingwebhookconfigurations"}:   {true, fieldsChanged("Webhooks")},
	{Group: "admissionregistration.k8s.io", Resource: "validatingadmissionpolicies"}:       {true, fieldsChanged("Spec")},
	{Group: "admissionregistration.k8s.io", Resource: "validatingadmissionpolicybindings"}: {true, fieldsChanged("Spec")},
	{Group: "admissionregistration.k8s.io", Resource: "mutatingadmissionpolicies"}:         {true, fieldsChanged("Spec")},
	{Group: "admissionregistration.k8s.io", Resource: "mutatingadmissionpolicybindings"}:   {true, fieldsChanged("Spec")},
}

// fieldsChanged reports whether any of the named top-level fields differ
// (semantically) between two objects of the same type.
func fieldsChanged(names ...string) func(obj, old runtime.Object) bool {
	return func(obj, old runtime.Object) bool {
		a, b := StructOf(obj), StructOf(old)
		if !a.IsValid() || !b.IsValid() || a.Type() != b.Type() {
			return true
		}
		for _, n := range names {
			fa, fb := a.FieldByName(n), b.FieldByName(n)
			if !fa.IsValid() || !fb.IsValid() {
				return true
			}
			if !equality.Semantic.DeepEqual(fa.Interface(), fb.Interface()) {
				return true
			}
		}
		return false
	}
}

// specOrAnnotationsChanged is the Deployment rule: annotations bump it too,
// since they are copied to the ReplicaSets.
func specOrAnnotationsChanged(obj, old runtime.Object) bool {
	if fieldsChanged("Spec")(obj, old) {
		return true
	}
	a, err1 := meta.Accessor(obj)
	b, err2 := meta.Accessor(old)
	return err1 != nil || err2 != nil || !equality.Semantic.DeepEqual(a.GetAnnotations(), b.GetAnnotations())
}

// endpointSliceChanged is the EndpointSlice rule: anything but metadata
// (it has no spec), and labels.
func endpointSliceChanged(obj, old runtime.Object) bool {
	a, b := StructOf(obj), StructOf(old)
	if !a.IsValid() || !b.IsValid() || a.Type() != b.Type() {
		return true
	}
	t := a.Type()
	for i := 0; i < t.NumField(); i++ {
		switch t.Field(i).Name {
		case "TypeMeta", "ObjectMeta":
			continue
		}
		if !equality.Semantic.DeepEqual(a.Field(i).Interface(), b.Field(i).Interface()) {
			return true
		}
	}
	am, err1 := meta.Accessor(obj)
	bm, err2 := meta.Accessor(old)
	return err1 != nil || err2 != nil || !equality.Semantic.DeepEqual(am.GetLabels(), bm.GetLabels())
}

// StructOf is the struct a typed object points to; the zero Value for
// anything else (nil, unstructured maps).
func StructOf(obj runtime.Object) reflect.Value {
	v := reflect.ValueOf(obj)
	if v.Kind() != reflect.Pointer || v.IsNil() {
		return reflect.Value{}
	}
	v = v.Elem()
	if v.Kind() != reflect.Struct {
		return reflect.Value{}
	}
	return v
}
