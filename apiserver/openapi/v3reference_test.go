package openapi

import (
	"k8s.io/kube-openapi/pkg/spec3"
)

// A group version's /openapi/v3 document built as one spec3.OpenAPI, as it
// was before it was assembled from pieces: json.Marshal of it is what the
// assembled document must equal.

func fullV3Document(version string, resources []Resource, extra SuppliedDefinitions) *spec3.OpenAPI {
	resolver := newDefinitionResolver(v3RefPrefix, extra)
	routes := routesForAll(resolveResources(resources, resolver))
	roots := referencedByRoutes(routes)
	resolver.prefetch(roots)
	return &spec3.OpenAPI{
		Version: "3.0.0",
		Info:    documentInfo(version),
		Paths:   &spec3.Paths{Paths: v3Paths(routes)},
		Components: &spec3.Components{
			Schemas:         resolver.closure(roots),
			SecuritySchemes: v3SecuritySchemes(),
		},
		SecurityRequirement: securityRequirement(),
	}
}
