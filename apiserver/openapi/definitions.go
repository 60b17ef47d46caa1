package openapi

import (
	"encoding/json"
	"reflect"
	"slices"
	"sort"
	"strings"
	"sync"

	"github.com/devplane/devplane/apiserver/builtin"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	"k8s.io/apimachinery/pkg/runtime"
	apischema "k8s.io/apimachinery/pkg/runtime/schema"
	builderutil "k8s.io/kube-openapi/pkg/builder3/util"
	"k8s.io/kube-openapi/pkg/common"
	"k8s.io/kube-openapi/pkg/handler"
	"k8s.io/kube-openapi/pkg/schemamutation"
	"k8s.io/kube-openapi/pkg/util"
	"k8s.io/kube-openapi/pkg/validation/spec"
)

const (
	v2RefPrefix = "#/definitions/"
	v3RefPrefix = "#/components/schemas/"

	extensionGroupVersionKind = "x-kubernetes-group-version-kind"
)

// Definitions returns every generated definition keyed by its Kubernetes name
// (io.k8s.api.apps.v1.Deployment), in the OpenAPI v3 form kube-apiserver feeds
// to managedfields.NewTypeConverter: refs point at #/components/schemas/ and
// refs with siblings are wrapped in allOf. Kinds carry
// x-kubernetes-group-version-kind. Built once on first use and kept; callers
// must not mutate the result. Callers needing only some definitions should
// use DefinitionsReachableFrom, which builds only those.
func Definitions() map[string]*spec.Schema {
	return allV3Definitions()
}

var allV3Definitions = sync.OnceValue(func() map[string]*spec.Schema { return generatedV3.all() })

// DefinitionsReachableFrom returns the named generated definitions and every
// definition they refer to, directly or not, in the form Definitions has
// (each schema equal to Definitions()[name]); unknown names are skipped.
// They are built for this call and not kept, so a caller that keeps only
// what it derives from them (a type converter for one kind) holds memory in
// proportion to that kind. Callers must not mutate the result.
func DefinitionsReachableFrom(names ...string) map[string]*spec.Schema {
	ref := refCallback(v3RefPrefix)
	return closure(names, func(name string) (*spec.Schema, []string) {
		rendered, ok := renderDefinition(v3RefPrefix, ref, name)
		if !ok {
			return nil, nil
		}
		return rendered.schema, rendered.dependencies
	})
}

// KindDefinitionName returns the name of the generated definition whose
// x-kubernetes-group-version-kind lists gvk, e.g. io.k8s.api.core.v1.ConfigMap
// for /v1, Kind=ConfigMap.
func KindDefinitionName(gvk apischema.GroupVersionKind) (string, bool) {
	name, ok := definitionsByKind()[gvk]
	return name, ok
}

var definitionsByKind = sync.OnceValue(indexDefinitionsByKind)

func indexDefinitionsByKind() map[apischema.GroupVersionKind]string {
	generators := definitionGenerators()
	byKind := map[apischema.GroupVersionKind]string{}
	for name, kinds := range kindsByDefinition() {
		if _, generated := generators[name]; !generated {
			continue // only generated definitions carry the extension
		}
		for _, k := range kinds {
			entry := k.(map[string]interface{})
			gvk := apischema.GroupVersionKind{Group: entry["group"].(string), Version: entry["version"].(string), Kind: entry["kind"].(string)}
			byKind[gvk] = name
		}
	}
	return byKind
}

// definitionGenerators indexes the generated builder functions by Kubernetes
// name. Only the index is built here: a definition is built when looked up.
var definitionGenerators = sync.OnceValue(indexDefinitionGenerators)

func indexDefinitionGenerators() map[string]func(common.ReferenceCallback) common.OpenAPIDefinition {
	funcs := openAPIDefinitionFuncs()
	byName := make(map[string]func(common.ReferenceCallback) common.OpenAPIDefinition, len(funcs))
	for key, generate := range funcs {
		byName[definitionName(key)] = generate
	}
	return byName
}

// kindsByDefinition is shared by both renderings and every lookup; building
// it registers every served group version in a scheme, which is not cheap.
var kindsByDefinition = sync.OnceValue(groupVersionKindsByDefinition)

// GetOpenAPIDefinitions builds every generated definition, keyed as
// openapi-gen keys them, as openapi-gen's own GetOpenAPIDefinitions does.
// This package builds definitions one at a time instead.
func GetOpenAPIDefinitions(ref common.ReferenceCallback) map[string]common.OpenAPIDefinition {
	funcs := openAPIDefinitionFuncs()
	definitions := make(map[string]common.OpenAPIDefinition, len(funcs))
	for key, generate := range funcs {
		definitions[key] = generate(ref)
	}
	return definitions
}

