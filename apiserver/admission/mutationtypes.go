package admission

import (
	"reflect"
	"strings"

	"github.com/google/cel-go/common/types"
	"github.com/google/cel-go/common/types/ref"
	"github.com/google/cel-go/common/types/traits"
	"google.golang.org/protobuf/types/known/structpb"
)

// mutationTypes lets mutating admission policies construct values as kube's
// CEL does: Object{...} (and its nested Object.spec.template{...} types)
// for apply configurations, and JSONPatch{op, path, from, value}. The
// values are plain maps; the rest defers to the base provider.
type mutationTypes struct{ types.Provider }

func isMutationType(name string) bool {
	return name == "Object" || strings.HasPrefix(name, "Object.") || name == "JSONPatch"
}

func (p mutationTypes) FindStructType(name string) (*types.Type, bool) {
	if isMutationType(name) {
		return types.NewTypeTypeWithParam(types.NewObjectType(name)), true
	}
	return p.Provider.FindStructType(name)
}

func (p mutationTypes) FindStructFieldNames(name string) ([]string, bool) {
	if name == "JSONPatch" {
		return []string{"op", "path", "from", "value"}, true
	}
	if isMutationType(name) {
		return nil, true
	}
	return p.Provider.FindStructFieldNames(name)
}

func (p mutationTypes) FindStructFieldType(name, field string) (*types.FieldType, bool) {
	if !isMutationType(name) {
		return p.Provider.FindStructFieldType(name, field)
	}
	t := types.DynType
	if name == "JSONPatch" && field != "value" {
		t = types.StringType
	}
	return &types.FieldType{Type: t,
		IsSet: func(target any) bool {
			m, ok := target.(map[string]any)
			_, set := m[field]
			return ok && set
		},
		GetFrom: func(target any) (any, error) {
			m, _ := target.(map[string]any)
			return m[field], nil
		}}, true
}

func (p mutationTypes) NewValue(name string, fields map[string]ref.Val) ref.Val {
	if !isMutationType(name) {
		return p.Provider.NewValue(name, fields)
	}
	out := make(map[string]any, len(fields))
	for k, v := range fields {
		native, err := celToNative(v)
		if err != nil {
			return types.NewErr("%s.%s: %v", name, k, err)
		}
		out[k] = native
	}
	return types.DefaultTypeAdapter.NativeToValue(out)
}

var anyValueType = reflect.TypeOf(&structpb.Value{})

// celToNative turns a CEL value into JSON-shaped Go (maps, lists, strings,
// numbers, bools, nil); integers stay int64.
func celToNative(v ref.Val) (any, error) {
	switch v := v.(type) {
	case types.Int:
		return int64(v), nil
	case types.Uint:
		return int64(v), nil
	case traits.Mapper:
		out := map[string]any{}
		it := v.Iterator()
		for it.HasNext() == types.True {
			k := it.Next()
			ks, ok := k.Value().(string)
			if !ok {
				return nil, errString("map keys must be strings")
			}
			n, err := celToNative(v.Get(k))
			if err != nil {
				return nil, err
			}
			out[ks] = n
		}
		return out, nil
	case traits.Lister:
		var out []any
		it := v.Iterator()
		for it.HasNext() == types.True {
			n, err := celToNative(it.Next())
			if err != nil {
				return nil, err
			}
			out = append(out, n)
		}
		return out, nil
	}
	pb, err := v.ConvertToNative(anyValueType)
	if err != nil {
		return nil, err
	}
	return pb.(*structpb.Value).AsInterface(), nil
}

type errString string

func (e errString) Error() string { return string(e) }
