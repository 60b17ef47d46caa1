package openapi

import (
	"sort"

	"k8s.io/kube-openapi/pkg/common"
	"k8s.io/kube-openapi/pkg/spec3"
	"k8s.io/kube-openapi/pkg/validation/spec"
)

const (
	extensionAction = "x-kubernetes-action"
	bearerToken     = "BearerToken"
)

// resolvedResource is a resource whose definitions exist, with the list
// definition to use ("" when none was supplied).
type resolvedResource struct {
	Resource
	listDefinition string
	builtin        bool
}

// resolveResources drops resources whose definition is unknown: a dangling
// $ref makes kubectl reject the whole document.
func resolveResources(resources []Resource, resolver *definitionResolver) []resolvedResource {
	var resolved []resolvedResource
	for _, r := range resources {
		if !resolver.has(r.DefinitionName) {
			continue
		}
		listDefinition := listDefinitionName(r)
		if !resolver.has(listDefinition) {
			listDefinition = ""
		}
		resolved = append(resolved, resolvedResource{r, listDefinition, resolver.isGenerated(r.DefinitionName)})
	}
	return resolved
}

func routesForAll(resources []resolvedResource) []route {
	n := 0
	for _, r := range resources {
		n += 6 + len(r.Subresources) // at most: collection, item, all namespaces, three watches
	}
	routes := make([]route, 0, n)
	for _, r := range resources {
		routes = appendRoutesFor(routes, r.Resource, r.listDefinition, r.builtin)
	}
	return routes
}

func v2Ref(definition string) spec.Ref {
	return spec.MustCreateRef(v2RefPrefix + common.EscapeJsonPointer(definition))
}

func v2Parameters(parameters []parameter) []spec.Parameter {
	rendered := make([]spec.Parameter, 0, len(parameters))
	for _, p := range parameters {
		param := spec.Parameter{
			ParamProps:   spec.ParamProps{Name: p.name, In: p.in, Description: p.description, Required: p.required},
			SimpleSchema: spec.SimpleSchema{Type: p.typeName},
		}
		param.UniqueItems = true
		rendered = append(rendered, param)
	}
	return rendered
}

func v2Operation(op operation) *spec.Operation {
	parameters := v2Parameters(op.parameters)
	if op.body != "" {
		body := spec.Parameter{ParamProps: spec.ParamProps{
			Name: "body", In: "body", Required: true, Schema: &spec.Schema{SchemaProps: spec.SchemaProps{Ref: v2Ref(op.body)}},
		}}
		parameters = append([]spec.Parameter{body}, parameters...)
	}
	responses := map[int]spec.Response{}
	for _, resp := range op.responses {
		rendered := spec.Response{ResponseProps: spec.ResponseProps{Description: resp.description}}
		if resp.definition != "" {
			rendered.Schema = &spec.Schema{SchemaProps: spec.SchemaProps{Ref: v2Ref(resp.definition)}}
		}
		responses[resp.code] = rendered
	}
	consumes := op.consumes
	if consumes == nil {
		consumes = []string{mediaAnyForUpload}
	}
	return &spec.Operation{
		OperationProps: spec.OperationProps{
			ID: op.id, Description: op.description, Tags: []string{op.tag},
			Consumes: consumes, Produces: op.produces, Schemes: []string{"https"},
			Parameters: parameters,
			Responses:  &spec.Responses{ResponsesProps: spec.ResponsesProps{StatusCodeResponses: responses}},
		},
		VendorExtensible: spec.VendorExtensible{Extensions: spec.Extensions{
			extensionAction:           op.action,
			extensionGroupVersionKind: op.kind.extension(),
		}},
	}
}

// setOperation stores op in its method's field of a path item; v2 and v3
// path items have the same fields of different types.
func setOperation[O any](method string, op O, get, put, post, patch, del *O) {
	switch method {
	case "get":
		*get = op
	case "put":
		*put = op
	case "post":
		*post = op
	case "patch":
		*patch = op
	case "delete":
		*del = op
	}
}

// groupVersionsOf returns the v3 index keys ("api/v1", "apis/apps/v1") with
// the resources each serves, in input order.
func groupVersionsOf(resources []Resource) map[string][]Resource {
	byGroupVersion := map[string][]Resource{}
	for _, r := range resources {
		key := groupVersionPath(r.Group, r.Version)
		byGroupVersion[key] = append(byGroupVersion[key], r)
	}
	return byGroupVersion
}

