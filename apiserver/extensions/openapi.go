package extensions

import (
	"slices"
	"sort"
	"strings"

	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	"k8s.io/kube-openapi/pkg/validation/spec"

	"github.com/devplane/devplane/apiserver/openapi"
)

// Where /openapi/v2's and /openapi/v3's local refs point.
const (
	v2RefPrefix = "#/definitions/"
	v3RefPrefix = "#/components/schemas/"
)

// customPatchTypes: custom resources have no strategic merge patch.
var customPatchTypes = []string{openapi.PatchTypeJSON, openapi.PatchTypeMerge, openapi.PatchTypeApplyYAML}

// OpenAPI returns the OpenAPI paths of everything the extensions server
// serves (CRDs and every served custom resource version) and the custom
// resources' schemas, keyed by definition name, for openapi.Service.Update.
// Schemas are built when a document needs them, not here.
func (e *Extensions) OpenAPI() ([]openapi.Resource, openapi.SuppliedDefinitions) {
	out := []openapi.Resource{{
		Group: CRDResource.Group, Version: CRDResource.Version, Resource: CRDResource.Resource,
		Kind: "CustomResourceDefinition", ListKind: "CustomResourceDefinitionList",
		Verbs: crdVerbs(), Subresources: []string{"status"},
		DefinitionName: apiextensionsv1.CustomResourceDefinition{}.OpenAPIModelName(),
	}}
	e.mu.Lock()
	versions := make([]*servedVersion, 0, len(e.versions))
	for _, sv := range e.versions {
		versions = append(versions, sv)
	}
	e.mu.Unlock()
	extra := make(openapi.SuppliedDefinitions, 2*len(versions))
	sort.Slice(versions, func(i, j int) bool { return versions[i].res.GVR.String() < versions[j].res.GVR.String() })
	for _, sv := range versions {
		res, v := sv.res, sv.v
		model := v.ModelName()
		extra[model] = openapi.SuppliedDefinition{
			Schema: openapi.SchemaOrNil(v.OpenAPISchema),
			V2:     openapi.SchemaOrNil(v.OpenAPISchemaV2),
			V2JSON: func(dst []byte) ([]byte, []string, bool) { return v.AppendOpenAPISchemaV2JSON(dst, v2RefPrefix) },
			V3JSON: func(dst []byte) ([]byte, []string, bool) { return v.AppendOpenAPISchemaV3JSON(dst, v3RefPrefix) },
		}
		listModel := strings.TrimSuffix(model, res.Kind) + res.ListKind
		group, version, listKind := res.GVR.Group, res.GVR.Version, res.ListKind
		extra[listModel] = openapi.SuppliedDefinition{
			Schema: func() *spec.Schema { return listSchema(model, group, version, listKind) },
			V2JSON: func(dst []byte) ([]byte, []string, bool) {
				return appendListSchemaJSON(dst, model, group, version, listKind, true)
			},
			V3JSON: func(dst []byte) ([]byte, []string, bool) {
				return appendListSchemaJSON(dst, model, group, version, listKind, false)
			},
		}
		out = append(out, openapi.Resource{
			Group: res.GVR.Group, Version: res.GVR.Version, Resource: res.GVR.Resource,
			Kind: res.Kind, ListKind: res.ListKind, Namespaced: res.Namespaced,
			Verbs: res.Verbs, Subresources: res.Subresources(),
			DefinitionName: model, PatchTypes: customPatchTypes,
			Revision: sv.crd.key,
		})
	}
	return out, extra
}

func crdVerbs() []string {
	return []string{"create", "delete", "deletecollection", "get", "list", "patch", "update", "watch"}
}

// listSchema is the schema of a custom resource list, as kube publishes it.
func listSchema(itemModel, group, version, listKind string) *spec.Schema {
	str := func(desc string) spec.Schema {
		return spec.Schema{SchemaProps: spec.SchemaProps{Type: []string{"string"}, Description: desc}}
	}
	s := &spec.Schema{
		SchemaProps: spec.SchemaProps{
			Description: listKind + " is a list of " + strings.TrimSuffix(listKind, "List"),
			Type:        []string{"object"},
			Required:    []string{"items"},
			Properties: map[string]spec.Schema{
				"apiVersion": str("APIVersion defines the versioned schema of this representation of an object."),
				"kind":       str("Kind is a string value representing the REST resource this object represents."),
				"metadata": {SchemaProps: spec.SchemaProps{Description: "Standard list metadata.",
					Ref: spec.MustCreateRef("#/definitions/io.k8s.apimachinery.pkg.apis.meta.v1.ListMeta")}},
				"items": {SchemaProps: spec.SchemaProps{Type: []string{"array"},
					Items: &spec.SchemaOrArray{Schema: &spec.Schema{SchemaProps: spec.SchemaProps{
						Ref: spec.MustCreateRef("#/definitions/" + itemModel)}}}}},
			},
		},
	}
	s.AddExtension("x-kubernetes-group-version-kind", []interface{}{
		map[string]interface{}{"group": group, "version": version, "kind": listKind}})
	return s
}

// appendListSchemaJSON writes listSchema as /openapi/v2 (v2) or
// /openapi/v3 publishes it (see openapi.SuppliedDefinition.V2JSON and
// V3JSON): building, rewriting and marshalling the spec.Schema of each
// list cost a cold /openapi/v2 about a fifth of its time with hundreds of
// custom resources. ok is false for names that would need escaping; the
// spec.Schema is used then.
func appendListSchemaJSON(dst []byte, itemModel, group, version, listKind string, v2 bool) ([]byte, []string, bool) {
	if itemModel == "" {
		return dst, nil, false
	}
	for _, s := range []string{itemModel, group, version, listKind} {
		for i := 0; i < len(s); i++ {
			if c := s[i]; !('a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' || '0' <= c && c <= '9' || c == '.' || c == '-' || c == '_') {
				return dst, nil, false
			}
		}
	}
	const listMeta = "io.k8s.apimachinery.pkg.apis.meta.v1.ListMeta"
	refPrefix := v3RefPrefix
	// v3 wraps a $ref with siblings in allOf (builder3/util.WrapRefs).
	metadata := `"metadata":{"description":"Standard list metadata.","allOf":[{"$ref":"` + v3RefPrefix + listMeta + `"}]}},`
	if v2 {
		refPrefix = v2RefPrefix
		metadata = `"metadata":{"description":"Standard list metadata.","$ref":"` + v2RefPrefix + listMeta + `"}},`
	}
	data := slices.Grow(dst, 680+len(itemModel)+2*len(listKind)+len(group)+len(version))
	data = append(data, `{"description":"`...)
	data = append(data, listKind+" is a list of "+strings.TrimSuffix(listKind, "List")...)
	data = append(data, `","type":"object","required":["items"],"properties":{`+
		`"apiVersion":{"description":"APIVersion defines the versioned schema of this representation of an object.","type":"string"},`+
		`"items":{"type":"array","items":{"$ref":"`...)
	data = append(data, refPrefix...)
	data = append(data, itemModel...)
	data = append(data, `"}},`+
		`"kind":{"description":"Kind is a string value representing the REST resource this object represents.","type":"string"},`...)
	data = append(data, metadata...)
	data = append(data, `"x-kubernetes-group-version-kind":[{"group":"`...)
	data = append(data, group+`","kind":"`+listKind+`","version":"`+version+`"}]}`...)
	return data, []string{listMeta, itemModel}, true
}
