package openapi

import (
	"encoding/json"
	"slices"
	"strconv"
)

// Encoding path items through spec.PathItem's MarshalJSON (reflection over
// a tree built for the purpose) was most of what a custom resource's
// fragment cost once its definitions came as JSON. The routes are a small,
// fixed vocabulary, so they are written here straight from route values,
// producing exactly the bytes v2Paths + MarshalJSON would. Whatever this
// writer is not sure to render identically (a string needing escapes, a
// definition name that is not plain, a path shared by several routes...)
// it refuses, and the caller falls back to the spec types; the tests
// compare both on every path item of the documents they build.

// appendV2PathItem appends rt's path item as MarshalJSON writes it, or
// reports false, leaving out in an unspecified state past its length.
func appendV2PathItem(out []byte, rt route) ([]byte, bool) {
	return appendPathItem(out, rt, appendV2Operation, appendV2Parameters)
}

// pathItemMethods are the operation members of a path item (v2's
// PathItemProps, v3's PathProps) in field order; options, head and trace
// never occur.
var pathItemMethods = [...]string{"get", "put", "post", "delete", "patch"}

// appendPathItem writes rt's path item with the form's operation and
// parameter writers: the operations in field order, then the parameters.
func appendPathItem(out []byte, rt route,
	appendOperation func(out []byte, op *operation) ([]byte, bool),
	appendParameters func(out []byte, parameters []parameter, comma bool) ([]byte, bool)) ([]byte, bool) {
	var byMethod [len(pathItemMethods)]*operation
	for i := range rt.operations {
		op := &rt.operations[i]
		slot := slices.Index(pathItemMethods[:], op.method)
		if slot < 0 {
			return out, false // setOperation drops it; not worth mirroring
		}
		if byMethod[slot] != nil {
			return out, false // the last would win
		}
		byMethod[slot] = op
	}
	out = append(out, '{')
	first := true
	for i, op := range byMethod {
		if op == nil {
			continue
		}
		if !first {
			out = append(out, ',')
		}
		first = false
		out = append(out, '"')
		out = append(out, pathItemMethods[i]...)
		out = append(out, `":`...)
		var ok bool
		if out, ok = appendOperation(out, op); !ok {
			return out, false
		}
	}
	if len(rt.parameters) > 0 {
		if !first {
			out = append(out, ',')
		}
		out = append(out, `"parameters":[`...)
		var ok bool
		if out, ok = appendParameters(out, rt.parameters, false); !ok {
			return out, false
		}
		out = append(out, ']')
	}
	return append(out, '}'), true
}

// appendV2Operation writes v2Operation(*op): OperationProps' fields in
// order (summary, externalDocs, deprecated and security are never set),
// then the extensions, sorted.
func appendV2Operation(out []byte, op *operation) ([]byte, bool) {
	ok := true
	out = append(out, '{')
	comma := false
	member := func(name string) {
		if comma {
			out = append(out, ',')
		}
		comma = true
		out = append(out, '"')
		out = append(out, name...)
		out = append(out, `":`...)
	}
	if op.description != "" {
		member("description")
		out, ok = appendPlainString(out, op.description)
	}
	consumes := op.consumes
	if consumes == nil {
		consumes = []string{mediaAnyForUpload}
	}
	for _, list := range []struct {
		name   string
		values []string
	}{{"consumes", consumes}, {"produces", op.produces}, {"schemes", []string{"https"}}, {"tags", []string{op.tag}}} {
		if len(list.values) == 0 || !ok {
			continue
		}
		member(list.name)
		out, ok = appendPlainStrings(out, list.values)
	}
	if op.id != "" && ok {
		member("operationId")
		out, ok = appendPlainString(out, op.id)
	}
	if (op.body != "" || len(op.parameters) > 0) && ok {
		member("parameters")
		out = append(out, '[')
		if op.body != "" {
			out = append(out, `{"name":"body","in":"body","required":true,"schema":`...)
			if out, ok = appendRef(out, v2RefPrefix, op.body); !ok {
				return out, false
			}
			out = append(out, '}')
		}
		if out, ok = appendV2Parameters(out, op.parameters, op.body != ""); !ok {
			return out, false
		}
		out = append(out, ']')
	}
	if !ok {
		return out, false
	}
	member("responses")
	out, ok = appendResponses(out, op, func(out []byte, definition string) ([]byte, bool) {
		out = append(out, `"schema":`...)
		return appendRef(out, v2RefPrefix, definition)
	})
	if !ok {
		return out, false
	}
	return appendOperationExtensions(out, op)
}

