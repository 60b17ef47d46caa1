package builtin

import (
	"reflect"
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
)

// Every kind's behaviour funcs must survive zero values, nil objects and
// objects of the wrong type without panicking.
func TestZeroValuesNeverPanic(t *testing.T) {
	var foreign runtime.Object = &metav1.Status{}
	for _, k := range Kinds() {
		t.Run(k.GroupVersion.String()+"/"+k.Resource, func(t *testing.T) {
			obj := k.New()
			k.Default(obj)
			if errs := k.Validate(obj); len(errs) == 0 {
				t.Errorf("a zero-value %s must fail validation (it has no name)", k.Kind)
			}
			_ = k.ValidateUpdate(obj, k.New())
			_ = k.ValidateUpdate(obj, foreign)
			_ = k.Fields(obj)
			if _, _, err := GetAttrs(k)(obj); err != nil {
				t.Errorf("GetAttrs: %v", err)
			}
			if k.Scale != nil {
				if s := k.Scale.Get(obj); s == nil || s.Spec.Replicas != 1 {
					t.Errorf("Scale.Get on a defaulted %s = %+v, want replicas 1", k.Kind, s)
				}
				k.Scale.Set(obj, 3)
				if s := k.Scale.Get(obj); s.Spec.Replicas != 3 {
					t.Errorf("Scale.Set did not write spec.replicas: %d", s.Spec.Replicas)
				}
				if k.Scale.Get(foreign) != nil {
					t.Error("Scale.Get on a foreign type must return nil")
				}
			}

			// A typed nil pointer and a foreign type.
			nilObj := reflect.Zero(reflect.TypeOf(k.New())).Interface().(runtime.Object)
			k.Default(nilObj)
			_ = k.Fields(nilObj)
			if errs := k.Validate(nilObj); len(errs) == 0 {
				t.Error("a nil object must fail validation")
			}
			if errs := k.Validate(foreign); len(errs) == 0 {
				t.Error("a foreign object must fail validation")
			}
			if _, _, err := GetAttrs(k)(nil); err == nil {
				t.Error("GetAttrs(nil) must fail")
			}
		})
	}
}
