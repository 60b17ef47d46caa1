package openapi

import (
	"math"
	"reflect"
	"slices"
	"strconv"
	"unicode/utf8"

	"k8s.io/kube-openapi/pkg/validation/spec"

	"github.com/devplane/devplane/apiserver/internal/jsonw"
)

// The ~600 generated definitions (and the supplied ones not given as
// JSON) were encoded with spec.Schema.MarshalJSON: go-json-experiment by
// reflection, a map of extensions built per node and more; on a first
// /openapi/v2 that was over ten megabytes of garbage, each fresh page a
// fault. appendSchemaJSON writes the same bytes straight from the
// spec.Schema for what schemas commonly hold; a node holding anything
// else (patternProperties, definitions, extra props, values of unusual
// types, strings it is not sure to escape alike...) is marshalled by
// MarshalJSON, the rest of the tree still written here. The tests compare
// it with MarshalJSON on every generated definition.

// appendSchemaJSON appends s.MarshalJSON()'s bytes.
func appendSchemaJSON(out []byte, s *spec.Schema) ([]byte, error) {
	w := schemaJSON{Appender: jsonw.Appender{Buf: out}, fallback: true}
	w.schema(s)
	return w.Buf, w.err
}

// schemaJSON writes schemas in the member order and encoding of
// spec.Schema.MarshalJSONTo (go-json-experiment, deterministic): the
// SchemaProps in field order, then the SwaggerSchemaProps, $schema, $ref,
// and the extensions last, sorted.
type schemaJSON struct {
	jsonw.Appender
	fallback bool // nodes not written here go through MarshalJSON; else node fails
	err      error
}

// schema writes s, through MarshalJSON when node cannot; false when
// neither could (no fallback, or MarshalJSON's error in err).
func (w *schemaJSON) schema(s *spec.Schema) bool {
	start := len(w.Buf)
	if w.node(s) {
		return true
	}
	w.Buf = w.Buf[:start]
	if !w.fallback || w.err != nil {
		return false
	}
	data, err := s.MarshalJSON()
	if err != nil {
		w.err = err
		return false
	}
	w.Buf = append(w.Buf, data...)
	return true
}

// node writes s; false (with w.Buf in an unspecified state past where it
// started) when something in s is not written here, or a child failed.
func (w *schemaJSON) node(s *spec.Schema) bool {
	if len(s.PatternProperties) > 0 || len(s.Dependencies) > 0 || s.AdditionalItems != nil ||
		len(s.Definitions) > 0 || len(s.ExtraProps) > 0 {
		return false
	}
	w.Buf = append(w.Buf, '{')
	if s.ID != "" && !w.stringMember("id", s.ID) {
		return false
	}
	if s.Description != "" && !w.stringMember("description", s.Description) {
		return false
	}
	if s.Type != nil {
		// StringOrArray has only a legacy MarshalJSON (encoding/json):
		// written here when that and go-json-experiment agree.
		w.Key("type")
		switch len(s.Type) {
		case 0:
			return false
		case 1:
			if !w.plain(s.Type[0]) {
				return false
			}
		default:
			w.Buf = append(w.Buf, '[')
			for i, t := range s.Type {
				if i > 0 {
					w.Buf = append(w.Buf, ',')
				}
				if !w.plain(t) {
					return false
				}
			}
			w.Buf = append(w.Buf, ']')
		}
	}
	w.Bool("nullable", s.Nullable)
	if s.Format != "" && !w.stringMember("format", s.Format) {
		return false
	}
	if s.Title != "" && !w.stringMember("title", s.Title) {
		return false
	}
	if s.Default != nil { // omitzero
		w.Key("default")
		if !w.value(s.Default) {
			return false
		}
	}
	if !w.float("maximum", s.Maximum) {
		return false
	}
	w.Bool("exclusiveMaximum", s.ExclusiveMaximum)
	if !w.float("minimum", s.Minimum) {
		return false
	}
	w.Bool("exclusiveMinimum", s.ExclusiveMinimum)
	w.Int("maxLength", s.MaxLength)
	w.Int("minLength", s.MinLength)
	if s.Pattern != "" && !w.stringMember("pattern", s.Pattern) {
		return false
	}
	w.Int("maxItems", s.MaxItems)
	w.Int("minItems", s.MinItems)
	w.Bool("uniqueItems", s.UniqueItems)
	if !w.float("multipleOf", s.MultipleOf) {
		return false
	}
	if len(s.Enum) > 0 { // omitempty
		w.Key("enum")
		if !w.value(s.Enum) {
			return false
		}
	}
	w.Int("maxProperties", s.MaxProperties)
	w.Int("minProperties", s.MinProperties)
	if len(s.Required) > 0 && !w.strings("required", s.Required) {
		return false
	}
	if items := s.Items; items != nil { // omitzero
		w.Key("items")
		switch {
		case items.Schemas != nil:
			if !w.schemas(items.Schemas) {
				return false
			}
		case items.Schema != nil:
			if !w.schema(items.Schema) {
				return false
			}
		default:
			w.Buf = append(w.Buf, "null"...)
		}
	}
	for _, list := range [...]struct {
		name    string
		schemas []spec.Schema
	}{{"allOf", s.AllOf}, {"oneOf", s.OneOf}, {"anyOf", s.AnyOf}} {
		if len(list.schemas) > 0 { // omitempty
			w.Key(list.name)
			if !w.schemas(list.schemas) {
				return false
			}
		}
	}
	if s.Not != nil {
		w.Key("not")
		if !w.schema(s.Not) {
			return false
		}
	}
	if len(s.Properties) > 0 && !w.properties(s.Properties) {
		return false
	}
	if ap := s.AdditionalProperties; ap != nil {
		w.Key("additionalProperties")
		switch {
		case ap.Schema != nil:
			if !w.schema(ap.Schema) {
				return false
			}
		case ap.Allows:
			w.Buf = append(w.Buf, "true"...)
		default:
			w.Buf = append(w.Buf, "false"...)
		}
	}
	if s.Discriminator != "" && !w.stringMember("discriminator", s.Discriminator) {
		return false
	}
	w.Bool("readOnly", s.ReadOnly)
	if docs := s.ExternalDocs; docs != nil {
		w.Key("externalDocs")
		w.Buf = append(w.Buf, '{')
		if docs.Description != "" && !w.stringMember("description", docs.Description) {
			return false
		}
		if docs.URL != "" && !w.stringMember("url", docs.URL) {
			return false
		}
		w.Buf = append(w.Buf, '}')
	}
	if s.Example != nil {
		// omitempty: left out when it encodes as null, "", {} or [].
		mark := len(w.Buf)
		w.Key("example")
		valueStart := len(w.Buf)
		if !w.value(s.Example) {
			return false
		}
		switch string(w.Buf[valueStart:]) {
		case "null", `""`, "{}", "[]":
			w.Buf = w.Buf[:mark]
		}
	}
	if s.Schema != "" && !w.stringMember("$schema", string(s.Schema)) {
		return false
	}
	if ref := s.Ref.String(); ref != "" && !w.stringMember("$ref", ref) {
		return false
	}
	if !w.extensions(s.Extensions) {
		return false
	}
	w.Buf = append(w.Buf, '}')
	return true
}

