package crdschema

import (
	"reflect"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"sync"
	"unicode/utf8"

	apiextensionshelpers "k8s.io/apiextensions-apiserver/pkg/apihelpers"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	utiljson "k8s.io/apimachinery/pkg/util/json"
	"k8s.io/kube-openapi/pkg/schemamutation"
	"k8s.io/kube-openapi/pkg/validation/spec"

	"github.com/devplane/devplane/apiserver/internal/jsonw"
)

// OpenAPISchemaV2JSON writes, straight from the CRD's v1 schema, the JSON
// that spec.Schema.MarshalJSON makes of OpenAPISchemaV2() once its local
// refs point under refPrefix (for /openapi/v2, "#/definitions/"), and
// returns the definitions it refers to. /openapi/v2 with hundreds of large
// CRDs spent most of its first request converting each schema to the
// internal form, to a structural schema, to a spec.Schema and marshalling
// that by reflection; this does none of it.
//
// It covers what structural schemas commonly hold. ok is false for
// anything else (allOf, oneOf, not, anyOf other than int-or-string's,
// nullable nodes and a preserve-unknown-fields root, which v2 rewrites,
// non-structural schemas, invalid UTF-8...): callers then use
// OpenAPISchemaV2, which handles everything.
func (v *Version) OpenAPISchemaV2JSON(refPrefix string) (data []byte, refs []string, ok bool) {
	return v.AppendOpenAPISchemaV2JSON(nil, refPrefix)
}

// AppendOpenAPISchemaV2JSON is OpenAPISchemaV2JSON appended to dst (on
// false, dst may hold part of it).
func (v *Version) AppendOpenAPISchemaV2JSON(dst []byte, refPrefix string) (data []byte, refs []string, ok bool) {
	return v.appendOpenAPISchemaJSON(dst, refPrefix, true)
}

// AppendOpenAPISchemaV3JSON is AppendOpenAPISchemaV2JSON for
// OpenAPISchema(), the kind's schema in /openapi/v3 (refPrefix
// "#/components/schemas/" there): nullable, int-or-string's anyOf and
// what preserve-unknown-fields nodes hold are kept, as kube keeps them.
// ok is false for allOf, oneOf, not, other anyOfs, non-structural
// schemas, invalid UTF-8...: callers then use OpenAPISchema.
func (v *Version) AppendOpenAPISchemaV3JSON(dst []byte, refPrefix string) (data []byte, refs []string, ok bool) {
	return v.appendOpenAPISchemaJSON(dst, refPrefix, false)
}

func (v *Version) appendOpenAPISchemaJSON(dst []byte, refPrefix string, v2 bool) (data []byte, refs []string, ok bool) {
	native, err := nativePropertiesJSON(v2, refPrefix)
	if err != nil {
		return dst, nil, false
	}
	validation, err := apiextensionshelpers.GetSchemaForVersion(v.crd, v.name)
	if err != nil {
		return dst, nil, false
	}
	w := &schemaWriter{native: native, v2: v2}
	w.Buf = dst
	if validation == nil || validation.OpenAPIV3Schema == nil {
		// No schema: a bare object, as OpenAPISchema publishes it.
		w.Buf = append(w.Buf, `{"type":"object"`...)
		w.kindExtensions(v)
		w.Buf = append(w.Buf, '}')
		return w.Buf, nil, true
	}
	w.version = v
	if !w.node(validation.OpenAPIV3Schema, rootLevel) {
		return w.Buf, nil, false
	}
	return w.Buf, native.refs, true
}

// nativeJSON is kubeNativeProperties (or kubeNativePropertiesV2) encoded,
// refs under one prefix.
type nativeJSON struct {
	root, embedded map[string][]byte
	refs           []string
}

type nativeJSONKey struct {
	v2        bool
	refPrefix string
}

var nativeJSONByKey sync.Map // nativeJSONKey -> *nativeJSON

