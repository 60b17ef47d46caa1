package crdschema

import (
	"encoding/binary"
	"math"
	"slices"
	"unsafe"

	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
)

// CompactSchemas makes the versions of a decoded CRD share their identical
// schema subtrees: the same property maps and sub-schemas, once. Generated
// CRDs repeat themselves a lot (every version carries the same schema,
// initProvider mirrors forProvider, selector and reference shapes recur),
// and a decoded schema costs some ten times its JSON, so the watch cache
// holds a third of the nodes it would otherwise. The CRD must be treated
// as read-only afterwards, as every cached object is: a change through one
// path would show through every path sharing it.
func CompactSchemas(crd *apiextensionsv1.CustomResourceDefinition) {
	in := interner{ids: map[string]int{}, maps: map[int]map[string]apiextensionsv1.JSONSchemaProps{}, nodes: map[int]*apiextensionsv1.JSONSchemaProps{},
		nodeIDs: map[*apiextensionsv1.JSONSchemaProps]int{}, mapIDs: map[unsafe.Pointer]int{}}
	for i := range crd.Spec.Versions {
		if v := crd.Spec.Versions[i].Schema; v != nil && v.OpenAPIV3Schema != nil {
			v.OpenAPIV3Schema, _ = in.pointer(v.OpenAPIV3Schema)
		}
	}
}

// interner gives every distinct schema content an id (from a key spelling
// out every field, with children as their ids: exact, no hashing) and keeps
// the first map or node seen with each id, for later equal ones to share.
type interner struct {
	ids   map[string]int
	maps  map[int]map[string]apiextensionsv1.JSONSchemaProps
	nodes map[int]*apiextensionsv1.JSONSchemaProps
	// nodeIDs and mapIDs remember the nodes and maps already interned:
	// the decoder shares equal subtrees already (DecodeCRDJSON), and each
	// is walked once.
	nodeIDs map[*apiextensionsv1.JSONSchemaProps]int
	mapIDs  map[unsafe.Pointer]int
	// scratch holds a key buffer per depth of node: a node's children
	// are done with theirs before it writes its own.
	scratch [][]byte
	depth   int
}

func (in *interner) id(key []byte) int {
	if id, ok := in.ids[string(key)]; ok {
		return id
	}
	id := len(in.ids) + 1
	in.ids[string(key)] = id
	return id
}

// pointer interns s's content and returns the shared node for it and its
// id (0 for nil).
func (in *interner) pointer(s *apiextensionsv1.JSONSchemaProps) (*apiextensionsv1.JSONSchemaProps, int) {
	if s == nil {
		return nil, 0
	}
	if id, ok := in.nodeIDs[s]; ok {
		return in.nodes[id], id
	}
	id := in.node(s)
	in.nodeIDs[s] = id
	if shared, ok := in.nodes[id]; ok {
		return shared, id
	}
	in.nodes[id] = s
	return s, id
}

// schemaMap interns every value of m and returns the shared map equal to
// it with its id (0 for nil; empty and nil differ).
func (in *interner) schemaMap(m map[string]apiextensionsv1.JSONSchemaProps) (map[string]apiextensionsv1.JSONSchemaProps, int) {
	if m == nil {
		return nil, 0
	}
	identity := *(*unsafe.Pointer)(unsafe.Pointer(&m))
	if id, ok := in.mapIDs[identity]; ok {
		return in.maps[id], id
	}
	names := make([]string, 0, len(m))
	for name := range m {
		names = append(names, name)
	}
	slices.Sort(names)
	ids := make([]int, len(names))
	for i, name := range names {
		value := m[name]
		ids[i] = in.node(&value)
		m[name] = value
	}
	key := append(in.buffer(), "map"...)
	for i, name := range names {
		key = appendString(key, name)
		key = binary.AppendUvarint(key, uint64(ids[i]))
	}
	id := in.id(key)
	in.mapIDs[identity] = id
	if shared, ok := in.maps[id]; ok {
		return shared, id
	}
	in.maps[id] = m
	return m, id
}

// buffer is the scratch key buffer of the current depth, empty.
func (in *interner) buffer() []byte {
	for len(in.scratch) <= in.depth {
		in.scratch = append(in.scratch, make([]byte, 0, 256))
	}
	return in.scratch[in.depth][:0]
}

