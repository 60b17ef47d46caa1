package openapi

import (
	"slices"
	"strings"
	"unicode"
)

// Patch content types, as kube-apiserver lists them on PATCH operations.
const (
	PatchTypeJSON           = "application/json-patch+json"
	PatchTypeMerge          = "application/merge-patch+json"
	PatchTypeStrategicMerge = "application/strategic-merge-patch+json"
	PatchTypeApplyYAML      = "application/apply-patch+yaml"
)

var defaultPatchTypes = []string{PatchTypeJSON, PatchTypeMerge, PatchTypeStrategicMerge, PatchTypeApplyYAML}

const (
	metaV1            = "io.k8s.apimachinery.pkg.apis.meta.v1."
	statusDefinition  = metaV1 + "Status"
	deleteOptionsDef  = metaV1 + "DeleteOptions"
	watchEventDef     = metaV1 + "WatchEvent"
	patchDefinition   = metaV1 + "Patch"
	scaleDefinition   = "io.k8s.api.autoscaling.v1.Scale"
	mediaJSON         = "application/json"
	mediaYAML         = "application/yaml"
	mediaProtobuf     = "application/vnd.kubernetes.protobuf"
	mediaJSONWatch    = "application/json;stream=watch"
	mediaProtoWatch   = "application/vnd.kubernetes.protobuf;stream=watch"
	mediaAnyForUpload = "*/*"
)

// parameter is one operation or path parameter, rendered to v2 or v3 later.
type parameter struct {
	name, in, typeName, description string
	required                        bool
}

func queryParameter(name, typeName, description string) parameter {
	return parameter{name: name, in: "query", typeName: typeName, description: description}
}

// Query parameters that kube-apiserver accepts. kubectl looks for
// fieldValidation on PATCH operations to decide that the server validates
// fields, so it must be present on every write operation.
var (
	paramPretty               = queryParameter("pretty", "string", "If 'true', the output is pretty printed. Defaults to 'false' unless the user-agent indicates a browser or command-line HTTP tool (curl and wget).")
	paramDryRun               = queryParameter("dryRun", "string", "When present, modifications are not persisted. An invalid or unrecognized value is an error. Valid value: All (process every dry-run stage).")
	paramFieldManager         = queryParameter("fieldManager", "string", "Name of the actor making the change, used to track field ownership. At most 128 printable characters. Required for apply patches, optional otherwise.")
	paramFieldValidation      = queryParameter("fieldValidation", "string", "How the server handles unknown or duplicate fields in the request body. Ignore drops them silently, Warn drops them and returns a warning per field (default), Strict fails the request on the first one.")
	paramForce                = queryParameter("force", "boolean", "Force the apply request to take ownership of conflicting fields. Only valid (and required to resolve conflicts) for apply patches.")
	paramAllowWatchBookmarks  = queryParameter("allowWatchBookmarks", "boolean", "Ask the server to send BOOKMARK watch events. Servers may ignore the request. Ignored unless watch is set.")
	paramContinue             = queryParameter("continue", "string", "Opaque token from a previous paged list response to fetch the next page with the same query parameters.")
	paramFieldSelector        = queryParameter("fieldSelector", "string", "Restrict the returned objects by their fields. Defaults to everything.")
	paramLabelSelector        = queryParameter("labelSelector", "string", "Restrict the returned objects by their labels. Defaults to everything.")
	paramLimit                = queryParameter("limit", "integer", "Maximum number of items in a list response; when more exist, the response carries a continue token for the next page.")
	paramResourceVersion      = queryParameter("resourceVersion", "string", "Constrains which resource versions the request may be served from. Defaults to unset (most recent).")
	paramResourceVersionMatch = queryParameter("resourceVersionMatch", "string", "How resourceVersion is applied to list calls: Exact or NotOlderThan. Defaults to unset.")
	paramSendInitialEvents    = queryParameter("sendInitialEvents", "boolean", "With watch=true, start the stream with synthetic events for the current state of the objects, followed by a bookmark event.")
	paramTimeoutSeconds       = queryParameter("timeoutSeconds", "integer", "Limit on the duration of the list or watch call, regardless of activity.")
	paramWatch                = queryParameter("watch", "boolean", "Watch for changes to the described resources and return them as a stream of add, update and remove notifications.")
	paramGracePeriodSeconds   = queryParameter("gracePeriodSeconds", "integer", "Seconds before the object should be deleted; must be non-negative. Zero means delete immediately. Unset uses the type's default.")
	paramIgnoreStoreReadError = queryParameter("ignoreStoreReadErrorWithClusterBreakingPotential", "boolean", "Delete objects that cannot be read from storage (corrupt or undecryptable). Dangerous: skips finalizers and may break the cluster.")
	paramOrphanDependents     = queryParameter("orphanDependents", "boolean", "Deprecated: use propagationPolicy. Whether dependents are orphaned.")
	paramPropagationPolicy    = queryParameter("propagationPolicy", "string", "Whether and how garbage collection handles dependents: Orphan, Background or Foreground.")

	paramName      = parameter{name: "name", in: "path", typeName: "string", required: true, description: "name of the object"}
	paramNamespace = parameter{name: "namespace", in: "path", typeName: "string", required: true, description: "object name and auth scope, such as for teams and projects"}
)