func nativePropertiesJSON(v2 bool, refPrefix string) (*nativeJSON, error) {
	key := nativeJSONKey{v2, refPrefix}
	if n, ok := nativeJSONByKey.Load(key); ok {
		return n.(*nativeJSON), nil
	}
	properties, err := kubeNativePropertiesFor(v2)
	if err != nil {
		return nil, err
	}
	n := &nativeJSON{}
	encode := func(from map[string]spec.Schema) (map[string][]byte, error) {
		out := map[string][]byte{}
		for name, property := range from {
			walker := schemamutation.Walker{
				SchemaCallback: schemamutation.SchemaCallBackNoop,
				RefCallback: func(ref *spec.Ref) *spec.Ref {
					target, ok := strings.CutPrefix(ref.String(), v3RefPrefix)
					if !ok {
						return ref
					}
					if !slices.Contains(n.refs, target) {
						n.refs = append(n.refs, target)
					}
					r := spec.MustCreateRef(refPrefix + target)
					return &r
				},
			}
			data, err := walker.WalkSchema(&property).MarshalJSON()
			if err != nil {
				return nil, err
			}
			out[name] = data
		}
		return out, nil
	}
	if n.root, err = encode(properties.root); err != nil {
		return nil, err
	}
	if n.embedded, err = encode(properties.embedded); err != nil {
		return nil, err
	}
	actual, _ := nativeJSONByKey.LoadOrStore(key, n)
	return actual.(*nativeJSON), nil
}

// v3RefPrefix is where kube's builder points the native properties' refs.
const v3RefPrefix = "#/components/schemas/"

type level int

// The levels structural validation tells apart.
const (
	rootLevel level = iota
	itemLevel
	fieldLevel
)

// schemaWriter appends a schema's JSON in the member order and encoding of
// spec.Schema.MarshalJSON (go-json-experiment, deterministic): schema
// props in field order, then the swagger props, then extensions sorted.
type schemaWriter struct {
	jsonw.SchemaWriter
	native  *nativeJSON
	version *Version // set while writing the root
	v2      bool     // OpenAPISchemaV2's form, not OpenAPISchema's
}

var validTypes = map[string]bool{"": true, "string": true, "number": true, "integer": true, "boolean": true, "array": true, "object": true}

// intOrStringAnyOf is the anyOf Unfold gives x-kubernetes-int-or-string.
var intOrStringAnyOf = []apiextensionsv1.JSONSchemaProps{{Type: "integer"}, {Type: "string"}}

// structuralNode reports whether s passes, at this node, what the
// conversion, NewStructural, ValidateStructural and Unfold require for the
// schema to be published whole, within what node writes; false means
// "not known to": the caller falls back to OpenAPISchema.
func structuralNode(s *apiextensionsv1.JSONSchemaProps, lvl level) bool {
	if s.ID != "" || s.Schema != "" || s.Ref != nil || s.PatternProperties != nil || s.Dependencies != nil ||
		s.AdditionalItems != nil || s.Definitions != nil || s.AllOf != nil || s.OneOf != nil || s.Not != nil {
		return false
	}
	if !validTypes[s.Type] || (s.AnyOf != nil && !reflect.DeepEqual(s.AnyOf, intOrStringAnyOf)) {
		return false
	}
	if s.XPreserveUnknownFields != nil && !*s.XPreserveUnknownFields {
		return false
	}
	preserve := s.XPreserveUnknownFields != nil
	if s.XIntOrString && (preserve || s.XEmbeddedResource) {
		return false
	}
	if s.Items != nil && (s.Items.Schema == nil || s.Items.JSONSchemas != nil) {
		return false
	}
	if s.Type == "array" && s.Items == nil {
		return false
	}
	if s.AdditionalProperties != nil && (lvl == rootLevel || s.XEmbeddedResource) {
		return false
	}
	if s.XEmbeddedResource && (s.Type != "object" || (!preserve && len(s.Properties) == 0)) {
		return false
	}
	if s.Type == "" && !s.XIntOrString && !preserve {
		return false
	}
	if lvl == rootLevel && s.Type != "" && s.Type != "object" {
		return false
	}
	if lvl == rootLevel || s.XEmbeddedResource {
		for name, want := range map[string]string{"kind": "string", "apiVersion": "string", "metadata": "object"} {
			if property, ok := s.Properties[name]; ok && property.Type != want {
				return false
			}
		}
	}
	if metadata, ok := s.Properties["metadata"]; ok && lvl == rootLevel && !plainRootMetadata(metadata) {
		return false
	}
	if s.Pattern != "" && !validPattern(s.Pattern) {
		return false
	}
	return true
}

