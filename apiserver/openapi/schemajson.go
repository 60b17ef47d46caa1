package openapi

import (
	"slices"

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
// types, invalid UTF-8...) is marshalled by
// MarshalJSON, the rest of the tree still written here. The tests compare
// it with MarshalJSON on every generated definition.

// appendSchemaJSON appends s.MarshalJSON()'s bytes.
func appendSchemaJSON(out []byte, s *spec.Schema) ([]byte, error) {
	w := schemaJSON{fallback: true}
	w.Buf = out
	w.schema(s)
	return w.Buf, w.err
}

// schemaJSON writes schemas in the member order and encoding of
// spec.Schema.MarshalJSONTo (go-json-experiment, deterministic): the
// SchemaProps in field order, then the SwaggerSchemaProps, $schema, $ref,
// and the extensions last, sorted.
type schemaJSON struct {
	jsonw.SchemaWriter
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
	if s.ID != "" && !w.String("id", s.ID) {
		return false
	}
	if s.Description != "" && !w.String("description", s.Description) {
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
	if s.Format != "" && !w.String("format", s.Format) {
		return false
	}
	if s.Title != "" && !w.String("title", s.Title) {
		return false
	}
	if s.Default != nil { // omitzero
		w.Key("default")
		if !w.Value(s.Default) {
			return false
		}
	}
	if !w.Limits(s.Maximum, s.ExclusiveMaximum, s.Minimum, s.ExclusiveMinimum, s.MaxLength, s.MinLength, s.Pattern,
		s.MaxItems, s.MinItems, s.UniqueItems, s.MultipleOf) {
		return false
	}
	if len(s.Enum) > 0 { // omitempty
		w.Key("enum")
		if !w.Value(s.Enum) {
			return false
		}
	}
	w.Int("maxProperties", s.MaxProperties)
	w.Int("minProperties", s.MinProperties)
	if len(s.Required) > 0 && !w.Strings("required", s.Required) {
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
	if ap := s.AdditionalProperties; ap != nil && w.SchemaOrBool("additionalProperties", ap.Allows, ap.Schema != nil) &&
		!w.schema(ap.Schema) {
		return false
	}
	if s.Discriminator != "" && !w.String("discriminator", s.Discriminator) {
		return false
	}
	w.Bool("readOnly", s.ReadOnly)
	if docs := s.ExternalDocs; docs != nil && !w.ExternalDocs(docs.Description, docs.URL) {
		return false
	}
	if s.Example != nil && !w.Example(s.Example) {
		return false
	}
	if s.Schema != "" && !w.String("$schema", string(s.Schema)) {
		return false
	}
	if ref := s.Ref.String(); ref != "" && !w.String("$ref", ref) {
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
	for _, name := range names {
		if !w.QuotedKey(name) {
			return false
		}
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
		if !w.QuotedKey(key) || !w.Value(extensions[key]) {
			return false
		}
	}
	return true
}

// plain writes a string encoding/json and go-json-experiment both leave
// unescaped.
func (w *schemaJSON) plain(s string) bool {
	var ok bool
	w.Buf, ok = appendPlainString(w.Buf, s)
	return ok
}