var (
	listParameters = []parameter{paramAllowWatchBookmarks, paramContinue, paramFieldSelector, paramLabelSelector,
		paramLimit, paramResourceVersion, paramResourceVersionMatch, paramSendInitialEvents, paramTimeoutSeconds, paramWatch}
	writeParameters        = []parameter{paramDryRun, paramFieldManager, paramFieldValidation}
	patchParameters        = []parameter{paramDryRun, paramFieldManager, paramFieldValidation, paramForce}
	deleteParameters       = []parameter{paramDryRun, paramGracePeriodSeconds, paramIgnoreStoreReadError, paramOrphanDependents, paramPropagationPolicy}
	deleteCollectionParams = []parameter{paramContinue, paramDryRun, paramFieldSelector, paramGracePeriodSeconds,
		paramIgnoreStoreReadError, paramLabelSelector, paramLimit, paramOrphanDependents, paramPropagationPolicy,
		paramResourceVersion, paramResourceVersionMatch, paramSendInitialEvents, paramTimeoutSeconds}
)

type response struct {
	code        int
	description string
	definition  string // "" when the response has no schema
}

// operation is one HTTP method on one path, independent of the OpenAPI version.
type operation struct {
	method      string // lower case: get put post patch delete
	id          string
	action      string // x-kubernetes-action
	description string
	kind        groupVersionKind
	parameters  []parameter
	body        string   // definition name of the request body, "" for none
	consumes    []string // request content types when there is a body
	produces    []string
	responses   []response
	tag         string
}

type groupVersionKind struct{ group, version, kind string }

func (k groupVersionKind) extension() map[string]interface{} {
	return map[string]interface{}{"group": k.group, "version": k.version, "kind": k.kind}
}

type route struct {
	path       string
	parameters []parameter
	operations []operation
}

// groupVersionPath is the URL prefix of a group version without the leading
// slash, which is also its key in the v3 index: "api/v1", "apis/apps/v1".
func groupVersionPath(group, version string) string {
	if group == "" {
		return "api/" + version
	}
	return "apis/" + group + "/" + version
}

// operationIDGroupVersion is the group-version part of kube's operation IDs:
// "" → Core, rbac.authorization.k8s.io → RbacAuthorization, stable.example.com
// → StableExampleCom, then the version: V1, V2beta1.
func operationIDGroupVersion(group, version string) string {
	if group == "" {
		group = "core"
	}
	group = strings.TrimSuffix(group, ".k8s.io")
	var b strings.Builder
	for _, part := range strings.FieldsFunc(group, func(r rune) bool { return r == '.' || r == '-' }) {
		b.WriteString(upperFirst(part))
	}
	b.WriteString(upperFirst(version))
	return b.String()
}

// operationTag groups operations like kube does: core_v1, rbacAuthorization_v1.
func operationTag(group, version string) string {
	groupVersion := operationIDGroupVersion(group, "")
	return lowerFirst(groupVersion) + "_" + version
}

func upperFirst(s string) string {
	if s == "" {
		return s
	}
	r := []rune(s)
	r[0] = unicode.ToUpper(r[0])
	return string(r)
}

func lowerFirst(s string) string {
	if s == "" {
		return s
	}
	r := []rune(s)
	r[0] = unicode.ToLower(r[0])
	return string(r)
}

