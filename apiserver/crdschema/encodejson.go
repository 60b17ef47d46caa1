package crdschema

import (
	"bytes"
	"encoding/json"
	"maps"
	"math"
	"slices"
	"strconv"
	"unicode/utf8"

	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"

	"github.com/devplane/devplane/apiserver/internal/jsonw"
)

// AppendCRDJSON appends the JSON that encoding/json writes of crd (as the
// storage and JSON serializers do, HTML-escaped), with kind and apiVersion
// set to apiextensions.k8s.io/v1's, byte for byte. encoding/json re-scans
// what each nested MarshalJSON returns (items, additionalProperties,
// defaults): a deep 50 KB schema was compacted once per level, and
// encoding a provider CRD took milliseconds of a create or status update.
// Small parts without schemas (metadata, status, subresources...) still go
// through encoding/json; ok is false when something cannot be written
// (a NaN bound, invalid raw JSON), and callers then use the serializer,
// which reports the error.
func AppendCRDJSON(dst []byte, crd *apiextensionsv1.CustomResourceDefinition) (out []byte, ok bool) {
	w := jsonWriter{Appender: jsonw.Appender{Buf: dst}, ok: true}
	w.raw(`{"kind":"CustomResourceDefinition","apiVersion":"apiextensions.k8s.io/v1","metadata":`)
	w.marshal(&crd.ObjectMeta)
	w.raw(`,"spec":`)
	w.spec(&crd.Spec)
	w.raw(`,"status":`)
	w.marshal(&crd.Status)
	w.Buf = append(w.Buf, '}')
	return w.Buf, w.ok
}

// jsonWriter appends JSON; ok turns false at the first thing it cannot
// write as encoding/json would.
type jsonWriter struct {
	jsonw.Appender
	ok bool
	// scratch is reused to compact raw values with whitespace or HTML.
	scratch bytes.Buffer
}

func (w *jsonWriter) raw(s string) { w.Buf = append(w.Buf, s...) }

// marshal writes v with encoding/json, for the parts without schemas.
func (w *jsonWriter) marshal(v any) {
	data, err := json.Marshal(v)
	if err != nil {
		w.ok = false
		return
	}
	w.Buf = append(w.Buf, data...)
}

func (w *jsonWriter) spec(s *apiextensionsv1.CustomResourceDefinitionSpec) {
	w.raw(`{"group":`)
	w.quote(s.Group)
	w.raw(`,"names":`)
	w.marshal(&s.Names)
	w.raw(`,"scope":`)
	w.quote(string(s.Scope))
	w.raw(`,"versions":`)
	if s.Versions == nil {
		w.raw("null")
	} else {
		w.Buf = append(w.Buf, '[')
		for i := range s.Versions {
			if i > 0 {
				w.Buf = append(w.Buf, ',')
			}
			w.version(&s.Versions[i])
		}
		w.Buf = append(w.Buf, ']')
	}
	if s.Conversion != nil {
		w.raw(`,"conversion":`)
		w.marshal(s.Conversion)
	}
	if s.PreserveUnknownFields {
		w.raw(`,"preserveUnknownFields":true`)
	}
	w.Buf = append(w.Buf, '}')
}

func (w *jsonWriter) version(v *apiextensionsv1.CustomResourceDefinitionVersion) {
	w.raw(`{"name":`)
	w.quote(v.Name)
	w.raw(`,"served":`)
	w.Buf = strconv.AppendBool(w.Buf, v.Served)
	w.raw(`,"storage":`)
	w.Buf = strconv.AppendBool(w.Buf, v.Storage)
	if v.Deprecated {
		w.raw(`,"deprecated":true`)
	}
	if v.DeprecationWarning != nil {
		w.raw(`,"deprecationWarning":`)
		w.quote(*v.DeprecationWarning)
	}
	if v.Schema != nil {
		w.raw(`,"schema":{`)
		if v.Schema.OpenAPIV3Schema != nil {
			w.raw(`"openAPIV3Schema":`)
			w.schema(v.Schema.OpenAPIV3Schema)
		}
		w.Buf = append(w.Buf, '}')
	}
	if v.Subresources != nil {
		w.raw(`,"subresources":`)
		w.marshal(v.Subresources)
	}
	if len(v.AdditionalPrinterColumns) > 0 {
		w.raw(`,"additionalPrinterColumns":`)
		w.marshal(v.AdditionalPrinterColumns)
	}
	if len(v.SelectableFields) > 0 {
		w.raw(`,"selectableFields":`)
		w.marshal(v.SelectableFields)
	}
	w.Buf = append(w.Buf, '}')
}

