package registry

import (
	"reflect"

	"k8s.io/apimachinery/pkg/api/equality"
	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"

	"github.com/devplane/devplane/apiserver/builtin"
)

// copyStatus sets dst's status to src's. Typed objects carry it in a
// Status field; unstructured ones under "status".
func copyStatus(dst, src runtime.Object) {
	if du, ok := dst.(*unstructured.Unstructured); ok {
		su, ok := src.(*unstructured.Unstructured)
		if !ok {
			return
		}
		if st, found := su.Object["status"]; found {
			du.Object["status"] = runtime.DeepCopyJSONValue(st)
		} else {
			delete(du.Object, "status")
		}
		return
	}
	dv, sv, ok := sameStructs(dst, src)
	if !ok {
		return
	}
	df, sf := dv.FieldByName("Status"), sv.FieldByName("Status")
	if df.IsValid() && df.CanSet() {
		df.Set(sf)
	}
}

// clearStatus empties obj's status: the Status field of a typed object,
// "status" of an unstructured one.
func clearStatus(obj runtime.Object) {
	if u, ok := obj.(*unstructured.Unstructured); ok {
		delete(u.Object, "status")
		return
	}
	if v := builtin.StructOf(obj); v.IsValid() {
		if f := v.FieldByName("Status"); f.IsValid() && f.CanSet() {
			f.Set(reflect.Zero(f.Type()))
		}
	}
}

func setResourceVersionFrom(dst, src runtime.Object) {
	d, err1 := meta.Accessor(dst)
	s, err2 := meta.Accessor(src)
	if err1 == nil && err2 == nil {
		d.SetResourceVersion(s.GetResourceVersion())
	}
}

// sameStructs are the structs a and b point to, when they are of one type.
func sameStructs(a, b runtime.Object) (av, bv reflect.Value, ok bool) {
	av, bv = builtin.StructOf(a), builtin.StructOf(b)
	return av, bv, av.IsValid() && bv.IsValid() && av.Type() == bv.Type()
}

// ContentChanged reports whether anything but metadata differs between
// two objects: kube's rule for the generation of custom resources
// (unstructured; status included: with a status subresource an update
// keeps the stored status, without one a status change bumps it too). For
// typed objects, anything but metadata and status.
func ContentChanged(a, b runtime.Object) bool {
	if au, ok := a.(*unstructured.Unstructured); ok {
		bu, ok := b.(*unstructured.Unstructured)
		if !ok {
			return true
		}
		strip := func(m map[string]interface{}) map[string]interface{} {
			out := make(map[string]interface{}, len(m))
			for k, v := range m {
				switch k {
				case "metadata", "apiVersion", "kind":
				default:
					out[k] = v
				}
			}
			return out
		}
		return !equality.Semantic.DeepEqual(strip(au.Object), strip(bu.Object))
	}
	av, bv := builtin.StructOf(a), builtin.StructOf(b)
	if !av.IsValid() || !bv.IsValid() || av.Type() != bv.Type() {
		return true
	}
	t := av.Type()
	for i := 0; i < t.NumField(); i++ {
		switch t.Field(i).Name {
		case "TypeMeta", "ObjectMeta", "Status":
			continue
		}
		if !equality.Semantic.DeepEqual(av.Field(i).Interface(), bv.Field(i).Interface()) {
			return true
		}
	}
	return false
}