func hasString(list []string, want string) bool {
	for _, s := range list {
		if s == want {
			return true
		}
	}
	return false
}

// listDefinitionName derives the list kind's definition from the kind's:
// io.k8s.api.apps.v1.Deployment → io.k8s.api.apps.v1.DeploymentList.
func listDefinitionName(r Resource) string {
	if r.ListKind == "" {
		return r.DefinitionName + "List"
	}
	return strings.TrimSuffix(r.DefinitionName, r.Kind) + r.ListKind
}

// Parameter and media type lists the routes share, read-only: building
// them per resource was much of what laying out hundreds of resources
// allocated.
var (
	clusterScope    = []parameter{paramPretty}
	namespacedScope = []parameter{paramNamespace, paramPretty}

	// By namespaced (0: cluster scoped, 1: namespaced).
	pathScopes      = [2][]parameter{clusterScope, namespacedScope}
	itemScopes      = [2][]parameter{{paramName, paramPretty}, {paramName, paramNamespace, paramPretty}}
	watchScopes     = [2][]parameter{slices.Concat(listParameters, clusterScope), slices.Concat(listParameters, namespacedScope)}
	watchItemScopes = [2][]parameter{
		slices.Concat([]parameter{paramName}, listParameters, clusterScope),
		slices.Concat([]parameter{paramName}, listParameters, namespacedScope),
	}

	// By builtin (0: custom resources, 1: built-in, which speak protobuf).
	produceTypes = [2][]string{{mediaJSON, mediaYAML}, {mediaJSON, mediaYAML, mediaProtobuf}}
	streamTypes  = [2][]string{{mediaJSON, mediaYAML, mediaJSONWatch}, {mediaJSON, mediaYAML, mediaProtobuf, mediaJSONWatch, mediaProtoWatch}}

	consumeAny = []string{mediaAnyForUpload}

	okStatus            = okResponses(statusDefinition)
	okWatchEvent        = okResponses(watchEventDef)
	acceptedStatus      = []response{{200, "OK", statusDefinition}, {202, "Accepted", statusDefinition}, {401, "Unauthorized", ""}}
	createdScale        = []response{{200, "OK", scaleDefinition}, {201, "Created", scaleDefinition}, {401, "Unauthorized", ""}}
	okScale             = okResponses(scaleDefinition)
	scaleKind           = groupVersionKind{"autoscaling", "v1", "Scale"}
	routeSubresourceSet = [...]string{"status", "scale"}
)

func okResponses(definition string) []response {
	return []response{{200, "OK", definition}, {401, "Unauthorized", ""}}
}

// routesFor lays out a resource's paths and operations the way kube-apiserver
// does. builtin resources also speak protobuf; custom resources do not.
func routesFor(r Resource, listDefinition string, builtin bool) []route {
	return appendRoutesFor(nil, r, listDefinition, builtin)
}