// schema writes one JSONSchemaProps: its members in field order, each
// omitted when empty, as the struct tags say.
func (w *jsonWriter) schema(s *apiextensionsv1.JSONSchemaProps) {
	if !w.ok {
		return
	}
	w.Buf = append(w.Buf, '{')
	w.str("id", s.ID)
	w.str("$schema", string(s.Schema))
	if s.Ref != nil {
		w.Key("$ref")
		w.quote(*s.Ref)
	}
	w.str("description", s.Description)
	w.str("type", s.Type)
	w.str("format", s.Format)
	w.str("title", s.Title)
	if s.Default != nil {
		w.Key("default")
		w.rawJSON(s.Default)
	}
	w.float("maximum", s.Maximum)
	w.Bool("exclusiveMaximum", s.ExclusiveMaximum)
	w.float("minimum", s.Minimum)
	w.Bool("exclusiveMinimum", s.ExclusiveMinimum)
	w.Int("maxLength", s.MaxLength)
	w.Int("minLength", s.MinLength)
	w.str("pattern", s.Pattern)
	w.Int("maxItems", s.MaxItems)
	w.Int("minItems", s.MinItems)
	w.Bool("uniqueItems", s.UniqueItems)
	w.float("multipleOf", s.MultipleOf)
	if len(s.Enum) > 0 {
		w.Key("enum")
		w.Buf = append(w.Buf, '[')
		for i := range s.Enum {
			if i > 0 {
				w.Buf = append(w.Buf, ',')
			}
			w.rawJSON(&s.Enum[i])
		}
		w.Buf = append(w.Buf, ']')
	}
	w.Int("maxProperties", s.MaxProperties)
	w.Int("minProperties", s.MinProperties)
	w.strs("required", s.Required)
	if s.Items != nil {
		w.Key("items")
		// JSONSchemaPropsOrArray.MarshalJSON: the array when it has
		// schemas, else the schema (null when none).
		if len(s.Items.JSONSchemas) > 0 {
			w.schemas(s.Items.JSONSchemas)
		} else {
			w.schemaOrNull(s.Items.Schema)
		}
	}
	w.schemaList("allOf", s.AllOf)
	w.schemaList("oneOf", s.OneOf)
	w.schemaList("anyOf", s.AnyOf)
	if s.Not != nil {
		w.Key("not")
		w.schema(s.Not)
	}
	w.schemaMap("properties", s.Properties)
	w.schemaOrBool("additionalProperties", s.AdditionalProperties)
	w.schemaMap("patternProperties", s.PatternProperties)
	if len(s.Dependencies) > 0 {
		w.Key("dependencies")
		w.Buf = append(w.Buf, '{')
		for i, name := range slices.Sorted(maps.Keys(s.Dependencies)) {
			if i > 0 {
				w.Buf = append(w.Buf, ',')
			}
			w.quote(name)
			w.Buf = append(w.Buf, ':')
			// JSONSchemaPropsOrStringArray.MarshalJSON.
			switch dep := s.Dependencies[name]; {
			case len(dep.Property) > 0:
				w.stringArray(dep.Property)
			default:
				w.schemaOrNull(dep.Schema)
			}
		}
		w.Buf = append(w.Buf, '}')
	}
	w.schemaOrBool("additionalItems", s.AdditionalItems)
	w.schemaMap("definitions", s.Definitions)
	if s.ExternalDocs != nil {
		w.Key("externalDocs")
		w.marshal(s.ExternalDocs)
	}
	if s.Example != nil {
		w.Key("example")
		w.rawJSON(s.Example)
	}
	w.Bool("nullable", s.Nullable)
	if s.XPreserveUnknownFields != nil {
		w.Key("x-kubernetes-preserve-unknown-fields")
		w.Buf = strconv.AppendBool(w.Buf, *s.XPreserveUnknownFields)
	}
	w.Bool("x-kubernetes-embedded-resource", s.XEmbeddedResource)
	w.Bool("x-kubernetes-int-or-string", s.XIntOrString)
	w.strs("x-kubernetes-list-map-keys", s.XListMapKeys)
	if s.XListType != nil {
		w.Key("x-kubernetes-list-type")
		w.quote(*s.XListType)
	}
	if s.XMapType != nil {
		w.Key("x-kubernetes-map-type")
		w.quote(*s.XMapType)
	}
	if len(s.XValidations) > 0 {
		w.Key("x-kubernetes-validations")
		w.marshal(s.XValidations)
	}
	w.Buf = append(w.Buf, '}')
}

func (w *jsonWriter) schemaOrNull(s *apiextensionsv1.JSONSchemaProps) {
	if s == nil {
		w.raw("null")
		return
	}
	w.schema(s)
}

// schemaOrBool is JSONSchemaPropsOrBool.MarshalJSON, omitted when nil.
func (w *jsonWriter) schemaOrBool(name string, s *apiextensionsv1.JSONSchemaPropsOrBool) {
	if s == nil {
		return
	}
	w.Key(name)
	switch {
	case s.Schema != nil:
		w.schema(s.Schema)
	case s.Allows:
		w.raw("true")
	default:
		w.raw("false")
	}
}

