package registry

import (
	"reflect"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/util/validation/field"
)

// Strategy is what the generic store asks of a kind, as kube's registry
// strategies (pkg/registry/<group>/<resource>/strategy.go) answer it. The
// zero value is kube's generic behaviour: no defaulting or validation, no
// generation, a create's status dropped, an update's status the stored one,
// a status write's spec the stored one, deletes at once answered with a
// Status. A kind sets only where it differs.
type Strategy struct {
	// Default, Validate and ValidateUpdate are the kind's defaulting and
	// validation; nil means nothing to do.
	Default        func(obj runtime.Object)
	Validate       func(obj runtime.Object) field.ErrorList
	ValidateUpdate func(obj, old runtime.Object) field.ErrorList

	// Generation is how the kind keeps metadata.generation. The zero value
	// keeps none: the server never sets or moves it (a client's value on
	// create stays; an update keeps the stored one), as kube for
	// ConfigMaps, Services, Namespaces...
	Generation Generation

	// CreateKeepsStatus: a create may set the status (Nodes, which their
	// kubelet registers with it). For other kinds with a status
	// subresource a create's status is dropped.
	CreateKeepsStatus bool
	// PrepareForCreate adjusts a create after defaulting and mutating
	// admission (and the status dropped), before validation: fields only
	// the server sets.
	PrepareForCreate func(obj runtime.Object)
	// PrepareForUpdate adjusts an update of the main resource (its stored
	// status already restored) before validation.
	PrepareForUpdate func(obj, old runtime.Object)
	// PrepareStatusUpdate adjusts a write to /status beyond what the store
	// does for every kind (the request's object with the stored spec, for
	// custom resources only the request's status): the metadata a status
	// write may not change (a Deployment's labels, a Pod's
	// ownerReferences), fields only the server sets.
	PrepareStatusUpdate func(obj, old runtime.Object)
	// StatusResetFields are what PrepareStatusUpdate resets beyond the spec,
	// as field paths ("metadata.labels"): a status writer's managedFields
	// never own them (kube's GetResetFields).
	StatusResetFields []string
	// ValidateStatusUpdate, when set, validates status writes in place of
	// ValidateUpdate (kube's status strategies check the status only).
	ValidateStatusUpdate func(obj, old runtime.Object) field.ErrorList

	// CheckGracefulDelete, when set, makes the kind's deletes graceful:
	// it sets opts.GracePeriodSeconds to the grace the object gets (0:
	// deleted now) and reports whether graceful deletion applies (kube's
	// RESTGracefulDeleteStrategy). Nil: deleted at once.
	CheckGracefulDelete func(obj runtime.Object, opts *metav1.DeleteOptions) bool
	// Finalizing reports whether obj waits for more than its
	// metadata.finalizers before it goes (a namespace's spec.finalizers).
	Finalizing func(obj runtime.Object) bool
	// PrepareForDeletion marks obj as being deleted beyond its
	// deletionTimestamp (a namespace's Terminating phase).
	PrepareForDeletion func(obj runtime.Object)
	// ReturnDeletedObject answers an immediate delete with the object
	// rather than a Success Status.
	ReturnDeletedObject bool
}

// KeepStoredSpec is the part of a status write every kind shares: what is
// neither metadata nor status comes from the stored object (kube's status
// strategies reset the spec; a custom resource's keeps only the request's
// status, metadata included).
func KeepStoredSpec(obj, old runtime.Object) {
	if u, ok := obj.(*unstructured.Unstructured); ok {
		ou, ok := old.(*unstructured.Unstructured)
		if !ok {
			return
		}
		request := &unstructured.Unstructured{Object: u.Object}
		u.Object = runtime.DeepCopyJSON(ou.Object)
		u.SetManagedFields(request.GetManagedFields())
		u.SetResourceVersion(request.GetResourceVersion())
		copyStatus(u, request)
		return
	}
	v, ov, ok := sameStructs(obj, old)
	if !ok {
		return
	}
	t := v.Type()
	for i := 0; i < t.NumField(); i++ {
		switch t.Field(i).Name {
		case "TypeMeta", "ObjectMeta", "Status":
			continue
		}
		if f := v.Field(i); f.CanSet() {
			f.Set(ov.Field(i))
		}
	}
}

// ResetMetadataForStatus keeps the stored labels, annotations, finalizers
// and owner references on a status write, for the kinds whose kube status
// strategy calls metav1.ResetObjectMetaForStatus.
func ResetMetadataForStatus(obj, old runtime.Object) {
	m, om := metaOf(obj), metaOf(old)
	if m == nil || om == nil {
		return
	}
	metav1.ResetObjectMetaForStatus(m, om)
}

// KeepStoredMetadata keeps all of the stored metadata but managedFields on
// a status write (FlowSchemas, PriorityLevelConfigurations).
func KeepStoredMetadata(obj, old runtime.Object) {
	v, ov, ok := sameStructs(obj, old)
	if !ok {
		return
	}
	f, of := v.FieldByName("ObjectMeta"), ov.FieldByName("ObjectMeta")
	if !f.IsValid() || !of.IsValid() || !f.CanSet() {
		return
	}
	managed := f.FieldByName("ManagedFields").Interface()
	rv := f.FieldByName("ResourceVersion").String()
	f.Set(of)
	f.FieldByName("ManagedFields").Set(reflect.ValueOf(managed))
	f.FieldByName("ResourceVersion").SetString(rv)
}
