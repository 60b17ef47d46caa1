package openapi

import (
	"bytes"
	"encoding/json"
	"fmt"
	"maps"
	"slices"
)

// A group version's /openapi/v3 document was built as one spec3.OpenAPI
// and marshalled by reflection; with ten large CRDs, building their
// spec.Schemas and marshalling them and the paths was nearly all of its
// first request. It is now assembled as bytes: the supplied definitions
// given as JSON (SuppliedDefinition.V3JSON) spliced in, the path items
// written from their routes (v3paths.go); only what neither covers goes
// through the spec types, one member at a time. The bytes are those
// json.Marshal makes of the whole spec3.OpenAPI (v3reference_test.go).

// encodeV3Document writes the document of a group version's resources.
func encodeV3Document(version string, resources []Resource, extra SuppliedDefinitions) ([]byte, error) {
	resolver := newDefinitionResolver(v3RefPrefix, extra)
	routes := routesForAll(resolveResources(resources, resolver))
	schemas := resolver.encodedV3Closure(referencedByRoutes(routes))
	defer schemas.release()
	if schemas.err != nil {
		return nil, schemas.err
	}
	info, err := json.Marshal(documentInfo(version))
	if err != nil {
		return nil, err
	}
	securitySchemes, err := json.Marshal(v3SecuritySchemes())
	if err != nil {
		return nil, err
	}
	security, err := json.Marshal(securityRequirement())
	if err != nil {
		return nil, err
	}

	// The paths (about half the document) are written first, aside, for
	// the document to be sized rather than doubled into: HTML escapes, a
	// few, grow the schemas.
	paths := scratchBuffers.Get().(*[]byte)
	defer scratchBuffers.Put(paths)
	*paths, err = appendV3Paths((*paths)[:0], routes)
	if err != nil {
		return nil, err
	}
	size := len(info) + len(*paths) + len(securitySchemes) + len(security) + 128
	for name, schema := range schemas.byName {
		size += len(name) + len(schema.json) + len(schema.json)/64 + 4
	}
	out := make([]byte, 0, size)
	out = append(out, `{"openapi":"3.0.0","info":`...)
	out = append(out, info...)
	out = append(out, `,"paths":{`...)
	out = append(out, *paths...)
	out = append(out, `},"components":{`...)
	if len(schemas.byName) > 0 { // omitted when empty, as spec3.Components does
		out = append(out, `"schemas":{`...)
		for i, name := range slices.Sorted(maps.Keys(schemas.byName)) {
			if i > 0 {
				out = append(out, ',')
			}
			if out, err = appendJSONString(out, name); err != nil {
				return nil, err
			}
			out = append(out, ':')
			schema := schemas.byName[name]
			if schema.escape {
				out = appendHTMLEscaped(out, schema.json)
			} else {
				out = append(out, schema.json...)
			}
		}
		out = append(out, `},`...)
	}
	out = append(out, `"securitySchemes":`...)
	out = append(out, securitySchemes...)
	out = append(out, `},"security":`...)
	out = append(out, security...)
	return append(out, '}'), nil
}

// appendV3Paths writes the members of the paths object, sorted: from their
// route, or through spec3.Path when the writer refuses it or several
// routes share the path.
func appendV3Paths(out []byte, routes []route) ([]byte, error) {
	single, merged := routesByPath(routes)
	mergedPaths := v3Paths(merged)
	names := make([]string, 0, len(single)+len(mergedPaths))
	for name := range single {
		names = append(names, name)
	}
	for name := range mergedPaths {
		names = append(names, name)
	}
	slices.Sort(names)
	for i, name := range names {
		if i > 0 {
			out = append(out, ',')
		}
		var err error
		if out, err = appendJSONString(out, name); err != nil {
			return out, err
		}
		out = append(out, ':')
		item, shared := mergedPaths[name]
		if !shared {
			rt := single[name]
			start := len(out)
			var ok bool
			if out, ok = appendV3PathItem(out, rt); ok {
				continue
			}
			out = out[:start]
			item = v3Paths([]route{rt})[name]
		}
		value, err := json.Marshal(item)
		if err != nil {
			return out, fmt.Errorf("encoding path %s: %w", name, err)
		}
		out = append(out, value...)
	}
	return out, nil
}

