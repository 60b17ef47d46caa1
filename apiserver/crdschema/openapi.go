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
	openapiv2 "k8s.io/apiextensions-apiserver/pkg/controller/openapi/v2"
	"k8s.io/kube-openapi/pkg/spec3"
	"k8s.io/kube-openapi/pkg/validation/spec"
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
func (v *Version) OpenAPISchema() (*spec.Schema, error) { return v.openAPISchema(false) }

// OpenAPISchemaV2 is the kind's schema as kube publishes it under
// /openapi/v2 (refs still under #/components/schemas/): OpenAPISchema
// without what OpenAPI v2 cannot say, as kube's v2 builder strips it
// (junctors, int-or-string's anyOf among them; nullable, with the type,
// items and properties of nullable nodes; items and properties under
// x-kubernetes-preserve-unknown-fields). Readers of v2 (gnostic, so
// kubectl's and helm's protobuf clients) reject a document with anyOf.
func (v *Version) OpenAPISchemaV2() (*spec.Schema, error) { return v.openAPISchema(true) }

func (v *Version) openAPISchema(v2 bool) (*spec.Schema, error) {
	structural, err := v.openAPIStructural()
	if err != nil {
		return nil, err
	}
	if v2 && structural != nil && structural.XPreserveUnknownFields {
		// kube publishes such a kind as a bare object in v2: kubectl
		// would take properties as the only fields allowed.
		structural = nil
	}
	if v2 && structural != nil {
		structural = openapiv2.ToStructuralOpenAPIV2(structural)
	}
	properties, err := kubeNativePropertiesFor(v2)
	if err != nil {
		return nil, err
	}
	s := &spec.Schema{SchemaProps: spec.SchemaProps{Type: []string{"object"}}}
	if structural != nil {
		s = structural.ToKubeOpenAPI()
		for name, property := range properties.root {
			s.SetProperty(name, property)
		}
		addEmbeddedProperties(s, properties.embedded, v2)
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
var kubeNativeProperties = sync.OnceValues(func() (nativeProperties, error) { return builtNativeProperties(false) })

// kubeNativePropertiesV2 are those of /openapi/v2 (metadata is a $ref
// beside its description there, not an allOf), refs under
// #/components/schemas/ as in OpenAPISchema.
var kubeNativePropertiesV2 = sync.OnceValues(func() (nativeProperties, error) { return builtNativeProperties(true) })

// kubeNativePropertiesFor returns the properties of one form.
func kubeNativePropertiesFor(v2 bool) (nativeProperties, error) {
	if v2 {
		return kubeNativePropertiesV2()
	}
	return kubeNativeProperties()
}

func builtNativeProperties(v2 bool) (nativeProperties, error) {
	crd := &apiextensionsv1.CustomResourceDefinition{Spec: apiextensionsv1.CustomResourceDefinitionSpec{
		Group: "template.devplane.io", Scope: apiextensionsv1.NamespaceScoped,
		Names: apiextensionsv1.CustomResourceDefinitionNames{Plural: "templates", Singular: "template", Kind: "Template", ListKind: "TemplateList"},
		Versions: []apiextensionsv1.CustomResourceDefinitionVersion{{Name: "v1", Served: true, Storage: true,
			Schema: &apiextensionsv1.CustomResourceValidation{OpenAPIV3Schema: &apiextensionsv1.JSONSchemaProps{
				Type: "object",
				Properties: map[string]apiextensionsv1.JSONSchemaProps{"embedded": {
					// Not preserve-unknown-fields: v2 leaves those bare.
					Type: "object", XEmbeddedResource: true,
					Properties: map[string]apiextensionsv1.JSONSchemaProps{"spec": {Type: "string"}},
				}},
			}},
		}},
	}}
	const model = "io.devplane.template.v1.Template"
	var kind *spec.Schema
	if v2 {
		doc, err := builder.BuildOpenAPIV2(crd, "v1", builder.Options{V2: true})
		if err != nil {
			return nativeProperties{}, err
		}
		if d, ok := doc.Definitions[model]; ok {
			kind = &d
		}
	} else {
		doc, err := builder.BuildOpenAPIV3(crd, "v1", builder.Options{})
		if err != nil {
			return nativeProperties{}, err
		}
		kind = doc.Components.Schemas[model]
	}
	if kind == nil {
		return nativeProperties{}, fmt.Errorf("kube's OpenAPI builder made no Template schema")
	}
	pick := func(from spec.Schema) map[string]spec.Schema {
		picked := map[string]spec.Schema{}
		for _, name := range []string{"apiVersion", "kind", "metadata"} {
			property := from.Properties[name]
			if v2 && property.Ref.String() != "" {
				// As OpenAPISchema's refs are, for the document to move.
				target := strings.TrimPrefix(property.Ref.String(), "#/definitions/")
				property.Ref = spec.MustCreateRef("#/components/schemas/" + target)
			}
			picked[name] = property
		}
		return picked
	}
	return nativeProperties{root: pick(*kind), embedded: pick(kind.Properties["embedded"])}, nil
}

// addEmbeddedProperties gives every x-kubernetes-embedded-resource object
// apiVersion, kind and metadata, with apiVersion and kind required, as
// kube's builder does.
func addEmbeddedProperties(s *spec.Schema, embedded map[string]spec.Schema, v2 bool) {
	if s == nil {
		return
	}
	for name, property := range s.Properties {
		addEmbeddedProperties(&property, embedded, v2)
		s.Properties[name] = property
	}
	if s.Items != nil {
		addEmbeddedProperties(s.Items.Schema, embedded, v2)
	}
	if s.AdditionalProperties != nil {
		addEmbeddedProperties(s.AdditionalProperties.Schema, embedded, v2)
	}
	if preserve, ok := s.Extensions.GetBool("x-kubernetes-preserve-unknown-fields"); ok && preserve && v2 {
		// kubectl's v2 validation would take the properties as the only
		// fields allowed.
		return
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