func (in *interner) slice(s []apiextensionsv1.JSONSchemaProps, key []byte) []byte {
	if s == nil {
		return append(key, 0)
	}
	key = binary.AppendUvarint(append(key, 1), uint64(len(s)))
	for i := range s {
		key = binary.AppendUvarint(key, uint64(in.node(&s[i])))
	}
	return key
}

func (in *interner) orBool(p **apiextensionsv1.JSONSchemaPropsOrBool, key []byte) []byte {
	if *p == nil {
		return append(key, 0)
	}
	var id int
	(*p).Schema, id = in.pointer((*p).Schema)
	return binary.AppendUvarint(append(key, 1, flag((*p).Allows)), uint64(id))
}

// node interns s's children in place and returns the id of its content.
// Every field of JSONSchemaProps is in the key (TestCompactSchemasKeysEveryField
// fails when the type gains one this does not know).
func (in *interner) node(s *apiextensionsv1.JSONSchemaProps) int {
	var props, patterns, definitions, not int
	s.Properties, props = in.schemaMap(s.Properties)
	s.PatternProperties, patterns = in.schemaMap(s.PatternProperties)
	var defs map[string]apiextensionsv1.JSONSchemaProps
	defs, definitions = in.schemaMap(s.Definitions)
	s.Definitions = defs
	s.Not, not = in.pointer(s.Not)

	key := in.buffer()
	in.depth++ // children met while writing the key use the next buffer
	defer func() { in.depth-- }()
	key = appendString(key, s.ID)
	key = appendString(key, string(s.Schema))
	key = appendStringPtr(key, s.Ref)
	key = appendString(key, s.Description)
	key = appendString(key, s.Type)
	key = appendString(key, s.Format)
	key = appendString(key, s.Title)
	key = appendJSON(key, s.Default)
	key = appendFloatPtr(key, s.Maximum)
	key = append(key, flag(s.ExclusiveMaximum))
	key = appendFloatPtr(key, s.Minimum)
	key = append(key, flag(s.ExclusiveMinimum))
	key = appendIntPtr(key, s.MaxLength)
	key = appendIntPtr(key, s.MinLength)
	key = appendString(key, s.Pattern)
	key = appendIntPtr(key, s.MaxItems)
	key = appendIntPtr(key, s.MinItems)
	key = append(key, flag(s.UniqueItems))
	key = appendFloatPtr(key, s.MultipleOf)
	if s.Enum == nil {
		key = append(key, 0)
	} else {
		key = binary.AppendUvarint(append(key, 1), uint64(len(s.Enum)))
		for i := range s.Enum {
			key = appendJSON(key, &s.Enum[i])
		}
	}
	key = appendIntPtr(key, s.MaxProperties)
	key = appendIntPtr(key, s.MinProperties)
	key = appendStrings(key, s.Required)
	if s.Items == nil {
		key = append(key, 0)
	} else {
		var items int
		s.Items.Schema, items = in.pointer(s.Items.Schema)
		key = binary.AppendUvarint(append(key, 1), uint64(items))
		key = in.slice(s.Items.JSONSchemas, key)
	}
	key = in.slice(s.AllOf, key)
	key = in.slice(s.OneOf, key)
	key = in.slice(s.AnyOf, key)
	key = binary.AppendUvarint(key, uint64(not))
	key = binary.AppendUvarint(key, uint64(props))
	key = in.orBool(&s.AdditionalProperties, key)
	key = binary.AppendUvarint(key, uint64(patterns))
	if s.Dependencies == nil {
		key = append(key, 0)
	} else {
		names := make([]string, 0, len(s.Dependencies))
		for name := range s.Dependencies {
			names = append(names, name)
		}
		slices.Sort(names)
		key = binary.AppendUvarint(append(key, 1), uint64(len(names)))
		for _, name := range names {
			dep := s.Dependencies[name]
			var id int
			dep.Schema, id = in.pointer(dep.Schema)
			s.Dependencies[name] = dep
			key = appendString(key, name)
			key = binary.AppendUvarint(key, uint64(id))
			key = appendStrings(key, dep.Property)
		}
	}
	key = in.orBool(&s.AdditionalItems, key)
	key = binary.AppendUvarint(key, uint64(definitions))
	if s.ExternalDocs == nil {
		key = append(key, 0)
	} else {
		key = appendString(append(key, 1), s.ExternalDocs.Description)
		key = appendString(key, s.ExternalDocs.URL)
	}
	key = appendJSON(key, s.Example)
	key = append(key, flag(s.Nullable))
	key = appendBoolPtr(key, s.XPreserveUnknownFields)
	key = append(key, flag(s.XEmbeddedResource), flag(s.XIntOrString))
	key = appendStrings(key, s.XListMapKeys)
	key = appendStringPtr(key, s.XListType)
	key = appendStringPtr(key, s.XMapType)
	if s.XValidations == nil {
		key = append(key, 0)
	} else {
		key = binary.AppendUvarint(append(key, 1), uint64(len(s.XValidations)))
		for _, rule := range s.XValidations {
			key = appendString(key, rule.Rule)
			key = appendString(key, rule.Message)
			key = appendString(key, rule.MessageExpression)
			if rule.Reason == nil {
				key = append(key, 0)
			} else {
				key = appendString(append(key, 1), string(*rule.Reason))
			}
			key = appendString(key, rule.FieldPath)
			key = appendBoolPtr(key, rule.OptionalOldSelf)
		}
	}
	in.scratch[in.depth-1] = key // keeps what it grew to
	return in.id(key)
}

