package crdschema

import (
	"fmt"
	"slices"
	"strings"

	"k8s.io/apiextensions-apiserver/pkg/controller/openapi/builder"
	"k8s.io/kube-openapi/pkg/spec3"
	"k8s.io/kube-openapi/pkg/validation/spec"
)

// The documents are built on each call, not kept: their users (the
// OpenAPI service, the managed-fields type converter) keep what they need.

// OpenAPISchema returns the kind's schema as kube publishes it under
// /openapi/v3 (descriptions, x-kubernetes-* extensions,
// x-kubernetes-group-version-kind, metadata as a $ref to ObjectMeta): what
// kubectl explain and server-side apply's type converter consume.
func (v *Version) OpenAPISchema() (*spec.Schema, error) {
	doc, err := v.OpenAPIV3()
	if err != nil {
		return nil, err
	}
	s, ok := doc.Components.Schemas[v.ModelName()]
	if !ok {
		return nil, fmt.Errorf("no OpenAPI schema named %s", v.ModelName())
	}
	return s, nil
}

// OpenAPIV3 is the complete /openapi/v3/apis/<group>/<version> document of
// this version (paths and component schemas, including ObjectMeta).
func (v *Version) OpenAPIV3() (*spec3.OpenAPI, error) {
	doc, err := builder.BuildOpenAPIV3(v.crd, v.name, builder.Options{IncludeSelectableFields: true})
	if err != nil {
		return nil, fmt.Errorf("building OpenAPI v3 for %s: %w", v.GVK, err)
	}
	return doc, nil
}

// OpenAPIV2 is this version's contribution to /openapi/v2, to be merged
// into the aggregated swagger (apiextensions builder.MergeSpecs).
func (v *Version) OpenAPIV2() (*spec.Swagger, error) {
	doc, err := builder.BuildOpenAPIV2(v.crd, v.name, builder.Options{V2: true, IncludeSelectableFields: true})
	if err != nil {
		return nil, fmt.Errorf("building OpenAPI v2 for %s: %w", v.GVK, err)
	}
	return doc, nil
}

// ModelName is the OpenAPI definition name of the kind, e.g.
// "com.example.stable.v1.CronTab" (the group reversed).
func (v *Version) ModelName() string {
	parts := strings.Split(v.GVK.Group, ".")
	slices.Reverse(parts)
	return fmt.Sprintf("%s.%s.%s", strings.Join(parts, "."), v.GVK.Version, v.GVK.Kind)
}