// appendResponses writes an operation's responses, the same in v2 and v3
// but for how a response's definition is given (writeDefinition). They
// are a map keyed by the code as a string, sorted: for three-digit codes
// given in increasing order, the order given.
func appendResponses(out []byte, op *operation, writeDefinition func(out []byte, definition string) ([]byte, bool)) ([]byte, bool) {
	out = append(out, '{')
	for i, resp := range op.responses {
		if resp.code < 100 || resp.code > 999 || i > 0 && resp.code <= op.responses[i-1].code {
			return out, false
		}
		if i > 0 {
			out = append(out, ',')
		}
		out = append(out, '"')
		out = strconv.AppendInt(out, int64(resp.code), 10)
		out = append(out, `":{`...)
		var ok bool
		if resp.description != "" {
			out = append(out, `"description":`...)
			if out, ok = appendPlainString(out, resp.description); !ok {
				return out, false
			}
		}
		if resp.definition != "" {
			if resp.description != "" {
				out = append(out, ',')
			}
			if out, ok = writeDefinition(out, resp.definition); !ok {
				return out, false
			}
		}
		out = append(out, '}')
	}
	return append(out, '}'), true
}

// appendOperationExtensions writes an operation's extensions, sorted,
// after its other members (responses at least), and closes it: the same
// in v2 and v3.
func appendOperationExtensions(out []byte, op *operation) ([]byte, bool) {
	out = append(out, `,"`+extensionAction+`":`...)
	var ok bool
	if out, ok = appendPlainString(out, op.action); !ok {
		return out, false
	}
	out = append(out, `,"`+extensionGroupVersionKind+`":`...)
	for i, field := range [...]struct{ name, value string }{{"group", op.kind.group}, {"kind", op.kind.kind}, {"version", op.kind.version}} {
		out = append(out, [...]string{`{"`, `,"`, `,"`}[i]...)
		out = append(out, field.name...)
		out = append(out, `":`...)
		if out, ok = appendPlainString(out, field.value); !ok {
			return out, false
		}
	}
	return append(out, `}}`...), true
}

// appendV2Parameters writes v2Parameters(parameters): CommonValidations
// (uniqueItems), SimpleSchema (type), then ParamProps' fields.
func appendV2Parameters(out []byte, parameters []parameter, comma bool) ([]byte, bool) {
	ok := true
	for _, p := range parameters {
		if comma {
			out = append(out, ',')
		}
		comma = true
		out = append(out, `{"uniqueItems":true`...)
		for _, field := range [...]struct{ name, value string }{{"type", p.typeName}, {"description", p.description}, {"name", p.name}, {"in", p.in}} {
			if field.value == "" {
				continue
			}
			out = append(out, `,"`...)
			out = append(out, field.name...)
			out = append(out, `":`...)
			if out, ok = appendPlainString(out, field.value); !ok {
				return out, false
			}
		}
		if p.required {
			out = append(out, `,"required":true`...)
		}
		out = append(out, '}')
	}
	return out, true
}

// appendRef writes {"$ref":...} for a definition whose name needs
// neither JSON pointer nor URL escaping: v2Ref's or v3Ref's reference,
// whose String() is then the text it was made from.
func appendRef(out []byte, refPrefix, definition string) ([]byte, bool) {
	for i := 0; i < len(definition); i++ {
		c := definition[i]
		if !('a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' || '0' <= c && c <= '9' || c == '.' || c == '-' || c == '_') {
			return out, false
		}
	}
	out = append(out, `{"$ref":"`...)
	out = append(out, refPrefix...)
	out = append(out, definition...)
	return append(out, `"}`...), true
}

func appendPlainStrings(out []byte, values []string) ([]byte, bool) {
	out = append(out, '[')
	for i, value := range values {
		if i > 0 {
			out = append(out, ',')
		}
		var ok bool
		if out, ok = appendPlainString(out, value); !ok {
			return out, false
		}
	}
	return append(out, ']'), true
}

// appendPlainString quotes s when no encoder would escape any of its
// bytes: printable ASCII other than quote, backslash and the characters
// encoding/json escapes for HTML.
func appendPlainString(out []byte, s string) ([]byte, bool) {
	if !isPlain(s) {
		return out, false
	}
	out = append(out, '"')
	out = append(out, s...)
	return append(out, '"'), true
}

func isPlain(s string) bool {
	for i := 0; i < len(s); i++ {
		switch c := s[i]; {
		case c < 0x20 || c >= 0x7f, c == '"', c == '\\', c == '<', c == '>', c == '&':
			return false
		}
	}
	return true
}

// appendJSONString writes s as encoding/json does (member names are
// written that way).
func appendJSONString(out []byte, s string) ([]byte, error) {
	if isPlain(s) {
		out = append(out, '"')
		out = append(out, s...)
		return append(out, '"'), nil
	}
	quoted, err := json.Marshal(s)
	return append(out, quoted...), err
}