// renderedDefinition is one generated definition in one document flavor (v2
// or v3) with its direct dependencies, so documents and type converters can
// take only the closure of what they reference.
type renderedDefinition struct {
	schema       *spec.Schema
	dependencies []string
	json         []byte // json.Marshal(schema), once a v3 document needed it
}

func refCallback(refPrefix string) common.ReferenceCallback {
	return func(goOrModelName string) spec.Ref {
		return spec.MustCreateRef(refPrefix + common.EscapeJsonPointer(definitionName(goOrModelName)))
	}
}

// renderDefinition builds the named definition for the flavor of refPrefix.
func renderDefinition(refPrefix string, ref common.ReferenceCallback, name string) (renderedDefinition, bool) {
	generate, ok := definitionGenerators()[name]
	if !ok {
		return renderedDefinition{}, false
	}
	definition := generate(ref)
	schema := definition.Schema
	if refPrefix == v2RefPrefix {
		schema = v2Form(schema)
	} else {
		schema = *v3Form(&schema)
	}
	if kinds, ok := kindsByDefinition()[name]; ok {
		schema.Extensions = withExtension(schema.Extensions, extensionGroupVersionKind, kinds)
	}
	dependencies := make([]string, 0, len(definition.Dependencies))
	for _, dependency := range definition.Dependencies {
		dependencies = append(dependencies, definitionName(dependency))
	}
	return renderedDefinition{schema: &schema, dependencies: dependencies}, true
}

// definitionCache holds the definitions of one flavor built so far, for the
// documents: a document builds only the closure of what its paths reference,
// so serving one group version does not build all ~600 definitions.
type definitionCache struct {
	refPrefix string
	ref       common.ReferenceCallback

	mu       sync.Mutex
	rendered map[string]renderedDefinition
}

func newDefinitionCache(refPrefix string) *definitionCache {
	return &definitionCache{refPrefix: refPrefix, ref: refCallback(refPrefix), rendered: map[string]renderedDefinition{}}
}

// The two renderings are built independently so a process that only serves v3
// (kubectl 1.32's default) never pays for v2 and vice versa.
var (
	generatedV2 = newDefinitionCache(v2RefPrefix)
	generatedV3 = newDefinitionCache(v3RefPrefix)
)

// has reports whether name is a generated definition, without building it.
func (c *definitionCache) has(name string) bool {
	_, ok := definitionGenerators()[name]
	return ok
}

// lookup returns name's definition and direct dependencies, building and
// keeping it on first use; nil for a name that is not generated.
func (c *definitionCache) lookup(name string) (*spec.Schema, []string) {
	c.mu.Lock()
	defer c.mu.Unlock()
	rendered, _ := c.renderedLocked(name)
	return rendered.schema, rendered.dependencies
}

// lookupJSON is lookup with the definition as json.Marshal writes it,
// marshalled on first use and kept: each v3 document of custom resources
// splices the same ObjectMeta, Status... (nil for a name that is not
// generated).
func (c *definitionCache) lookupJSON(name string) ([]byte, []string, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	rendered, ok := c.renderedLocked(name)
	if !ok || rendered.json != nil {
		return rendered.json, rendered.dependencies, nil
	}
	data, err := json.Marshal(rendered.schema)
	if err != nil {
		return nil, nil, err
	}
	rendered.json = data
	c.rendered[name] = rendered
	return rendered.json, rendered.dependencies, nil
}

func (c *definitionCache) renderedLocked(name string) (renderedDefinition, bool) {
	rendered, ok := c.rendered[name]
	if !ok {
		if rendered, ok = renderDefinition(c.refPrefix, c.ref, name); !ok {
			return renderedDefinition{}, false
		}
		c.rendered[name] = rendered
	}
	return rendered, true
}

// all builds every generated definition and returns them by name.
func (c *definitionCache) all() map[string]*spec.Schema {
	generators := definitionGenerators()
	schemas := make(map[string]*spec.Schema, len(generators))
	for name := range generators {
		schemas[name], _ = c.lookup(name)
	}
	return schemas
}

// v2Form mirrors kube-apiserver's v2 output: types with a v3-only shape
// (IntOrString, Quantity) carry their swagger 2.0 shape in an extension, and
// defaults are pruned because v2 clients mis-handle them.
func v2Form(schema spec.Schema) spec.Schema {
	if embedded, ok := schema.Extensions[common.ExtensionV2Schema].(spec.Schema); ok {
		schema = embedded
	}
	return *handler.PruneDefaultsSchema(&schema)
}