// plainRootMetadata: the root's metadata may name only name and
// generateName, with nothing else but its type and default.
func plainRootMetadata(m apiextensionsv1.JSONSchemaProps) bool {
	_, name := m.Properties["name"]
	_, generateName := m.Properties["generateName"]
	switch {
	case name && generateName && len(m.Properties) == 2, (name || generateName) && len(m.Properties) == 1:
		m.Properties = nil
	}
	m.Type, m.Default = "", nil
	return reflect.DeepEqual(m, apiextensionsv1.JSONSchemaProps{})
}

// patterns remembers whether patterns compile: CRDs of one provider
// repeat theirs. Bounded, as CRDs come and go.
var patterns struct {
	sync.Mutex
	valid map[string]bool
}

func validPattern(pattern string) bool {
	patterns.Lock()
	valid, ok := patterns.valid[pattern]
	patterns.Unlock()
	if ok {
		return valid
	}
	_, err := regexp.Compile(pattern)
	patterns.Lock()
	defer patterns.Unlock()
	if patterns.valid == nil || len(patterns.valid) >= 4096 {
		patterns.valid = map[string]bool{}
	}
	patterns.valid[pattern] = err == nil
	return err == nil
}

// node writes s; false when it is not known to be published whole.
func (w *schemaWriter) node(s *apiextensionsv1.JSONSchemaProps, lvl level) bool {
	if !structuralNode(s, lvl) {
		return false
	}
	if s.Nullable && w.v2 {
		// v2 takes it apart and changes its parent's required: left to
		// OpenAPISchemaV2.
		return false
	}
	// v2 keeps a preserve-unknown-fields node's items and properties from
	// kubectl, which would take them as all there is (and an object or
	// array type with them): still written, to be checked, then cut. At
	// the root that makes the kind a bare object: left to OpenAPISchemaV2.
	// v3 keeps it all.
	cutPreserved := s.XPreserveUnknownFields != nil && w.v2
	if cutPreserved && lvl == rootLevel {
		return false
	}
	typ := s.Type
	if cutPreserved && (typ == "object" || typ == "array") {
		typ = ""
	}
	w.Buf = append(w.Buf, '{')
	if s.Description != "" && !w.String("description", s.Description) {
		return false
	}
	if typ != "" {
		w.Key("type")
		w.Buf = strconv.AppendQuote(w.Buf, typ) // one of validTypes
	}
	if s.Nullable {
		w.Key("nullable")
		w.Buf = append(w.Buf, "true"...)
	}
	if s.Format != "" && !w.String("format", s.Format) {
		return false
	}
	if s.Title != "" && !w.String("title", s.Title) {
		return false
	}
	if s.Default != nil {
		if canonical(s.Default.Raw) {
			w.Key("default")
			w.Buf = append(w.Buf, s.Default.Raw...)
		} else {
			value, ok := decodeJSON(s.Default)
			if !ok {
				return false
			}
			if value != nil { // omitzero
				w.Key("default")
				if !w.Value(value) {
					return false
				}
			}
		}
	}
	if !w.Limits(s.Maximum, s.ExclusiveMaximum, s.Minimum, s.ExclusiveMinimum, s.MaxLength, s.MinLength, s.Pattern,
		s.MaxItems, s.MinItems, s.UniqueItems, s.MultipleOf) {
		return false
	}
	if len(s.Enum) > 0 {
		w.Key("enum")
		w.Buf = append(w.Buf, '[')
		for i := range s.Enum {
			if i > 0 {
				w.Buf = append(w.Buf, ',')
			}
			if canonical(s.Enum[i].Raw) {
				w.Buf = append(w.Buf, s.Enum[i].Raw...)
				continue
			}
			value, ok := decodeJSON(&s.Enum[i])
			if !ok || !w.Value(value) {
				return false
			}
		}
		w.Buf = append(w.Buf, ']')
	}
	w.Int("maxProperties", s.MaxProperties)
	w.Int("minProperties", s.MinProperties)
	embedded := s.XEmbeddedResource
	required := s.Required
	if embedded && !cutPreserved { // as addEmbeddedProperties, which v2 skips under preserve-unknown-fields
		required = slices.Clip(required)
		for _, name := range []string{"kind", "apiVersion"} {
			if !slices.Contains(required, name) {
				required = append(required, name)
			}
		}
	}
	if len(required) > 0 && !w.Strings("required", required) {
		return false
	}
	if s.Items != nil {
		mark := len(w.Buf)
		w.Key("items")
		if !w.node(s.Items.Schema, itemLevel) {
			return false
		}
		if cutPreserved {
			w.Buf = w.Buf[:mark]
		}
	}
	// Unfold gives int-or-string this anyOf (structuralNode let no other
	// through); v2 drops it.
	if !w.v2 && (s.XIntOrString || s.AnyOf != nil) {
		w.Key("anyOf")
		w.Buf = append(w.Buf, `[{"type":"integer"},{"type":"string"}]`...)
	}
	mark := len(w.Buf)
	if !w.properties(s, lvl, embedded) {
		return false
	}
	if cutPreserved {
		w.Buf = w.Buf[:mark]
	}
	if ap := s.AdditionalProperties; ap != nil && w.SchemaOrBool("additionalProperties", ap.Allows, ap.Schema != nil) &&
		!w.node(ap.Schema, fieldLevel) {
		return false
	}
	if docs := s.ExternalDocs; docs != nil && !w.ExternalDocs(docs.Description, docs.URL) {
		return false
	}
	if s.Example != nil {
		value, ok := decodeJSON(s.Example)
		if !ok || !w.Example(value) {
			return false
		}
	}
	return w.extensions(s, lvl)
}

