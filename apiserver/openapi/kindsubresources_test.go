package openapi

import (
	"slices"
	"testing"
)

// Subresources that read and write the resource's own kind are described
// with their own verbs and kube's operation ids: namespaces/finalize takes
// PUT alone, pods/ephemeralcontainers get, put and patch. Subresources of
// other kinds are left out.
func TestKindSubresourceRoutes(t *testing.T) {
	namespaces := Resource{Version: "v1", Resource: "namespaces", Kind: "Namespace", ListKind: "NamespaceList",
		Verbs: []string{"create", "delete", "get", "list", "patch", "update", "watch"}, Subresources: []string{"status", "finalize"},
		KindSubresources: map[string][]string{"finalize": {"update"}}, DefinitionName: "io.k8s.api.core.v1.Namespace"}
	pods := Resource{Version: "v1", Resource: "pods", Kind: "Pod", ListKind: "PodList", Namespaced: true, Verbs: allVerbs,
		Subresources:     []string{"status", "binding", "ephemeralcontainers", "exec"},
		KindSubresources: map[string][]string{"ephemeralcontainers": {"get", "patch", "update"}}, DefinitionName: "io.k8s.api.core.v1.Pod"}
	ops := map[string][]string{}
	for _, r := range append(routesFor(namespaces, "", true), routesFor(pods, "", true)...) {
		for _, o := range r.operations {
			ops[r.path] = append(ops[r.path], o.method+" "+o.id)
		}
	}
	want := map[string][]string{
		"/api/v1/namespaces/{name}/finalize": {"put replaceCoreV1NamespaceFinalize"},
		"/api/v1/namespaces/{name}/status":   {"get readCoreV1NamespaceStatus", "put replaceCoreV1NamespaceStatus", "patch patchCoreV1NamespaceStatus"},
		"/api/v1/namespaces/{namespace}/pods/{name}/ephemeralcontainers": {"get readCoreV1NamespacedPodEphemeralcontainers",
			"put replaceCoreV1NamespacedPodEphemeralcontainers", "patch patchCoreV1NamespacedPodEphemeralcontainers"},
	}
	for path, w := range want {
		if !slices.Equal(ops[path], w) {
			t.Errorf("%s: %v, want %v", path, ops[path], w)
		}
	}
	for _, path := range []string{"/api/v1/namespaces/{namespace}/pods/{name}/binding", "/api/v1/namespaces/{namespace}/pods/{name}/exec"} {
		if _, ok := ops[path]; ok {
			t.Errorf("%s described: %v", path, ops[path])
		}
	}
}