func (w *schemaJSON) schemas(schemas []spec.Schema) bool {
	w.Buf = append(w.Buf, '[')
	for i := range schemas {
		if i > 0 {
			w.Buf = append(w.Buf, ',')
		}
		if !w.schema(&schemas[i]) {
			return false
		}
	}
	w.Buf = append(w.Buf, ']')
	return true
}

// properties writes the properties member, sorted by name (byte order, as
// go-json-experiment sorts them).
func (w *schemaJSON) properties(properties map[string]spec.Schema) bool {
	var stack [64]string
	names := stack[:0]
	for name := range properties {
		names = append(names, name)
	}
	slices.Sort(names)
	w.Key("properties")
	w.Buf = append(w.Buf, '{')
	// Map values are not addressable: each is copied into one variable.
	var property spec.Schema
	for i, name := range names {
		if i > 0 {
			w.Buf = append(w.Buf, ',')
		}
		if !w.quote(name) {
			return false
		}
		w.Buf = append(w.Buf, ':')
		property = properties[name]
		if !w.schema(&property) {
			return false
		}
	}
	w.Buf = append(w.Buf, '}')
	return true
}

// extensions writes the members whose keys are extension keys (x-*, X-*),
// sorted; MarshalJSONTo leaves out the others.
func (w *schemaJSON) extensions(extensions spec.Extensions) bool {
	if len(extensions) == 0 {
		return true
	}
	var stack [16]string
	keys := stack[:0]
	for key := range extensions {
		if len(key) > 1 && (key[0] == 'x' || key[0] == 'X') && key[1] == '-' {
			keys = append(keys, key)
		}
	}
	slices.Sort(keys)
	for _, key := range keys {
		if w.Buf[len(w.Buf)-1] != '{' {
			w.Buf = append(w.Buf, ',')
		}
		if !w.quote(key) {
			return false
		}
		w.Buf = append(w.Buf, ':')
		if !w.value(extensions[key]) {
			return false
		}
	}
	return true
}

