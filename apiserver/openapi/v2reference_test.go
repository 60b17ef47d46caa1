package openapi

import (
	"strings"

	"k8s.io/kube-openapi/pkg/validation/spec"
)

// The whole /openapi/v2 built as one spec.Swagger, as it was before it was
// assembled from fragments: what the assembled document must equal.

func fullV2Document(version string, resources []Resource, extra SuppliedDefinitions) *spec.Swagger {
	resolver := newDefinitionResolver(v2RefPrefix, extra)
	routes := routesForAll(resolveResources(resources, resolver))

	definitions := spec.Definitions{}
	for name, schema := range resolver.closure(referencedByRoutes(routes)) {
		definitions[name] = *schema
	}
	paths := v2Paths(routes)
	return &spec.Swagger{SwaggerProps: spec.SwaggerProps{
		Swagger:     "2.0",
		Info:        &spec.Info{InfoProps: spec.InfoProps{Title: "Kubernetes", Version: version}},
		Paths:       &spec.Paths{Paths: paths},
		Definitions: definitions,
		SecurityDefinitions: spec.SecurityDefinitions{
			bearerToken: {SecuritySchemeProps: spec.SecuritySchemeProps{
				Type: "apiKey", Name: "authorization", In: "header",
				Description: "Bearer Token authentication",
			}},
		},
		Security: []map[string][]string{{bearerToken: {}}},
	}}
}

// mergeExternalV2 adds each external document's paths under its group
// version and the definitions it brings; local definitions of the same
// name win (they are the same shared Kubernetes types).
func mergeExternalV2(doc *spec.Swagger, external map[string]External) {
	for _, key := range sortedKeys(external) {
		ext := external[key].V2
		if ext == nil {
			continue
		}
		prefix := "/" + key
		if ext.Paths != nil {
			for path, item := range ext.Paths.Paths {
				if path != prefix && !strings.HasPrefix(path, prefix+"/") {
					continue
				}
				if _, taken := doc.Paths.Paths[path]; !taken {
					doc.Paths.Paths[path] = item
				}
			}
		}
		for name, schema := range ext.Definitions {
			if _, taken := doc.Definitions[name]; !taken {
				doc.Definitions[name] = schema
			}
		}
	}
}
