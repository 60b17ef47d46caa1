package crdschema

import (
	"fmt"
	"slices"
	"strings"

	"k8s.io/apiextensions-apiserver/pkg/controller/openapi/builder"
	"k8s.io/kube-openapi/pkg/spec3"
	"k8s.io/kube-openapi/pkg/validation/spec"
)

type openAPIDocs struct {
	v2 *spec.Swagger
	v3 *spec3.OpenAPI
}

// OpenAPISchema returns the kind's schema as kube publishes it under
// /openapi/v3 (descriptions, x-kubernetes-* extensions,
// x-kubernetes-group-version-kind, metadata as a $ref to ObjectMeta): what
// kubectl explain and server-side apply's type converter consume.
func (v *Version) OpenAPISchema() (*spec.Schema, error) {
	docs, err := v.openAPIDocs()
	if err != nil {
		return nil, err
	}
	s, ok := docs.v3.Components.Schemas[v.ModelName()]
	if !ok {
		return nil, fmt.Errorf("no OpenAPI schema named %s", v.ModelName())
	}
	return s, nil
}

// OpenAPIV3 is the complete /openapi/v3/apis/<group>/<version> document of
// this version (paths and component schemas, including ObjectMeta).
func (v *Version) OpenAPIV3() (*spec3.OpenAPI, error) {
	docs, err := v.openAPIDocs()
	if err != nil {
		return nil, err
	}
	return docs.v3, nil
}

// OpenAPIV2 is this version's contribution to /openapi/v2, to be merged
// into the aggregated swagger (apiextensions builder.MergeSpecs).
func (v *Version) OpenAPIV2() (*spec.Swagger, error) {
	docs, err := v.openAPIDocs()
	if err != nil {
		return nil, err
	}
	return docs.v2, nil
}

// ModelName is the OpenAPI definition name of the kind, e.g.
// "com.example.stable.v1.CronTab" (the group reversed).
func (v *Version) ModelName() string {
	parts := strings.Split(v.GVK.Group, ".")
	slices.Reverse(parts)
	return fmt.Sprintf("%s.%s.%s", strings.Join(parts, "."), v.GVK.Version, v.GVK.Kind)
}

// openAPIDocs builds both documents on first use: most versions are never
// explained, and the build is far costlier than compiling validators.
func (v *Version) openAPIDocs() (*openAPIDocs, error) {
	v.openAPIOnce.Do(func() {
		v3, err := builder.BuildOpenAPIV3(v.crd, v.name, builder.Options{IncludeSelectableFields: true})
		if err != nil {
			v.openAPIErr = fmt.Errorf("building OpenAPI v3 for %s: %w", v.GVK, err)
			return
		}
		v2, err := builder.BuildOpenAPIV2(v.crd, v.name, builder.Options{V2: true, IncludeSelectableFields: true})
		if err != nil {
			v.openAPIErr = fmt.Errorf("building OpenAPI v2 for %s: %w", v.GVK, err)
			return
		}
		v.openAPI = &openAPIDocs{v2: v2, v3: v3}
	})
	return v.openAPI, v.openAPIErr
}