func flag(b bool) byte {
	if b {
		return 1
	}
	return 0
}

// The appenders are length-prefixed, with a presence byte for pointers and
// slices, so no two different contents spell the same key.

func appendString(key []byte, s string) []byte {
	return append(binary.AppendUvarint(key, uint64(len(s))), s...)
}

func appendBytes(key, b []byte) []byte {
	return append(binary.AppendUvarint(key, uint64(len(b))), b...)
}

func appendStringPtr(key []byte, s *string) []byte {
	if s == nil {
		return append(key, 0)
	}
	return appendString(append(key, 1), *s)
}

func appendStrings(key []byte, s []string) []byte {
	if s == nil {
		return append(key, 0)
	}
	key = binary.AppendUvarint(append(key, 1), uint64(len(s)))
	for _, v := range s {
		key = appendString(key, v)
	}
	return key
}

func appendJSON(key []byte, j *apiextensionsv1.JSON) []byte {
	if j == nil {
		return append(key, 0)
	}
	if j.Raw == nil {
		return append(key, 1)
	}
	return appendBytes(append(key, 2), j.Raw)
}

func appendFloatPtr(key []byte, f *float64) []byte {
	if f == nil {
		return append(key, 0)
	}
	return binary.LittleEndian.AppendUint64(append(key, 1), math.Float64bits(*f))
}

func appendIntPtr(key []byte, i *int64) []byte {
	if i == nil {
		return append(key, 0)
	}
	return binary.AppendVarint(append(key, 1), *i)
}

func appendBoolPtr(key []byte, b *bool) []byte {
	if b == nil {
		return append(key, 0)
	}
	return append(key, 1, flag(*b))
}

// CopySharingSchemas is DeepCopy but for the versions' OpenAPI schemas,
// which the copy shares with crd. A cached CRD's schemas are read-only
// (CompactSchemas, the decoder's sharing), and what the server does with a
// copy (status and finalizer writes, metadata, managed fields, a patch,
// which decodes a new object) never changes a schema in place; a deep copy
// of them was most of what a CRD's status write allocated.
func CopySharingSchemas(crd *apiextensionsv1.CustomResourceDefinition) *apiextensionsv1.CustomResourceDefinition {
	out := &apiextensionsv1.CustomResourceDefinition{TypeMeta: crd.TypeMeta}
	crd.ObjectMeta.DeepCopyInto(&out.ObjectMeta)
	crd.Status.DeepCopyInto(&out.Status)
	out.Spec = specSharingSchemas(&crd.Spec)
	return out
}

// specSharingSchemas is a deep copy of spec but for the versions' schemas.
func specSharingSchemas(in *apiextensionsv1.CustomResourceDefinitionSpec) apiextensionsv1.CustomResourceDefinitionSpec {
	var out apiextensionsv1.CustomResourceDefinitionSpec
	spec := *in
	spec.Versions = nil
	spec.DeepCopyInto(&out)
	if in.Versions != nil {
		out.Versions = make([]apiextensionsv1.CustomResourceDefinitionVersion, len(in.Versions))
		for i := range in.Versions {
			v := in.Versions[i]
			schema := v.Schema
			v.Schema = nil
			v.DeepCopyInto(&out.Versions[i])
			if schema != nil {
				out.Versions[i].Schema = &apiextensionsv1.CustomResourceValidation{OpenAPIV3Schema: schema.OpenAPIV3Schema}
			}
		}
	}
	return out
}