// properties writes the properties member: the schema's own, with kube's
// apiVersion, kind and metadata at the root and in embedded resources. The
// replaced ones are still checked, as structural validation does.
func (w *schemaWriter) properties(s *apiextensionsv1.JSONSchemaProps, lvl level, embedded bool) bool {
	var native map[string][]byte
	switch {
	case embedded:
		native = w.native.embedded
	case lvl == rootLevel:
		native = w.native.root
	}
	if len(s.Properties) == 0 && native == nil {
		return true
	}
	names := make([]string, 0, len(s.Properties)+len(native))
	for name := range s.Properties {
		names = append(names, name)
	}
	for name := range native {
		if _, ok := s.Properties[name]; !ok {
			names = append(names, name)
		}
	}
	slices.Sort(names)
	// Map values are not addressable: each property is copied into one
	// variable, which stays on the stack (declared in the loop, with its
	// address taken, it moved to the heap: one allocation per property).
	var property apiextensionsv1.JSONSchemaProps
	w.Key("properties")
	w.Buf = append(w.Buf, '{')
	for _, name := range names {
		if !w.QuotedKey(name) {
			return false
		}
		var own bool
		if property, own = s.Properties[name]; own {
			mark := len(w.Buf)
			if !w.node(&property, fieldLevel) {
				return false
			}
			if _, replaced := native[name]; replaced {
				w.Buf = w.Buf[:mark]
			}
		}
		if data, ok := native[name]; ok {
			w.Buf = append(w.Buf, data...)
		}
	}
	w.Buf = append(w.Buf, '}')
	return true
}

// extensions writes the x-kubernetes-* members in sorted order and closes
// the object.
func (w *schemaWriter) extensions(s *apiextensionsv1.JSONSchemaProps, lvl level) bool {
	if s.XEmbeddedResource {
		w.Key("x-kubernetes-embedded-resource")
		w.Buf = append(w.Buf, "true"...)
	}
	var v *Version
	if lvl == rootLevel {
		v = w.version
		if !w.gvkExtension(v) {
			return false
		}
	}
	if s.XIntOrString {
		w.Key("x-kubernetes-int-or-string")
		w.Buf = append(w.Buf, "true"...)
	}
	if len(s.XListMapKeys) > 0 && !w.Strings("x-kubernetes-list-map-keys", s.XListMapKeys) {
		return false
	}
	if s.XListType != nil && !w.String("x-kubernetes-list-type", *s.XListType) {
		return false
	}
	if s.XMapType != nil && !w.String("x-kubernetes-map-type", *s.XMapType) {
		return false
	}
	if s.XPreserveUnknownFields != nil {
		w.Key("x-kubernetes-preserve-unknown-fields")
		w.Buf = append(w.Buf, "true"...)
	}
	if v != nil && !w.selectableFieldsExtension(v) {
		return false
	}
	if len(s.XValidations) > 0 && !w.validations(s.XValidations) {
		return false
	}
	w.Buf = append(w.Buf, '}')
	return true
}