// appendRoutesFor appends routesFor's routes to routes. A resource's
// operations share one array, and its responses another; the lists that
// do not depend on it are shared by all.
func appendRoutesFor(routes []route, r Resource, listDefinition string, builtin bool) []route {
	prefix := "/" + groupVersionPath(r.Group, r.Version)
	idGroupVersion := operationIDGroupVersion(r.Group, r.Version)
	tag := operationTag(r.Group, r.Version)
	kind := groupVersionKind{r.Group, r.Version, r.Kind}
	can := func(verb string) bool { return hasString(r.Verbs, verb) }
	count := func(verbs ...string) int {
		n := 0
		for _, verb := range verbs {
			if can(verb) {
				n++
			}
		}
		return n
	}

	form := 0
	if builtin {
		form = 1
	}
	produces, streams := produceTypes[form], streamTypes[form]
	patchTypes := r.PatchTypes
	if patchTypes == nil {
		patchTypes = defaultPatchTypes
	}

	scope, namespacedPrefix, namespaced := "", prefix, 0
	if r.Namespaced {
		scope = "Namespaced"
		namespacedPrefix = prefix + "/namespaces/{namespace}"
		namespaced = 1
	}
	pathScope, itemScope := pathScopes[namespaced], itemScopes[namespaced]
	collectionPath := namespacedPrefix + "/" + r.Resource
	itemPath := collectionPath + "/{name}"

	// Every operation of the resource, in one array each route takes its
	// run of.
	subresources := 0
	for _, subresource := range r.Subresources {
		if slices.Contains(routeSubresourceSet[:], subresource) {
			subresources++
		}
	}
	n := count("list", "create", "deletecollection") + count("get", "update", "delete", "patch") +
		subresources*count("get", "update", "patch")
	if r.Namespaced && can("list") {
		n++
	}
	if can("watch") {
		n += 2 + namespaced
	}
	operations := make([]operation, 0, n)
	add := func(op operation) { operations = append(operations, op) }
	// taken returns the operations added since mark.
	taken := func(mark int) []operation { return operations[mark:len(operations):len(operations)] }
	if routes == nil {
		routes = make([]route, 0, 6+subresources)
	}

	// The responses naming the resource's definitions, in one array.
	responses := make([]response, 0, 11)
	respond := func(list ...response) []response {
		mark := len(responses)
		responses = append(responses, list...)
		return responses[mark:len(responses):len(responses)]
	}
	var okKind, createdKind, acceptedKind, okList []response
	if can("get") {
		okKind = respond(response{200, "OK", r.DefinitionName}, response{401, "Unauthorized", ""})
	}
	if can("update") || can("patch") {
		createdKind = respond(response{200, "OK", r.DefinitionName}, response{201, "Created", r.DefinitionName}, response{401, "Unauthorized", ""})
	}
	if can("create") {
		acceptedKind = respond(response{200, "OK", r.DefinitionName}, response{201, "Created", r.DefinitionName},
			response{202, "Accepted", r.DefinitionName}, response{401, "Unauthorized", ""})
	}
	if can("list") {
		okList = respond(response{200, "OK", listDefinition}, response{401, "Unauthorized", ""})
	}

	newOperation := func(method, verbPrefix, suffix, action, description string) operation {
		return operation{
			method: method, id: verbPrefix + idGroupVersion + scope + r.Kind + suffix, action: action,
			description: description, kind: kind, produces: produces, tag: tag,
		}
	}

	mark := len(operations)
	if can("list") {
		list := newOperation("get", "list", "", "list", "list or watch objects of kind "+r.Kind)
		list.parameters, list.produces, list.responses = listParameters, streams, okList
		add(list)
	}
	if can("create") {
		create := newOperation("post", "create", "", "post", "create "+articleFor(r.Kind))
		create.parameters, create.body, create.consumes = writeParameters, r.DefinitionName, consumeAny
		create.responses = acceptedKind
		add(create)
	}
	if can("deletecollection") {
		add(operation{
			method: "delete", id: "delete" + idGroupVersion + "Collection" + scope + r.Kind, action: "deletecollection",
			description: "delete collection of " + r.Kind, kind: kind, produces: produces, tag: tag,
			parameters: deleteCollectionParams, body: deleteOptionsDef, consumes: consumeAny,
			responses: okStatus,
		})
	}
	if len(operations) > mark {
		routes = append(routes, route{path: collectionPath, parameters: pathScope, operations: taken(mark)})
	}

	mark = len(operations)
	if can("get") {
		read := newOperation("get", "read", "", "get", "read the specified "+r.Kind)
		read.responses = okKind
		add(read)
	}
	if can("update") {
		replace := newOperation("put", "replace", "", "put", "replace the specified "+r.Kind)
		replace.parameters, replace.body, replace.consumes = writeParameters, r.DefinitionName, consumeAny
		replace.responses = createdKind
		add(replace)
	}
	if can("delete") {
		remove := newOperation("delete", "delete", "", "delete", "delete "+articleFor(r.Kind))
		remove.parameters, remove.body, remove.consumes = deleteParameters, deleteOptionsDef, consumeAny
		remove.responses = acceptedStatus
		add(remove)
	}
	if can("patch") {
		patch := newOperation("patch", "patch", "", "patch", "partially update the specified "+r.Kind)
		patch.parameters, patch.body, patch.consumes = patchParameters, patchDefinition, patchTypes
		patch.responses = createdKind
		add(patch)
	}
	if len(operations) > mark {
		routes = append(routes, route{path: itemPath, parameters: itemScope, operations: taken(mark)})
	}

	// Status and scale follow the parent's get/update/patch verbs, as in
	// kube; the other subresources of the kind have verbs of their own.
	parentCan := can
	for _, subresource := range r.Subresources {
		definition, subKind, suffix := r.DefinitionName, kind, upperFirst(subresource)
		okSub, createdSub := okKind, createdKind
		can = parentCan
		switch subresource {
		case "status":
		case "scale":
			definition, subKind, okSub, createdSub = scaleDefinition, scaleKind, okScale, createdScale
		default:
			verbs, ok := r.KindSubresources[subresource]
			if !ok {
				continue
			}
			can = func(verb string) bool { return hasString(verbs, verb) }
		}
		mark = len(operations)
		if can("get") {
			read := newOperation("get", "read", suffix, "get", "read "+subresource+" of the specified "+r.Kind)
			read.kind, read.responses = subKind, okSub
			add(read)
		}
		if can("update") {
			replace := newOperation("put", "replace", suffix, "put", "replace "+subresource+" of the specified "+r.Kind)
			replace.kind, replace.parameters, replace.body, replace.consumes = subKind, writeParameters, definition, consumeAny
			replace.responses = createdSub
			add(replace)
		}
		if can("patch") {
			patch := newOperation("patch", "patch", suffix, "patch", "partially update "+subresource+" of the specified "+r.Kind)
			patch.kind, patch.parameters, patch.body, patch.consumes = subKind, patchParameters, patchDefinition, patchTypes
			patch.responses = createdSub
			add(patch)
		}
		if len(operations) > mark {
			routes = append(routes, route{path: itemPath + "/" + subresource, parameters: itemScope, operations: taken(mark)})
		}
	}

	if r.Namespaced && can("list") {
		mark = len(operations)
		add(operation{
			method: "get", id: "list" + idGroupVersion + r.Kind + "ForAllNamespaces", action: "list",
			description: "list or watch objects of kind " + r.Kind, kind: kind, produces: streams, tag: tag,
			parameters: listParameters, responses: okList,
		})
		routes = append(routes, route{path: prefix + "/" + r.Resource, parameters: clusterScope, operations: taken(mark)})
	}

	if can("watch") {
		// kube still publishes the deprecated /watch/ paths; clients such as
		// kubectl explain and code generators key off them.
		watchPrefix := prefix + "/watch"
		if r.Namespaced {
			watchPrefix += "/namespaces/{namespace}"
		}
		mark = len(operations)
		watchList := newOperation("get", "watch", "List", "watchlist", "watch individual changes to a list of "+r.Kind)
		watchList.produces, watchList.responses = streams, okWatchEvent
		add(watchList)
		routes = append(routes, route{path: watchPrefix + "/" + r.Resource, parameters: watchScopes[namespaced], operations: taken(mark)})

		mark = len(operations)
		watchItem := newOperation("get", "watch", "", "watch", "watch changes to an object of kind "+r.Kind)
		watchItem.produces, watchItem.responses = streams, okWatchEvent
		add(watchItem)
		routes = append(routes, route{path: watchPrefix + "/" + r.Resource + "/{name}",
			parameters: watchItemScopes[namespaced], operations: taken(mark)})

		if r.Namespaced {
			mark = len(operations)
			add(operation{
				method: "get", id: "watch" + idGroupVersion + r.Kind + "ListForAllNamespaces", action: "watchlist",
				description: "watch individual changes to a list of " + r.Kind, kind: kind, produces: streams, tag: tag,
				responses: okWatchEvent,
			})
			routes = append(routes, route{path: prefix + "/watch/" + r.Resource, parameters: watchScopes[0], operations: taken(mark)})
		}
	}
	return routes
}

func articleFor(kind string) string {
	if kind != "" && strings.ContainsRune("AEIOU", rune(kind[0])) {
		return "an " + kind
	}
	return "a " + kind
}

// referencedByRoutes lists the definitions the operations of routes use.
func referencedByRoutes(routes []route) []string {
	var names []string
	for _, rt := range routes {
		for _, op := range rt.operations {
			if op.body != "" {
				names = append(names, op.body)
			}
			for _, resp := range op.responses {
				if resp.definition != "" {
					names = append(names, resp.definition)
				}
			}
		}
	}
	return names
}