// v3Form drops the embedded v2 shape and wraps refs that have siblings in
// allOf, as OpenAPI 3.0 ignores siblings of $ref.
func v3Form(schema *spec.Schema) *spec.Schema {
	if _, ok := schema.Extensions[common.ExtensionV2Schema]; ok {
		clone := *schema
		clone.Extensions = make(spec.Extensions, len(schema.Extensions))
		for k, v := range schema.Extensions {
			if k != common.ExtensionV2Schema {
				clone.Extensions[k] = v
			}
		}
		schema = &clone
	}
	return builderutil.WrapRefs(schema)
}

func withExtension(extensions spec.Extensions, key string, value interface{}) spec.Extensions {
	clone := make(spec.Extensions, len(extensions)+1)
	for k, v := range extensions {
		clone[k] = v
	}
	clone[key] = value
	return clone
}

// definitionName turns a generator key into the name kube-apiserver publishes.
// openapi-gen already keys types of packages tagged with
// +k8s:openapi-model-package by their model name; anything keyed by Go path
// (k8s.io/api/apps/v1.Deployment) is reversed into io.k8s.api.apps.v1.Deployment.
func definitionName(key string) string {
	if !strings.Contains(key, "/") {
		return key
	}
	if i := strings.LastIndex(key, "/vendor/"); i >= 0 {
		key = key[i+len("/vendor/"):]
	}
	return util.ToRESTFriendlyName(strings.TrimPrefix(key, "vendor/"))
}

// servedSchemeBuilders registers every group version whose types are
// generated, so the scheme says which definitions are kinds and under which
// group versions (meta types such as DeleteOptions belong to all of them).
var servedSchemeBuilders = []func(*runtime.Scheme) error{builtin.AddAPIGroups, apiextensionsv1.AddToScheme}

// groupVersionKindsByDefinition returns the x-kubernetes-group-version-kind
// value for every definition that is a kind, sorted like kube-apiserver's.
func groupVersionKindsByDefinition() map[string][]interface{} {
	scheme := runtime.NewScheme()
	for _, addToScheme := range servedSchemeBuilders {
		if err := addToScheme(scheme); err != nil {
			panic(err) // static registrations; failing here is a programming error
		}
	}
	type gvk struct{ group, version, kind string }
	kindsByName := map[string][]gvk{}
	for groupVersionKind, goType := range scheme.AllKnownTypes() {
		if groupVersionKind.Version == runtime.APIVersionInternal {
			continue
		}
		name := definitionName(util.GetCanonicalTypeName(reflect.New(goType).Interface()))
		entry := gvk{groupVersionKind.Group, groupVersionKind.Version, groupVersionKind.Kind}
		duplicate := false
		for _, existing := range kindsByName[name] {
			duplicate = duplicate || existing == entry
		}
		if !duplicate {
			kindsByName[name] = append(kindsByName[name], entry)
		}
	}
	result := make(map[string][]interface{}, len(kindsByName))
	for name, kinds := range kindsByName {
		sort.Slice(kinds, func(i, j int) bool {
			a, b := kinds[i], kinds[j]
			if a.group != b.group {
				return a.group < b.group
			}
			if a.version != b.version {
				return a.version < b.version
			}
			return a.kind < b.kind
		})
		values := make([]interface{}, 0, len(kinds))
		for _, k := range kinds {
			values = append(values, map[string]interface{}{"group": k.group, "version": k.version, "kind": k.kind})
		}
		result[name] = values
	}
	return result
}

// refTarget returns the definition name a local ref points at, for either
// document flavor, or "" for a non-local ref.
func refTarget(ref spec.Ref) string {
	pointer := ref.String()
	for _, prefix := range []string{v2RefPrefix, v3RefPrefix} {
		if strings.HasPrefix(pointer, prefix) {
			return unescapeJSONPointer(strings.TrimPrefix(pointer, prefix))
		}
	}
	return ""
}

func unescapeJSONPointer(s string) string {
	return strings.ReplaceAll(strings.ReplaceAll(s, "~1", "/"), "~0", "~")
}

// rewriteRefs points every local ref of a caller-supplied schema at refPrefix,
// so custom resource schemas may be written in either document flavor.
func rewriteRefs(schema *spec.Schema, refPrefix string) *spec.Schema {
	walker := schemamutation.Walker{
		SchemaCallback: schemamutation.SchemaCallBackNoop,
		RefCallback: func(ref *spec.Ref) *spec.Ref {
			target := refTarget(*ref)
			if target == "" || ref.String() == refPrefix+common.EscapeJsonPointer(target) {
				return ref
			}
			rewritten := spec.MustCreateRef(refPrefix + common.EscapeJsonPointer(target))
			return &rewritten
		},
	}
	return walker.WalkSchema(schema)
}