// value writes a JSON value of the types decoded JSON and the generated
// extensions hold; false for any other (left to MarshalJSON).
func (w *schemaJSON) value(value any) bool {
	switch value := value.(type) {
	case nil:
		w.Buf = append(w.Buf, "null"...)
	case bool:
		w.Buf = strconv.AppendBool(w.Buf, value)
	case string:
		return w.quote(value)
	case int:
		w.Buf = strconv.AppendInt(w.Buf, int64(value), 10)
	case int32:
		w.Buf = strconv.AppendInt(w.Buf, int64(value), 10)
	case int64:
		w.Buf = strconv.AppendInt(w.Buf, value, 10)
	case float64:
		if !finite(value) {
			return false
		}
		w.Buf = jsonw.AppendFloat(w.Buf, value)
	case []any:
		if value == nil {
			return false
		}
		w.Buf = append(w.Buf, '[')
		for i, item := range value {
			if i > 0 {
				w.Buf = append(w.Buf, ',')
			}
			if !w.value(item) {
				return false
			}
		}
		w.Buf = append(w.Buf, ']')
	case []string:
		if value == nil {
			return false
		}
		w.Buf = append(w.Buf, '[')
		for i, item := range value {
			if i > 0 {
				w.Buf = append(w.Buf, ',')
			}
			if !w.quote(item) {
				return false
			}
		}
		w.Buf = append(w.Buf, ']')
	case map[string]any:
		if value == nil {
			return false
		}
		var stack [8]string
		keys := stack[:0]
		for key := range value {
			keys = append(keys, key)
		}
		slices.Sort(keys)
		w.Buf = append(w.Buf, '{')
		for i, key := range keys {
			if i > 0 {
				w.Buf = append(w.Buf, ',')
			}
			if !w.quote(key) {
				return false
			}
			w.Buf = append(w.Buf, ':')
			if !w.value(value[key]) {
				return false
			}
		}
		w.Buf = append(w.Buf, '}')
	default:
		return w.namedScalar(value)
	}
	return true
}

// namedScalar writes a value of a named string, bool or integer type
// without methods (generated v3 defaults are typed constants), as
// go-json-experiment writes its underlying type.
func (w *schemaJSON) namedScalar(value any) bool {
	v := reflect.ValueOf(value)
	if v.Type().NumMethod() > 0 || reflect.PointerTo(v.Type()).NumMethod() > 0 {
		return false // a MarshalJSON or MarshalText of its own
	}
	switch v.Kind() {
	case reflect.String:
		return w.quote(v.String())
	case reflect.Bool:
		w.Buf = strconv.AppendBool(w.Buf, v.Bool())
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64:
		w.Buf = strconv.AppendInt(w.Buf, v.Int(), 10)
	default:
		return false
	}
	return true
}

func (w *schemaJSON) stringMember(name, value string) bool {
	w.Key(name)
	return w.quote(value)
}

func (w *schemaJSON) strings(name string, values []string) bool {
	w.Key(name)
	w.Buf = append(w.Buf, '[')
	for i, value := range values {
		if i > 0 {
			w.Buf = append(w.Buf, ',')
		}
		if !w.quote(value) {
			return false
		}
	}
	w.Buf = append(w.Buf, ']')
	return true
}

func (w *schemaJSON) float(name string, value *float64) bool {
	if value == nil {
		return true
	}
	if !finite(*value) {
		return false
	}
	w.Key(name)
	w.Buf = jsonw.AppendFloat(w.Buf, *value)
	return true
}

// plain writes a string encoding/json and go-json-experiment both leave
// unescaped.
func (w *schemaJSON) plain(s string) bool {
	var ok bool
	w.Buf, ok = appendPlainString(w.Buf, s)
	return ok
}

// quote writes s as go-json-experiment does by default: '"', '\\' and
// control characters escaped, not <, > or &. What this is less sure of
// (invalid UTF-8, U+2028 and U+2029, DEL, control characters without a
// short escape) is left to MarshalJSON.
func (w *schemaJSON) quote(s string) bool {
	w.Buf = append(w.Buf, '"')
	start := 0
	for i := 0; i < len(s); {
		c := s[i]
		if c >= utf8.RuneSelf {
			r, size := utf8.DecodeRuneInString(s[i:])
			if r == utf8.RuneError || r == '\u2028' || r == '\u2029' {
				return false
			}
			i += size
			continue
		}
		if c >= 0x20 && c != '"' && c != '\\' && c != 0x7f {
			i++
			continue
		}
		w.Buf = append(w.Buf, s[start:i]...)
		switch c {
		case '"', '\\':
			w.Buf = append(w.Buf, '\\', c)
		case '\n':
			w.Buf = append(w.Buf, `\n`...)
		case '\r':
			w.Buf = append(w.Buf, `\r`...)
		case '\t':
			w.Buf = append(w.Buf, `\t`...)
		default:
			return false
		}
		i++
		start = i
	}
	w.Buf = append(w.Buf, s[start:]...)
	w.Buf = append(w.Buf, '"')
	return true
}

// finite: neither NaN nor an infinity (errors for go-json-experiment), nor
// -0 (not worth checking how it writes that).
func finite(f float64) bool {
	return !math.IsNaN(f) && !math.IsInf(f, 0) && !(f == 0 && math.Signbit(f))
}