// kindExtensions writes the root's extensions of a schema-less version.
func (w *schemaWriter) kindExtensions(v *Version) {
	w.gvkExtension(v)
	w.selectableFieldsExtension(v)
}

func (w *schemaWriter) gvkExtension(v *Version) bool {
	w.Key("x-kubernetes-group-version-kind")
	w.Buf = append(w.Buf, `[{`...)
	ok := w.String("group", v.GVK.Group) && w.String("kind", v.GVK.Kind) && w.String("version", v.GVK.Version)
	w.Buf = append(w.Buf, `}]`...)
	return ok
}

func (w *schemaWriter) selectableFieldsExtension(v *Version) bool {
	fields := v.selectableFields()
	if fields == nil {
		return true
	}
	w.Key("x-kubernetes-selectable-fields")
	w.Buf = append(w.Buf, '[')
	for i, field := range fields {
		if i > 0 {
			w.Buf = append(w.Buf, ',')
		}
		w.Buf = append(w.Buf, '{')
		if !w.String("fieldPath", field.(map[string]any)["fieldPath"].(string)) {
			return false
		}
		w.Buf = append(w.Buf, '}')
	}
	w.Buf = append(w.Buf, ']')
	return true
}

// validations writes apiextensionsv1.ValidationRules as go-json-experiment
// does: omitempty leaves out members that encode empty ("", null).
func (w *schemaWriter) validations(rules apiextensionsv1.ValidationRules) bool {
	w.Key("x-kubernetes-validations")
	w.Buf = append(w.Buf, '[')
	for i, rule := range rules {
		if i > 0 {
			w.Buf = append(w.Buf, ',')
		}
		w.Buf = append(w.Buf, `{"rule":`...)
		if !w.Quote(rule.Rule) {
			return false
		}
		ok := (rule.Message == "" || w.String("message", rule.Message)) &&
			(rule.MessageExpression == "" || w.String("messageExpression", rule.MessageExpression)) &&
			(rule.Reason == nil || *rule.Reason == "" || w.String("reason", string(*rule.Reason))) &&
			(rule.FieldPath == "" || w.String("fieldPath", rule.FieldPath))
		if !ok {
			return false
		}
		if rule.OptionalOldSelf != nil {
			w.Key("optionalOldSelf")
			w.Buf = strconv.AppendBool(w.Buf, *rule.OptionalOldSelf)
		}
		w.Buf = append(w.Buf, '}')
	}
	w.Buf = append(w.Buf, ']')
	return true
}

// canonical reports whether raw is a scalar that decoding and encoding
// again gives back unchanged: true, false, a string with nothing to escape,
// a small integer (not -0). Defaults and enums mostly are; decoding them
// was a fair part of the cost.
func canonical(raw []byte) bool {
	switch {
	case len(raw) == 0:
		return false
	case string(raw) == "true" || string(raw) == "false":
		return true
	case raw[0] == '"':
		if len(raw) < 2 || raw[len(raw)-1] != '"' {
			return false
		}
		for _, c := range raw[1 : len(raw)-1] {
			if c < 0x20 || c == '"' || c == '\\' || c >= utf8.RuneSelf {
				return false
			}
		}
		return true
	}
	digits := raw
	if digits[0] == '-' {
		digits = digits[1:]
	}
	if len(digits) == 0 || len(digits) > 18 || (digits[0] == '0' && len(raw) > 1) {
		return false // 0 alone only; -0 becomes 0
	}
	for _, c := range digits {
		if c < '0' || c > '9' {
			return false
		}
	}
	return true
}

// decodeJSON decodes a default, enum or example value as the conversion to
// the internal schema does (integers stay int64).
func decodeJSON(j *apiextensionsv1.JSON) (any, bool) {
	var value any
	if len(j.Raw) == 0 || string(j.Raw) == "null" {
		return nil, true
	}
	if err := utiljson.Unmarshal(j.Raw, &value); err != nil {
		return nil, false
	}
	return value, true
}
