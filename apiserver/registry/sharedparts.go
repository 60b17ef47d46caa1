package registry

import (
	"unique"
	"unsafe"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
)

// shareMetadata is the watch cache's Compact for built-in kinds: the parts
// of an object's metadata that many objects repeat become one copy. A
// ReplicaSet's 10,000 pods carry the same namespace, generateName, owner
// reference and creator's managedFields entry, and the events one
// component writes the same managedFields; decoded, each object had its
// own copy of every string and of each entry's fieldsV1 JSON (~30 MB of
// the cache at 10,000 pods and their events). Canonical copies come from
// package unique, so a value no cached object holds any more is collected.
// The object is read-only afterwards, as every cached object is: the
// shared fieldsV1 bytes are a canonical string's.
func shareMetadata(obj runtime.Object) {
	accessor, ok := obj.(metav1.ObjectMetaAccessor)
	if !ok {
		return
	}
	m, ok := accessor.GetObjectMeta().(*metav1.ObjectMeta)
	if !ok {
		return
	}
	m.Namespace = shared(m.Namespace)
	m.GenerateName = shared(m.GenerateName)
	for i := range m.OwnerReferences {
		ref := &m.OwnerReferences[i]
		ref.APIVersion, ref.Kind, ref.Name = shared(ref.APIVersion), shared(ref.Kind), shared(ref.Name)
		ref.UID = sharedString(ref.UID)
	}
	for i := range m.ManagedFields {
		entry := &m.ManagedFields[i]
		entry.Manager, entry.APIVersion, entry.FieldsType = shared(entry.Manager), shared(entry.APIVersion), shared(entry.FieldsType)
		entry.Operation = sharedString(entry.Operation)
		entry.Subresource = shared(entry.Subresource)
		if entry.FieldsV1 != nil && len(entry.FieldsV1.Raw) > 0 {
			entry.FieldsV1.Raw = sharedBytes(entry.FieldsV1.Raw)
		}
	}
}

func shared(s string) string {
	if s == "" {
		return s
	}
	return unique.Make(s).Value()
}

func sharedString[S ~string](s S) S { return S(shared(string(s))) }

// sharedBytes returns the canonical copy of b's content, as bytes no one
// may write to.
func sharedBytes(b []byte) []byte {
	s := unique.Make(string(b)).Value()
	return unsafe.Slice(unsafe.StringData(s), len(s))
}
