package crdschema

import (
	"encoding/json"
	"fmt"
	"reflect"
	"testing"
	"time"

	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// TestDecodeCRDJSONKnowsEveryField fills every field of the CRD types, as
// k8s.io/apiextensions-apiserver declares them, encodes the CRD with
// encoding/json and requires DecodeCRDJSON to give it back whole. The
// decoder skips keys it does not know, so a field a later Kubernetes adds
// to the types would otherwise be dropped without a word: this names it.
func TestDecodeCRDJSONKnowsEveryField(t *testing.T) {
	f := &filler{t: t}
	want := &apiextensionsv1.CustomResourceDefinition{}
	f.fill("crd", reflect.ValueOf(want).Elem())
	want.APIVersion, want.Kind = "apiextensions.k8s.io/v1", "CustomResourceDefinition"
	data, err := json.Marshal(want)
	if err != nil {
		t.Fatal(err)
	}
	got := &apiextensionsv1.CustomResourceDefinition{}
	if !DecodeCRDJSON(data, got) {
		t.Fatalf("not handled: %.500s", data)
	}
	var diffs []string
	differences("crd", reflect.ValueOf(want).Elem(), reflect.ValueOf(got).Elem(), &diffs)
	for i, d := range diffs {
		if i == 20 {
			t.Errorf("and %d more differences", len(diffs)-i)
			break
		}
		t.Errorf("decoded CRD differs at %s", d)
	}
}

// filler sets every exported field to a non-zero value that survives
// encoding/json (the union types get one of their forms, taking turns).
type filler struct {
	t      *testing.T
	n      int  // makes each scalar distinct
	depth  int  // JSONSchemaProps nesting; deeper ones are left empty
	second bool // which form of a union type comes next
}

const fillerSchemaDepth = 2

func (f *filler) next() int {
	f.n++
	return f.n
}

// turn alternates between the two forms of the union types.
func (f *filler) turn() bool {
	f.second = !f.second
	return f.second
}

func (f *filler) schema(path string) *apiextensionsv1.JSONSchemaProps {
	s := &apiextensionsv1.JSONSchemaProps{}
	f.fill(path, reflect.ValueOf(s).Elem())
	return s
}

func (f *filler) fill(path string, v reflect.Value) {
	switch p := v.Addr().Interface().(type) {
	case *metav1.Time:
		// metav1.Time keeps seconds and decodes to local time.
		*p = metav1.NewTime(time.Date(2025, 3, 4, 5, 6, f.next()%60, 0, time.UTC).Local())
		return
	case *apiextensionsv1.JSON:
		p.Raw = fmt.Appendf(nil, `{"k":[%d,"v",true,null,1.5,{}]}`, f.next())
		return
	case *metav1.FieldsV1:
		p.Raw = fmt.Appendf(nil, `{"f:field%d":{}}`, f.next())
		return
	case *apiextensionsv1.JSONSchemaPropsOrBool:
		if f.turn() {
			p.Allows, p.Schema = true, f.schema(path+".Schema") // a schema decodes with Allows set
		} else {
			p.Allows = true
		}
		return
	case *apiextensionsv1.JSONSchemaPropsOrArray:
		if f.turn() {
			p.Schema = f.schema(path + ".Schema")
		} else {
			p.JSONSchemas = []apiextensionsv1.JSONSchemaProps{*f.schema(path + ".JSONSchemas[0]"), *f.schema(path + ".JSONSchemas[1]")}
		}
		return
	case *apiextensionsv1.JSONSchemaPropsOrStringArray:
		if f.turn() {
			p.Schema = f.schema(path + ".Schema")
		} else {
			p.Property = []string{fmt.Sprint("p", f.next()), fmt.Sprint("p", f.next())}
		}
		return
	case *apiextensionsv1.JSONSchemaProps:
		if f.depth == fillerSchemaDepth {
			return
		}
		f.depth++
		defer func() { f.depth-- }()
	}
	switch v.Kind() {
	case reflect.Struct:
		for i := range v.NumField() {
			if field := v.Type().Field(i); field.IsExported() {
				f.fill(path+"."+field.Name, v.Field(i))
			}
		}
	case reflect.Pointer:
		elem := reflect.New(v.Type().Elem())
		f.fill(path, elem.Elem())
		v.Set(elem)
	case reflect.Slice:
		if v.Type().Elem().Kind() == reflect.Uint8 {
			v.SetBytes([]byte{0, byte(f.next()), 255})
			return
		}
		v.Set(reflect.MakeSlice(v.Type(), 2, 2))
		for i := range 2 {
			f.fill(fmt.Sprintf("%s[%d]", path, i), v.Index(i))
		}
	case reflect.Map:
		if v.Type().Key().Kind() != reflect.String {
			f.t.Fatalf("%s: map keys of kind %s", path, v.Type().Key().Kind())
		}
		v.Set(reflect.MakeMap(v.Type()))
		for range 2 {
			key := reflect.New(v.Type().Key()).Elem()
			key.SetString(fmt.Sprint("k", f.next()))
			elem := reflect.New(v.Type().Elem()).Elem()
			f.fill(fmt.Sprintf("%s[%s]", path, key), elem)
			v.SetMapIndex(key, elem)
		}
	case reflect.String:
		v.SetString(fmt.Sprint("s", f.next()))
	case reflect.Bool:
		v.SetBool(true)
	case reflect.Int, reflect.Int32, reflect.Int64:
		v.SetInt(int64(f.next()))
	case reflect.Float64:
		v.SetFloat(float64(f.next()) + 0.5)
	default:
		f.t.Fatalf("%s: no value for a field of kind %s (%s)", path, v.Kind(), v.Type())
	}
}

// differences appends the paths where a and b differ, with both values.
func differences(path string, a, b reflect.Value, out *[]string) {
	if at, ok := a.Interface().(metav1.Time); ok {
		if bt := b.Interface().(metav1.Time); !at.Equal(&bt) {
			*out = append(*out, fmt.Sprintf("%s: want %v, got %v", path, at, bt))
		}
		return
	}
	switch a.Kind() {
	case reflect.Pointer:
		if a.IsNil() || b.IsNil() {
			if !a.IsNil() {
				*out = append(*out, path+": want a value, got nil")
			} else if !b.IsNil() {
				*out = append(*out, path+": want nil, got a value")
			}
			return
		}
		differences(path, a.Elem(), b.Elem(), out)
	case reflect.Struct:
		for i := range a.NumField() {
			if field := a.Type().Field(i); field.IsExported() {
				differences(path+"."+field.Name, a.Field(i), b.Field(i), out)
			}
		}
	case reflect.Slice:
		if a.Len() != b.Len() || a.IsNil() != b.IsNil() {
			*out = append(*out, fmt.Sprintf("%s: want %d items, got %d", path, a.Len(), b.Len()))
			return
		}
		for i := range a.Len() {
			differences(fmt.Sprintf("%s[%d]", path, i), a.Index(i), b.Index(i), out)
		}
	case reflect.Map:
		if a.Len() != b.Len() || a.IsNil() != b.IsNil() {
			*out = append(*out, fmt.Sprintf("%s: want %d entries, got %d", path, a.Len(), b.Len()))
			return
		}
		for _, key := range a.MapKeys() {
			bv := b.MapIndex(key)
			if !bv.IsValid() {
				*out = append(*out, fmt.Sprintf("%s[%v]: missing", path, key))
				continue
			}
			differences(fmt.Sprintf("%s[%v]", path, key), a.MapIndex(key), bv, out)
		}
	default:
		if !reflect.DeepEqual(a.Interface(), b.Interface()) {
			*out = append(*out, fmt.Sprintf("%s: want %v, got %v", path, a.Interface(), b.Interface()))
		}
	}
}
