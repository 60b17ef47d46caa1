package patch

import (
	"slices"
	"strings"
	"sync"
	"sync/atomic"

	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/util/managedfields"
	"k8s.io/kube-openapi/pkg/validation/spec"
	smdschema "sigs.k8s.io/structured-merge-diff/v6/schema"
	"sigs.k8s.io/structured-merge-diff/v6/typed"
	"sigs.k8s.io/structured-merge-diff/v6/value"

	"github.com/devplane/devplane/apiserver/crdschema"
	"github.com/devplane/devplane/apiserver/openapi"
)

// builtinTypeConverter knows every built-in kind. Built from all ~600
// generated definitions, it is slow to build and large to keep (see
// BenchmarkBuiltinTypeConverter), so field managers do not use it: they use
// BuiltinKindTypeConverter.
var builtinTypeConverter = sync.OnceValues(newBuiltinTypeConverter)

func newBuiltinTypeConverter() (managedfields.TypeConverter, error) {
	return managedfields.NewTypeConverter(openapi.Definitions(), false)
}

// BuiltinTypeConverter returns the shared TypeConverter of every built-in
// kind, building it on the first call. Prefer BuiltinKindTypeConverter when
// only some kinds are typed.
func BuiltinTypeConverter() (managedfields.TypeConverter, error) {
	return builtinTypeConverter()
}

var kindTypeConverters sync.Map // schema.GroupVersionKind → func() (managedfields.TypeConverter, error)

// BuiltinKindTypeConverter returns the TypeConverter of one built-in kind,
// built on its first use from only the definitions the kind's schema
// reaches (a ConfigMap needs a handful, not Pod's), and kept for the
// process. It types objects exactly as BuiltinTypeConverter does, objects
// of other kinds included (they go to their own kind's converter).
func BuiltinKindTypeConverter(gvk schema.GroupVersionKind) (managedfields.TypeConverter, error) {
	name, ok := openapi.KindDefinitionName(gvk)
	if !ok {
		// Not cached per GVK: apply bodies may name any kind, and kinds
		// without a definition are typed by none of them.
		return noKindsTypeConverter()
	}
	build, ok := kindTypeConverters.Load(gvk)
	if !ok {
		build, _ = kindTypeConverters.LoadOrStore(gvk, sync.OnceValues(func() (managedfields.TypeConverter, error) {
			return newKindTypeConverter(gvk, name)
		}))
	}
	return build.(func() (managedfields.TypeConverter, error))()
}

func newKindTypeConverter(gvk schema.GroupVersionKind, definition string) (managedfields.TypeConverter, error) {
	own, err := managedfields.NewTypeConverter(openapi.DefinitionsReachableFrom(definition), false)
	if err != nil {
		return nil, err
	}
	return &kindTypeConverter{gvk: gvk, own: own}, nil
}

// noKindsTypeConverter answers, for every kind, the "no corresponding type"
// error the converter of all kinds gives for kinds it does not know.
var noKindsTypeConverter = sync.OnceValues(func() (managedfields.TypeConverter, error) {
	return managedfields.NewTypeConverter(nil, false)
})

// kindTypeConverter types objects of its kind with types built from that
// kind's definitions. An object of another kind, such as an apply body
// naming a different kind of the same group version, goes to that kind's
// converter, as the converter of every kind would type it.
type kindTypeConverter struct {
	gvk schema.GroupVersionKind
	own managedfields.TypeConverter
	// kind is the kind's schema and type, learned from the first object
	// own types, for typing objects without validation.
	kind atomic.Pointer[kindType]
}

type kindType struct {
	schema  *smdschema.Schema
	typeRef smdschema.TypeRef
}

func (c *kindTypeConverter) ObjectToTyped(obj runtime.Object, opts ...typed.ValidationOptions) (*typed.TypedValue, error) {
	if gvk := obj.GetObjectKind().GroupVersionKind(); gvk != c.gvk {
		other, err := BuiltinKindTypeConverter(gvk)
		if err != nil {
			return nil, err
		}
		return other.ObjectToTyped(obj, opts...)
	}
	if _, isUnstructured := obj.(runtime.Unstructured); !isUnstructured && slices.Contains(opts, typed.AllowDuplicates) {
		// A Go object of the kind has exactly the fields of the kind's
		// definitions, and duplicates are allowed: validating it (a walk
		// of the whole object, a third of a field manager's update) can
		// find nothing. Apply bodies, which may not have duplicates, and
		// unstructured objects are validated.
		if kind := c.kind.Load(); kind != nil {
			v, err := value.NewValueReflect(obj)
			if err != nil {
				return nil, err
			}
			return typed.AsTypedUnvalidated(v, kind.schema, kind.typeRef), nil
		}
	}
	tv, err := c.own.ObjectToTyped(obj, opts...)
	if err == nil && c.kind.Load() == nil {
		c.kind.Store(&kindType{schema: tv.Schema(), typeRef: tv.TypeRef()})
	}
	return tv, err
}

func (c *kindTypeConverter) TypedToObject(value *typed.TypedValue) (runtime.Object, error) {
	return c.own.TypedToObject(value)
}

// CustomResourceTypeConverter types a custom resource version's objects for server-side apply from its
// schema plus the built-in definitions it refers to (ObjectMeta); nil (every
// field atomic, deduced from the objects) when that fails.
func CustomResourceTypeConverter(v *crdschema.Version) managedfields.TypeConverter {
	s, err := v.OpenAPISchema()
	if err != nil || s == nil {
		return nil
	}
	// Only the built-in definitions the schema refers to (ObjectMeta and
	// what it reaches), not all of them: they stay in the converter.
	var refs []string
	var walk func(sc *spec.Schema)
	walk = func(sc *spec.Schema) {
		if sc == nil {
			return
		}
		if str := sc.Ref.String(); str != "" {
			refs = append(refs, str[strings.LastIndex(str, "/")+1:])
		}
		for _, p := range sc.Properties {
			walk(&p)
		}
		for _, a := range sc.AllOf {
			walk(&a)
		}
		if sc.Items != nil {
			walk(sc.Items.Schema)
		}
		if sc.AdditionalProperties != nil {
			walk(sc.AdditionalProperties.Schema)
		}
	}
	walk(s)
	defs := openapi.DefinitionsReachableFrom(refs...)
	defs[v.ModelName()] = s
	tc, err := managedfields.NewTypeConverter(defs, v.PreserveUnknownFields)
	if err != nil {
		return nil
	}
	return tc
}
