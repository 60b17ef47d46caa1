// Package populate fills objects with a value in every field, for tests
// that must go through every field of a kind: typing it for managed
// fields, decoding it from storage. Only tests import it.
package populate

import (
	"reflect"
	"time"

	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/util/intstr"
)

// Fill sets every exported field of obj (a pointer to a struct) as fill
// does.
func Fill(obj runtime.Object) {
	fill(reflect.ValueOf(obj).Elem(), map[reflect.Type]bool{})
}

var (
	sampleTime = time.Date(2024, 5, 6, 7, 8, 9, 0, time.UTC)
	// Types whose JSON form is not their Go fields.
	fixedValues = map[reflect.Type]any{
		reflect.TypeFor[resource.Quantity]():    resource.MustParse("250m"),
		reflect.TypeFor[intstr.IntOrString]():   intstr.FromString("http"),
		reflect.TypeFor[metav1.Time]():          metav1.NewTime(sampleTime),
		reflect.TypeFor[metav1.MicroTime]():     metav1.NewMicroTime(sampleTime),
		reflect.TypeFor[time.Time]():            sampleTime,
		reflect.TypeFor[runtime.RawExtension](): runtime.RawExtension{Raw: []byte(`{"a":"b"}`)},
		reflect.TypeFor[apiextensionsv1.JSON](): apiextensionsv1.JSON{Raw: []byte(`{"a":"b"}`)},
		reflect.TypeFor[metav1.FieldsV1]():      metav1.FieldsV1{Raw: []byte(`{"f:a":{}}`)},
		reflect.TypeFor[metav1.ManagedFieldsEntry](): metav1.ManagedFieldsEntry{
			Manager: "m", Operation: metav1.ManagedFieldsOperationApply, APIVersion: "v1",
			FieldsType: "FieldsV1", FieldsV1: &metav1.FieldsV1{Raw: []byte(`{"f:a":{}}`)},
		},
	}
)

// fill sets every exported field of v: one element in each list and
// map, "x", 1 or true in scalars. A type is filled once along a path, so
// recursive types (JSONSchemaProps) end.
func fill(v reflect.Value, onPath map[reflect.Type]bool) {
	if fixed, ok := fixedValues[v.Type()]; ok {
		v.Set(reflect.ValueOf(fixed))
		return
	}
	if recursive(v.Type(), onPath) {
		return
	}
	switch v.Kind() {
	case reflect.Pointer:
		v.Set(reflect.New(v.Type().Elem()))
		fill(v.Elem(), onPath)
	case reflect.Struct:
		onPath[v.Type()] = true
		defer delete(onPath, v.Type())
		for i := range v.NumField() {
			if v.Type().Field(i).IsExported() {
				fill(v.Field(i), onPath)
			}
		}
	case reflect.Slice:
		if v.Type().Elem().Kind() == reflect.Uint8 {
			v.SetBytes([]byte("x"))
			return
		}
		v.Set(reflect.MakeSlice(v.Type(), 1, 1))
		fill(v.Index(0), onPath)
	case reflect.Map:
		key := reflect.New(v.Type().Key()).Elem()
		fill(key, onPath)
		element := reflect.New(v.Type().Elem()).Elem()
		fill(element, onPath)
		v.Set(reflect.MakeMap(v.Type()))
		v.SetMapIndex(key, element)
	case reflect.String:
		v.SetString("x")
	case reflect.Bool:
		v.SetBool(true)
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64:
		v.SetInt(1)
	case reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64:
		v.SetUint(1)
	case reflect.Float32, reflect.Float64:
		v.SetFloat(1.5)
	}
}

// recursive reports whether t is, or holds through pointers, lists and
// maps, a struct type already being filled.
func recursive(t reflect.Type, onPath map[reflect.Type]bool) bool {
	for t.Kind() == reflect.Pointer || t.Kind() == reflect.Slice || t.Kind() == reflect.Map {
		t = t.Elem()
	}
	return onPath[t]
}