// referencedDefinitions lists the definitions a schema refers to directly.
func referencedDefinitions(schema *spec.Schema) []string {
	var names []string
	walker := schemamutation.Walker{
		SchemaCallback: schemamutation.SchemaCallBackNoop,
		RefCallback: func(ref *spec.Ref) *spec.Ref {
			if target := refTarget(*ref); target != "" {
				names = append(names, target)
			}
			return ref
		},
	}
	walker.WalkSchema(schema)
	return names
}

// definitionResolver combines the generated definitions with caller-supplied
// ones (custom resources) in one document flavor. Supplied definitions win on
// a name clash.
type definitionResolver struct {
	generated *definitionCache
	extra     SuppliedDefinitions
	refPrefix string
	converted map[string]*spec.Schema // extra schemas rendered for this flavor
}

func newDefinitionResolver(refPrefix string, extra SuppliedDefinitions) *definitionResolver {
	generated := generatedV3
	if refPrefix == v2RefPrefix {
		generated = generatedV2
	}
	return &definitionResolver{generated: generated, extra: extra, refPrefix: refPrefix, converted: map[string]*spec.Schema{}}
}

func (r *definitionResolver) has(name string) bool {
	if _, ok := r.extra[name]; ok {
		return true
	}
	return r.generated.has(name)
}

func (r *definitionResolver) isGenerated(name string) bool {
	_, isExtra := r.extra[name]
	return r.generated.has(name) && !isExtra
}

func (r *definitionResolver) lookup(name string) (*spec.Schema, []string) {
	if _, ok := r.extra[name]; ok {
		converted, ok := r.converted[name]
		if !ok {
			converted = r.convert(name)
			r.converted[name] = converted
		}
		if converted == nil {
			return nil, nil
		}
		return converted, referencedDefinitions(converted)
	}
	return r.generated.lookup(name)
}

// lookupJSON is lookup with the definition as json.Marshal writes it.
func (r *definitionResolver) lookupJSON(name string) ([]byte, []string, error) {
	if _, ok := r.extra[name]; !ok {
		return r.generated.lookupJSON(name)
	}
	schema, dependencies := r.lookup(name)
	if schema == nil {
		return nil, nil, nil
	}
	data, err := json.Marshal(schema)
	return data, dependencies, err
}

// convert builds a supplied definition in the resolver's flavor.
func (r *definitionResolver) convert(name string) *spec.Schema {
	build := r.extra[name].Schema
	if r.refPrefix == v2RefPrefix && r.extra[name].V2 != nil {
		build = r.extra[name].V2
	}
	supplied := build()
	if supplied == nil {
		return nil
	}
	converted := rewriteRefs(supplied, r.refPrefix)
	if r.refPrefix == v3RefPrefix {
		converted = v3Form(converted)
	}
	return converted
}

// prefetch builds the supplied definitions among names on all processors,
// for lookup to find: a group version of ten large CRDs is built in a
// fraction of the time one after the other takes.
func (r *definitionResolver) prefetch(names []string) {
	var pending []string
	for _, name := range names {
		_, supplied := r.extra[name]
		_, done := r.converted[name]
		if supplied && !done && !slices.Contains(pending, name) {
			pending = append(pending, name)
		}
	}
	converted := make([]*spec.Schema, len(pending))
	_ = parallel(len(pending), func(i int) error { // convert reports no errors
		converted[i] = r.convert(pending[i])
		return nil
	})
	for i, name := range pending {
		r.converted[name] = converted[i]
	}
}

// closure returns the named definitions and everything they reference,
// skipping names that resolve to nothing.
func (r *definitionResolver) closure(roots []string) map[string]*spec.Schema {
	return closure(roots, r.lookup)
}

// closure returns the roots and every definition they reach through the
// dependencies lookup reports, skipping names it resolves to nil.
func closure(roots []string, lookup func(name string) (*spec.Schema, []string)) map[string]*spec.Schema {
	result := map[string]*spec.Schema{}
	_ = walkClosure(roots, func(name string) ([]string, error) {
		schema, dependencies := lookup(name)
		if schema == nil {
			return nil, nil
		}
		result[name] = schema
		return dependencies, nil
	})
	return result
}

// walkClosure visits each root and every name a visit reports as a
// dependency, once each, depth first; it stops at the first error.
func walkClosure(roots []string, visit func(name string) (dependencies []string, err error)) error {
	pending := slices.Clone(roots)
	seen := map[string]bool{}
	for len(pending) > 0 {
		name := pending[len(pending)-1]
		pending = pending[:len(pending)-1]
		if seen[name] {
			continue
		}
		seen[name] = true
		dependencies, err := visit(name)
		if err != nil {
			return err
		}
		pending = append(pending, dependencies...)
	}
	return nil
}
