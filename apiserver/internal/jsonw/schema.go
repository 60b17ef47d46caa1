package jsonw

import (
	"math"
	"reflect"
	"slices"
	"strconv"
	"unicode/utf8"
)

// SchemaWriter writes the members of OpenAPI schemas as
// spec.Schema.MarshalJSON does (go-json-experiment, deterministic). The
// writers of CRD schemas and of OpenAPI definitions embed it and keep only
// what their input types make different. A method returning false met
// something it does not write alike: the caller falls back to MarshalJSON,
// w.Buf then holding part of the node.
type SchemaWriter struct{ Appender }

// String writes a string member.
func (w *SchemaWriter) String(name, value string) bool {
	w.Key(name)
	return w.Quote(value)
}

// QuotedKey starts a member whose name may need escaping: a comma unless
// it is the first, then the quoted name.
func (w *SchemaWriter) QuotedKey(name string) bool {
	if w.Buf[len(w.Buf)-1] != '{' {
		w.Buf = append(w.Buf, ',')
	}
	if !w.Quote(name) {
		return false
	}
	w.Buf = append(w.Buf, ':')
	return true
}

// Strings writes a member holding a list of strings.
func (w *SchemaWriter) Strings(name string, values []string) bool {
	w.Key(name)
	return w.quotedList(values)
}

func (w *SchemaWriter) quotedList(values []string) bool { return list(w, values, w.Quote) }

// list writes items as an array, each by write.
func list[T any](w *SchemaWriter, items []T, write func(T) bool) bool {
	w.Buf = append(w.Buf, '[')
	for i, item := range items {
		if i > 0 {
			w.Buf = append(w.Buf, ',')
		}
		if !write(item) {
			return false
		}
	}
	w.Buf = append(w.Buf, ']')
	return true
}

// Float writes a number member; nil is omitted.
func (w *SchemaWriter) Float(name string, value *float64) bool {
	if value == nil {
		return true
	}
	if !finite(*value) {
		return false
	}
	w.Key(name)
	w.Buf = AppendFloat(w.Buf, *value)
	return true
}

// Limits writes the members from maximum to multipleOf, in the order
// spec.SchemaProps declares them; the CRD types and spec.Schema give them
// the same Go types.
func (w *SchemaWriter) Limits(maximum *float64, exclusiveMaximum bool, minimum *float64, exclusiveMinimum bool,
	maxLength, minLength *int64, pattern string, maxItems, minItems *int64, uniqueItems bool, multipleOf *float64) bool {
	if !w.Float("maximum", maximum) {
		return false
	}
	w.Bool("exclusiveMaximum", exclusiveMaximum)
	if !w.Float("minimum", minimum) {
		return false
	}
	w.Bool("exclusiveMinimum", exclusiveMinimum)
	w.Int("maxLength", maxLength)
	w.Int("minLength", minLength)
	if pattern != "" && !w.String("pattern", pattern) {
		return false
	}
	w.Int("maxItems", maxItems)
	w.Int("minItems", minItems)
	w.Bool("uniqueItems", uniqueItems)
	return w.Float("multipleOf", multipleOf)
}

// SchemaOrBool starts a member that is a schema or a boolean
// (additionalProperties): with no schema it writes allows and returns
// false; true means the caller writes the schema next.
func (w *SchemaWriter) SchemaOrBool(name string, allows, hasSchema bool) (schemaNext bool) {
	w.Key(name)
	if !hasSchema {
		w.Buf = strconv.AppendBool(w.Buf, allows)
	}
	return hasSchema
}

// ExternalDocs writes the externalDocs member.
func (w *SchemaWriter) ExternalDocs(description, url string) bool {
	w.Key("externalDocs")
	w.Buf = append(w.Buf, '{')
	if description != "" && !w.String("description", description) {
		return false
	}
	if url != "" && !w.String("url", url) {
		return false
	}
	w.Buf = append(w.Buf, '}')
	return true
}

// Example writes the example member, left out (omitempty) when it encodes
// as null, "", {} or [].
func (w *SchemaWriter) Example(value any) bool {
	mark := len(w.Buf)
	w.Key("example")
	valueStart := len(w.Buf)
	if !w.Value(value) {
		return false
	}
	switch string(w.Buf[valueStart:]) {
	case "null", `""`, "{}", "[]":
		w.Buf = w.Buf[:mark]
	}
	return true
}

// Value writes a JSON value of the types decoded JSON and generated
// definitions hold, maps with their keys sorted; false for any other.
func (w *SchemaWriter) Value(value any) bool {
	switch value := value.(type) {
	case nil:
		w.Buf = append(w.Buf, "null"...)
	case bool:
		w.Buf = strconv.AppendBool(w.Buf, value)
	case string:
		return w.Quote(value)
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
		w.Buf = AppendFloat(w.Buf, value)
	case []any:
		return value != nil && list(w, value, w.Value)
	case []string:
		return value != nil && w.quotedList(value)
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
		for _, key := range keys {
			if !w.QuotedKey(key) || !w.Value(value[key]) {
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
func (w *SchemaWriter) namedScalar(value any) bool {
	v := reflect.ValueOf(value)
	if v.Type().NumMethod() > 0 || reflect.PointerTo(v.Type()).NumMethod() > 0 {
		return false // a MarshalJSON or MarshalText of its own
	}
	switch v.Kind() {
	case reflect.String:
		return w.Quote(v.String())
	case reflect.Bool:
		w.Buf = strconv.AppendBool(w.Buf, v.Bool())
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64:
		w.Buf = strconv.AppendInt(w.Buf, v.Int(), 10)
	default:
		return false
	}
	return true
}

// Quote writes s as go-json-experiment does by default: only '"', '\\'
// and control characters escaped (not <, >, &, DEL or U+2028/9); invalid
// UTF-8 fails (there it is an error).
func (w *SchemaWriter) Quote(s string) bool {
	w.Buf = append(w.Buf, '"')
	start := 0
	for i := 0; i < len(s); {
		c := s[i]
		if c >= utf8.RuneSelf {
			r, size := utf8.DecodeRuneInString(s[i:])
			if r == utf8.RuneError && size == 1 {
				return false
			}
			i += size
			continue
		}
		if c >= 0x20 && c != '"' && c != '\\' {
			i++
			continue
		}
		w.Buf = append(w.Buf, s[start:i]...)
		w.Buf = AppendEscaped(w.Buf, c)
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
