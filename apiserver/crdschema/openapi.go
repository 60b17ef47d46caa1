package crdschema

import (
	"fmt"
	"slices"
	"strings"
	"sync"

	apiextensionshelpers "k8s.io/apiextensions-apiserver/pkg/apihelpers"
	"k8s.io/apiextensions-apiserver/pkg/apis/apiextensions"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	apivalidation "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/validation"
	structuralschema "k8s.io/apiextensions-apiserver/pkg/apiserver/schema"
	"k8s.io/apiextensions-apiserver/pkg/controller/openapi/builder"
	"k8s.io/kube-openapi/pkg/spec3"
	"k8s.io/kube-openapi/pkg/validation/spec"
	"k8s.io/utils/ptr"
)

// The documents are built on each call, not kept: their users (the
// OpenAPI service, the managed-fields type converter) keep what they need.

// OpenAPISchema returns the kind's schema as kube publishes it under
// /openapi/v3 (descriptions, x-kubernetes-* extensions,
// x-kubernetes-group-version-kind, metadata as a $ref to ObjectMeta): what
// kubectl explain and server-side apply's type converter consume. It is
// what OpenAPIV3 has under ModelName, built alone: the whole document
// (paths, every meta definition) costs several times the schema itself,
// and with hundreds of CRDs documents are built from hundreds of these.
func (v *Version) OpenAPISchema() (*spec.Schema, error) {
	structural, err := v.openAPIStructural()
	if err != nil {
		return nil, err
	}
	properties, err := kubeNativeProperties()
	if err != nil {
		return nil, err
	}
	s := &spec.Schema{SchemaProps: spec.SchemaProps{Type: []string{"object"}}}
	if structural != nil {
		s = structural.ToKubeOpenAPI()
		for name, property := range properties.root {
			s.SetProperty(name, property)
		}
		addEmbeddedProperties(s, properties.embedded)
	}
	s.AddExtension("x-kubernetes-group-version-kind", []any{
		map[string]any{"group": v.GVK.Group, "version": v.GVK.Version, "kind": v.GVK.Kind},
	})
	if fields := v.selectableFields(); fields != nil {
		s.AddExtension("x-kubernetes-selectable-fields", fields)
	}
	return s, nil
}

// openAPIStructural is the version's schema as the OpenAPI builder takes
// it: structural and unfolded, or nil when there is none or it is not
// structural (then the kind is published as a bare object).
func (v *Version) openAPIStructural() (*structuralschema.Structural, error) {
	validation, err := apiextensionshelpers.GetSchemaForVersion(v.crd, v.name)
	if err != nil || validation == nil || validation.OpenAPIV3Schema == nil {
		return nil, err
	}
	internal := &apiextensions.CustomResourceValidation{}
	if err := apiextensionsv1.Convert_v1_CustomResourceValidation_To_apiextensions_CustomResourceValidation(validation, internal, nil); err != nil {
		return nil, fmt.Errorf("converting the schema of %s: %w", v.GVK, err)
	}
	if apivalidation.SchemaHasInvalidTypes(internal.OpenAPIV3Schema) {
		return nil, nil
	}
	structural, err := structuralschema.NewStructural(internal.OpenAPIV3Schema)
	if err != nil || len(structuralschema.ValidateStructural(nil, structural)) > 0 {
		return nil, nil //nolint:nilerr // not structural: published as a bare object
	}
	return structural.Unfold(), nil
}

func (v *Version) selectableFields() []any {
	for _, version := range v.crd.Spec.Versions {
		if version.Name != v.name || len(version.SelectableFields) == 0 {
			continue
		}
		fields := make([]any, 0, len(version.SelectableFields))
		for _, field := range version.SelectableFields {
			fields = append(fields, map[string]any{"fieldPath": strings.TrimPrefix(field.JSONPath, ".")})
		}
		return fields
	}
	return nil
}

// nativeProperties are the properties kube adds to a kind's schema
// (apiVersion, kind, metadata) and to embedded resources within it.
type nativeProperties struct {
	root, embedded map[string]spec.Schema
}

// kubeNativeProperties takes those properties from what kube's builder
// makes of a small CRD, once, so they stay what kube publishes.
var kubeNativeProperties = sync.OnceValues(func() (nativeProperties, error) {
	crd := &apiextensionsv1.CustomResourceDefinition{Spec: apiextensionsv1.CustomResourceDefinitionSpec{
		Group: "template.devplane.io", Scope: apiextensionsv1.NamespaceScoped,
		Names: apiextensionsv1.CustomResourceDefinitionNames{Plural: "templates", Singular: "template", Kind: "Template", ListKind: "TemplateList"},
		Versions: []apiextensionsv1.CustomResourceDefinitionVersion{{Name: "v1", Served: true, Storage: true,
			Schema: &apiextensionsv1.CustomResourceValidation{OpenAPIV3Schema: &apiextensionsv1.JSONSchemaProps{
				Type: "object",
				Properties: map[string]apiextensionsv1.JSONSchemaProps{"embedded": {
					Type: "object", XEmbeddedResource: true, XPreserveUnknownFields: ptr.To(true),
				}},
			}},
		}},
	}}
	doc, err := builder.BuildOpenAPIV3(crd, "v1", builder.Options{})
	if err != nil {
		return nativeProperties{}, err
	}
	kind := doc.Components.Schemas["io.devplane.template.v1.Template"]
	if kind == nil {
		return nativeProperties{}, fmt.Errorf("kube's OpenAPI builder made no Template schema")
	}
	pick := func(from spec.Schema) map[string]spec.Schema {
		picked := map[string]spec.Schema{}
		for _, name := range []string{"apiVersion", "kind", "metadata"} {
			picked[name] = from.Properties[name]
		}
		return picked
	}
	return nativeProperties{root: pick(*kind), embedded: pick(kind.Properties["embedded"])}, nil
})

// addEmbeddedProperties gives every x-kubernetes-embedded-resource object
// apiVersion, kind and metadata, with apiVersion and kind required, as
// kube's builder does.
func addEmbeddedProperties(s *spec.Schema, embedded map[string]spec.Schema) {
	if s == nil {
		return
	}
	for name, property := range s.Properties {
		addEmbeddedProperties(&property, embedded)
		s.Properties[name] = property
	}
	if s.Items != nil {
		addEmbeddedProperties(s.Items.Schema, embedded)
	}
	if s.AdditionalProperties != nil {
		addEmbeddedProperties(s.AdditionalProperties.Schema, embedded)
	}
	if isEmbedded, ok := s.Extensions.GetBool("x-kubernetes-embedded-resource"); !ok || !isEmbedded {
		return
	}
	for name, property := range embedded {
		s.SetProperty(name, property)
	}
	for _, required := range []string{"kind", "apiVersion"} {
		if !slices.Contains(s.Required, required) {
			s.Required = append(s.Required, required)
		}
	}
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