// documentInfo is the info of both documents.
func documentInfo(version string) *spec.Info {
	return &spec.Info{InfoProps: spec.InfoProps{Title: "Kubernetes", Version: version}}
}

// securityRequirement is the security of both documents.
func securityRequirement() []map[string][]string { return []map[string][]string{{bearerToken: {}}} }

func v3SecuritySchemes() spec3.SecuritySchemes {
	return spec3.SecuritySchemes{bearerToken: {SecuritySchemeProps: spec3.SecuritySchemeProps{
		Type: "apiKey", Name: "authorization", In: "header", Description: "Bearer Token authentication",
	}}}
}

// v3Paths builds the routes' path items; routes of the same path are
// merged into one item, the last one's parameters winning.
func v3Paths(routes []route) map[string]*spec3.Path {
	paths := map[string]*spec3.Path{}
	for _, rt := range routes {
		item, ok := paths[rt.path]
		if !ok {
			item = &spec3.Path{}
			paths[rt.path] = item
		}
		item.Parameters = v3Parameters(rt.parameters)
		for _, op := range rt.operations {
			setOperation(op.method, v3Operation(op), &item.Get, &item.Put, &item.Post, &item.Patch, &item.Delete)
		}
	}
	return paths
}

func v3Ref(definition string) *spec.Schema {
	return &spec.Schema{SchemaProps: spec.SchemaProps{Ref: spec.MustCreateRef(v3RefPrefix + common.EscapeJsonPointer(definition))}}
}

func v3Parameters(parameters []parameter) []*spec3.Parameter {
	rendered := make([]*spec3.Parameter, 0, len(parameters))
	for _, p := range parameters {
		schema := &spec.Schema{SchemaProps: spec.SchemaProps{Type: []string{p.typeName}, UniqueItems: true}}
		rendered = append(rendered, &spec3.Parameter{ParameterProps: spec3.ParameterProps{
			Name: p.name, In: p.in, Description: p.description, Required: p.required, Schema: schema,
		}})
	}
	return rendered
}

func v3Operation(op operation) *spec3.Operation {
	responses := map[int]*spec3.Response{}
	for _, resp := range op.responses {
		rendered := &spec3.Response{ResponseProps: spec3.ResponseProps{Description: resp.description}}
		if resp.definition != "" {
			rendered.Content = map[string]*spec3.MediaType{}
			for _, mediaType := range op.produces {
				rendered.Content[mediaType] = &spec3.MediaType{MediaTypeProps: spec3.MediaTypeProps{Schema: v3Ref(resp.definition)}}
			}
		}
		responses[resp.code] = rendered
	}
	rendered := &spec3.Operation{
		OperationProps: spec3.OperationProps{
			OperationId: op.id, Description: op.description, Tags: []string{op.tag},
			Parameters: v3Parameters(op.parameters),
			Responses:  &spec3.Responses{ResponsesProps: spec3.ResponsesProps{StatusCodeResponses: responses}},
		},
		VendorExtensible: spec.VendorExtensible{Extensions: spec.Extensions{
			extensionAction:           op.action,
			extensionGroupVersionKind: op.kind.extension(),
		}},
	}
	if op.body != "" {
		content := map[string]*spec3.MediaType{}
		for _, mediaType := range op.consumes {
			content[mediaType] = &spec3.MediaType{MediaTypeProps: spec3.MediaTypeProps{Schema: v3Ref(op.body)}}
		}
		rendered.RequestBody = &spec3.RequestBody{RequestBodyProps: spec3.RequestBodyProps{Content: content, Required: true}}
	}
	return rendered
}

// sortedKeys returns map keys in order, for deterministic iteration.
func sortedKeys[V any](m map[string]V) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return keys
}

// usesSuppliedDefinitions reports whether any of the resources is described
// by a caller-supplied definition, i.e. whether its document depends on extra.
func usesSuppliedDefinitions(resources []Resource, extra SuppliedDefinitions) bool {
	for _, r := range resources {
		if _, ok := extra[r.DefinitionName]; ok {
			return true
		}
		if _, ok := extra[listDefinitionName(r)]; ok {
			return true
		}
	}
	return false
}