func (w *jsonWriter) schemas(list []apiextensionsv1.JSONSchemaProps) {
	w.Buf = append(w.Buf, '[')
	for i := range list {
		if i > 0 {
			w.Buf = append(w.Buf, ',')
		}
		w.schema(&list[i])
	}
	w.Buf = append(w.Buf, ']')
}

func (w *jsonWriter) schemaList(name string, list []apiextensionsv1.JSONSchemaProps) {
	if len(list) > 0 {
		w.Key(name)
		w.schemas(list)
	}
}

// schemaMap writes a map of schemas with sorted keys, as encoding/json does.
func (w *jsonWriter) schemaMap(name string, m map[string]apiextensionsv1.JSONSchemaProps) {
	if len(m) == 0 {
		return
	}
	w.Key(name)
	w.Buf = append(w.Buf, '{')
	for i, k := range slices.Sorted(maps.Keys(m)) {
		if i > 0 {
			w.Buf = append(w.Buf, ',')
		}
		w.quote(k)
		w.Buf = append(w.Buf, ':')
		v := m[k]
		w.schema(&v)
	}
	w.Buf = append(w.Buf, '}')
}

func (w *jsonWriter) str(name, value string) {
	if value != "" {
		w.Key(name)
		w.quote(value)
	}
}

func (w *jsonWriter) strs(name string, values []string) {
	if len(values) > 0 {
		w.Key(name)
		w.stringArray(values)
	}
}

func (w *jsonWriter) stringArray(values []string) {
	w.Buf = append(w.Buf, '[')
	for i, v := range values {
		if i > 0 {
			w.Buf = append(w.Buf, ',')
		}
		w.quote(v)
	}
	w.Buf = append(w.Buf, ']')
}

// float writes as encoding/json does; NaN and infinities are its errors.
func (w *jsonWriter) float(name string, value *float64) {
	if value == nil {
		return
	}
	if math.IsNaN(*value) || math.IsInf(*value, 0) {
		w.ok = false
		return
	}
	w.Key(name)
	w.Buf = jsonw.AppendFloat(w.Buf, *value)
}

// rawJSON is JSON.MarshalJSON (null when empty) as encoding/json embeds
// it: validated, compacted and HTML-escaped.
func (w *jsonWriter) rawJSON(j *apiextensionsv1.JSON) {
	raw := j.Raw
	if len(raw) == 0 {
		w.raw("null")
		return
	}
	if !needsCompacting(raw) {
		if !json.Valid(raw) {
			w.ok = false
			return
		}
		w.Buf = append(w.Buf, raw...)
		return
	}
	w.scratch.Reset()
	if err := json.Compact(&w.scratch, raw); err != nil {
		w.ok = false
		return
	}
	out := bytes.NewBuffer(w.Buf) // appends to what is written so far
	json.HTMLEscape(out, w.scratch.Bytes())
	w.Buf = out.Bytes()
}

// needsCompacting: raw holds whitespace, <, >, & or a byte that may start
// U+2028/9, which encoding/json removes or escapes.
func needsCompacting(raw []byte) bool {
	for _, c := range raw {
		switch c {
		case ' ', '\t', '\n', '\r', '<', '>', '&', 0xE2:
			return true
		}
	}
	return false
}

const hexDigits = "0123456789abcdef"

// quote writes s as encoding/json does with HTML escaping on: '"', '\\',
// control characters, <, > and &, U+2028 and U+2029 escaped, invalid
// UTF-8 replaced by U+FFFD.
func (w *jsonWriter) quote(s string) {
	w.Buf = append(w.Buf, '"')
	start := 0
	for i := 0; i < len(s); {
		c := s[i]
		if c < utf8.RuneSelf {
			if c >= 0x20 && c != '"' && c != '\\' && c != '<' && c != '>' && c != '&' {
				i++
				continue
			}
			w.Buf = append(w.Buf, s[start:i]...)
			w.Buf = jsonw.AppendEscaped(w.Buf, c)
			i++
			start = i
			continue
		}
		r, size := utf8.DecodeRuneInString(s[i:])
		switch {
		case r == utf8.RuneError && size == 1:
			w.Buf = append(w.Buf, s[start:i]...)
			w.Buf = append(w.Buf, `\ufffd`...)
		case r == '\u2028' || r == '\u2029':
			w.Buf = append(w.Buf, s[start:i]...)
			w.Buf = append(w.Buf, '\\', 'u', '2', '0', '2', hexDigits[r&0xF])
		default:
			i += size
			continue
		}
		i += size
		start = i
	}
	w.Buf = append(w.Buf, s[start:]...)
	w.Buf = append(w.Buf, '"')
}