// encodedSchema is one component schema's JSON.
type encodedSchema struct {
	json []byte
	// escape: written by V3JSON as spec.Schema.MarshalJSON writes it,
	// without the escaping of <, >, & and U+2028/9 json.Marshal adds.
	escape bool
}

// encodedSchemas are a document's component schemas by name, and the
// scratch buffers those given as JSON are in until the document has
// copied them.
type encodedSchemas struct {
	byName  map[string]encodedSchema
	scratch []*[]byte
	err     error
}

func (s *encodedSchemas) release() {
	for _, buf := range s.scratch {
		scratchBuffers.Put(buf)
	}
	s.scratch = nil
}

// writtenV3 is a supplied definition written by its V3JSON into a
// scratch buffer; ok false when it has none or it declined.
type writtenV3 struct {
	schema encodedSchema
	refs   []string
	buf    *[]byte
	ok     bool
}

func writeV3JSON(supplied SuppliedDefinition) writtenV3 {
	if supplied.V3JSON == nil {
		return writtenV3{}
	}
	buf := scratchBuffers.Get().(*[]byte)
	data, refs, ok := supplied.V3JSON((*buf)[:0])
	*buf = data[:0] // keeps what it grew to
	if !ok {
		scratchBuffers.Put(buf)
		return writtenV3{}
	}
	return writtenV3{schema: encodedSchema{json: data, escape: true}, refs: refs, buf: buf, ok: true}
}

// add keeps a written definition.
func (s *encodedSchemas) add(name string, w writtenV3) {
	s.byName[name] = w.schema
	s.scratch = append(s.scratch, w.buf)
}

// encodedV3Closure encodes what closure returns: the supplied definitions
// among the roots written by V3JSON on all processors (or, when they
// decline, built as spec.Schemas on all processors, as prefetch does),
// the rest marshalled one by one (the generated ones once and kept).
func (r *definitionResolver) encodedV3Closure(roots []string) *encodedSchemas {
	schemas := &encodedSchemas{byName: map[string]encodedSchema{}}
	var supplied []string
	for _, name := range roots {
		if _, ok := r.extra[name]; ok && !slices.Contains(supplied, name) {
			supplied = append(supplied, name)
		}
	}
	written := make([]writtenV3, len(supplied))
	_ = parallel(len(supplied), func(i int) error { // writeV3JSON reports no errors
		written[i] = writeV3JSON(r.extra[supplied[i]])
		return nil
	})
	refs := map[string][]string{}
	var declined []string
	for i, name := range supplied {
		if !written[i].ok {
			declined = append(declined, name)
			continue
		}
		schemas.add(name, written[i])
		refs[name] = written[i].refs
	}
	r.prefetch(declined)

	schemas.err = walkClosure(roots, func(name string) ([]string, error) {
		if _, ok := schemas.byName[name]; ok {
			return refs[name], nil
		}
		if _, isSupplied := r.extra[name]; isSupplied && !slices.Contains(supplied, name) {
			// Reached through a ref only: written here, alone.
			if w := writeV3JSON(r.extra[name]); w.ok {
				schemas.add(name, w)
				return w.refs, nil
			}
		}
		data, dependencies, err := r.lookupJSON(name)
		if err != nil {
			return nil, fmt.Errorf("encoding %s: %w", name, err)
		}
		if data == nil {
			return nil, nil
		}
		schemas.byName[name] = encodedSchema{json: data}
		return dependencies, nil
	})
	return schemas
}

// appendHTMLEscaped appends JSON escaped as json.Marshal escapes a
// Marshaler's output.
func appendHTMLEscaped(out, data []byte) []byte {
	b := bytes.NewBuffer(out)
	json.HTMLEscape(b, data)
	return b.Bytes()
}
