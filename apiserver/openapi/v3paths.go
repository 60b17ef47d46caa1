package openapi

import (
	"slices"
)

// The v3 path items are written from routes as the v2 ones are (see
// v2paths.go): exactly the bytes json.Marshal makes of v3Paths' spec3.Path,
// or false for whatever the writer is not sure to render identically.

// appendV3PathItem appends rt's path item as json.Marshal writes
// v3Paths' spec3.Path, or reports false, leaving out in an unspecified
// state past its length.
func appendV3PathItem(out []byte, rt route) ([]byte, bool) {
	return appendPathItem(out, rt, appendV3Operation, appendV3Parameters)
}

// appendV3Operation writes v3Operation(*op): OperationProps' fields in
// order (summary, externalDocs, deprecated, security and servers are
// never set), then the extensions, sorted.
func appendV3Operation(out []byte, op *operation) ([]byte, bool) {
	out = append(out, `{"tags":`...)
	out, ok := appendPlainStrings(out, []string{op.tag})
	if op.description != "" && ok {
		out = append(out, `,"description":`...)
		out, ok = appendPlainString(out, op.description)
	}
	if op.id != "" && ok {
		out = append(out, `,"operationId":`...)
		out, ok = appendPlainString(out, op.id)
	}
	if len(op.parameters) > 0 && ok {
		out = append(out, `,"parameters":[`...)
		out, ok = appendV3Parameters(out, op.parameters, false)
		out = append(out, ']')
	}
	if op.body != "" && ok {
		if len(op.consumes) == 0 {
			return out, false // an empty content, omitted
		}
		out = append(out, `,"requestBody":{"content":`...)
		out, ok = appendV3Content(out, op.consumes, op.body)
		out = append(out, `,"required":true}`...)
	}
	if !ok {
		return out, false
	}
	out = append(out, `,"responses":`...)
	out, ok = appendResponses(out, op, func(out []byte, definition string) ([]byte, bool) {
		if len(op.produces) == 0 {
			return out, false // an empty content, omitted
		}
		out = append(out, `"content":`...)
		return appendV3Content(out, op.produces, definition)
	})
	if !ok {
		return out, false
	}
	return appendOperationExtensions(out, op)
}

// appendV3Content writes a content map giving each media type the
// definition's schema: sorted, each once.
func appendV3Content(out []byte, mediaTypes []string, definition string) ([]byte, bool) {
	sorted := mediaTypes
	if !slices.IsSorted(sorted) {
		sorted = slices.Sorted(slices.Values(mediaTypes))
	}
	out = append(out, '{')
	for i, mediaType := range sorted {
		if i > 0 && mediaType == sorted[i-1] {
			continue
		}
		if i > 0 {
			out = append(out, ',')
		}
		var ok bool
		if out, ok = appendPlainString(out, mediaType); !ok {
			return out, false
		}
		out = append(out, `:{"schema":`...)
		if out, ok = appendRef(out, v3RefPrefix, definition); !ok {
			return out, false
		}
		out = append(out, '}')
	}
	return append(out, '}'), true
}

// appendV3Parameters writes v3Parameters(parameters): ParameterProps'
// fields in order, the schema's type before its uniqueItems.
func appendV3Parameters(out []byte, parameters []parameter, comma bool) ([]byte, bool) {
	ok := true
	for _, p := range parameters {
		if p.typeName == "" {
			return out, false // a type of one empty string
		}
		if comma {
			out = append(out, ',')
		}
		comma = true
		out = append(out, '{')
		first := true
		for _, field := range [...]struct{ name, value string }{{"name", p.name}, {"in", p.in}, {"description", p.description}} {
			if field.value == "" {
				continue
			}
			if !first {
				out = append(out, ',')
			}
			first = false
			out = append(out, '"')
			out = append(out, field.name...)
			out = append(out, `":`...)
			if out, ok = appendPlainString(out, field.value); !ok {
				return out, false
			}
		}
		if !first {
			out = append(out, ',')
		}
		if p.required {
			out = append(out, `"required":true,`...)
		}
		out = append(out, `"schema":{"type":`...)
		if out, ok = appendPlainString(out, p.typeName); !ok {
			return out, false
		}
		out = append(out, `,"uniqueItems":true}}`...)
	}
	return out, true
}
