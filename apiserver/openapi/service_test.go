package openapi

import (
	"bytes"
	"compress/gzip"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"reflect"
	"strings"
	"sync"
	"testing"

	"github.com/devplane/devplane/apiserver/request"
	openapi_v2 "github.com/google/gnostic-models/openapiv2"
	"google.golang.org/protobuf/proto"
	"k8s.io/kube-openapi/pkg/handler3"
	"k8s.io/kube-openapi/pkg/spec3"
	openapiproto "k8s.io/kube-openapi/pkg/util/proto"
	"k8s.io/kube-openapi/pkg/validation/spec"
	"sigs.k8s.io/yaml"
)

const protobufV2 = "application/com.github.proto-openapi.spec.v2@v1.0+protobuf"

var allVerbs = []string{"get", "list", "watch", "create", "update", "patch", "delete", "deletecollection"}

func builtinResources() []Resource {
	return []Resource{
		{Version: "v1", Resource: "configmaps", Kind: "ConfigMap", ListKind: "ConfigMapList", Namespaced: true,
			Verbs: allVerbs, DefinitionName: "io.k8s.api.core.v1.ConfigMap"},
		{Version: "v1", Resource: "namespaces", Kind: "Namespace", ListKind: "NamespaceList",
			Verbs: []string{"get", "list", "watch", "create", "update", "patch", "delete"}, Subresources: []string{"status"},
			DefinitionName: "io.k8s.api.core.v1.Namespace"},
		{Group: "apps", Version: "v1", Resource: "deployments", Kind: "Deployment", ListKind: "DeploymentList", Namespaced: true,
			Verbs: allVerbs, Subresources: []string{"status", "scale"}, DefinitionName: "io.k8s.api.apps.v1.Deployment"},
	}
}

func newTestService(t testing.TB) *Service {
	t.Helper()
	s := NewService("v1.37.0")
	s.Update(builtinResources(), nil)
	return s
}

func get(t testing.TB, handler http.Handler, url string, headers map[string]string) *http.Response {
	t.Helper()
	request := httptest.NewRequest(http.MethodGet, url, nil)
	for k, v := range headers {
		request.Header.Set(k, v)
	}
	recorder := httptest.NewRecorder()
	handler.ServeHTTP(recorder, request)
	return recorder.Result()
}

func readBody(t testing.TB, response *http.Response) []byte {
	t.Helper()
	body, err := io.ReadAll(response.Body)
	if err != nil {
		t.Fatal(err)
	}
	return body
}

func fetchV2JSON(t testing.TB, s *Service) (*spec.Swagger, string) {
	t.Helper()
	response := get(t, s, "/openapi/v2", map[string]string{"Accept": "application/json"})
	if response.StatusCode != http.StatusOK {
		t.Fatalf("GET /openapi/v2: %s", response.Status)
	}
	var swagger spec.Swagger
	if err := json.Unmarshal(readBody(t, response), &swagger); err != nil {
		t.Fatalf("v2 JSON does not parse: %v", err)
	}
	return &swagger, response.Header.Get("Etag")
}

func fetchV2Protobuf(t testing.TB, s *Service) *openapi_v2.Document {
	t.Helper()
	response := get(t, s, "/openapi/v2", map[string]string{"Accept": protobufV2 + ", application/json"})
	if response.StatusCode != http.StatusOK {
		t.Fatalf("GET /openapi/v2 as protobuf: %s", response.Status)
	}
	if contentType := response.Header.Get("Content-Type"); !strings.Contains(contentType, "protobuf") {
		t.Fatalf("Content-Type = %q, want protobuf", contentType)
	}
	document := &openapi_v2.Document{}
	if err := proto.Unmarshal(readBody(t, response), document); err != nil {
		t.Fatalf("v2 protobuf does not decode: %v", err)
	}
	return document
}

func TestV2JSONDocument(t *testing.T) {
	swagger, _ := fetchV2JSON(t, newTestService(t))
	if swagger.Swagger != "2.0" || swagger.Info.Title != "Kubernetes" || swagger.Info.Version != "v1.37.0" {
		t.Errorf("swagger %q info %+v", swagger.Swagger, swagger.Info.InfoProps)
	}
	for _, path := range []string{
		"/api/v1/namespaces/{namespace}/configmaps",
		"/api/v1/namespaces/{namespace}/configmaps/{name}",
		"/api/v1/configmaps",
		"/api/v1/watch/namespaces/{namespace}/configmaps",
		"/api/v1/watch/namespaces/{namespace}/configmaps/{name}",
		"/api/v1/watch/configmaps",
		"/api/v1/namespaces",
		"/api/v1/namespaces/{name}/status",
		"/apis/apps/v1/namespaces/{namespace}/deployments/{name}/status",
		"/apis/apps/v1/namespaces/{namespace}/deployments/{name}/scale",
	} {
		if _, ok := swagger.Paths.Paths[path]; !ok {
			t.Errorf("path %s missing", path)
		}
	}
	operationIDs := map[string]string{
		"/api/v1/namespaces/{namespace}/configmaps":        swagger.Paths.Paths["/api/v1/namespaces/{namespace}/configmaps"].Get.ID,
		"/api/v1/configmaps":                               swagger.Paths.Paths["/api/v1/configmaps"].Get.ID,
		"/api/v1/namespaces/{name}/status":                 swagger.Paths.Paths["/api/v1/namespaces/{name}/status"].Put.ID,
		"/api/v1/watch/namespaces/{namespace}/configmaps":  swagger.Paths.Paths["/api/v1/watch/namespaces/{namespace}/configmaps"].Get.ID,
		"/apis/apps/v1/namespaces/{namespace}/deployments": swagger.Paths.Paths["/apis/apps/v1/namespaces/{namespace}/deployments"].Delete.ID,
	}
	wantIDs := map[string]string{
		"/api/v1/namespaces/{namespace}/configmaps":        "listCoreV1NamespacedConfigMap",
		"/api/v1/configmaps":                               "listCoreV1ConfigMapForAllNamespaces",
		"/api/v1/namespaces/{name}/status":                 "replaceCoreV1NamespaceStatus",
		"/api/v1/watch/namespaces/{namespace}/configmaps":  "watchCoreV1NamespacedConfigMapList",
		"/apis/apps/v1/namespaces/{namespace}/deployments": "deleteAppsV1CollectionNamespacedDeployment",
	}
	if !reflect.DeepEqual(operationIDs, wantIDs) {
		t.Errorf("operation IDs = %v, want %v", operationIDs, wantIDs)
	}

	patch := swagger.Paths.Paths["/apis/apps/v1/namespaces/{namespace}/deployments/{name}"].Patch
	if patch == nil || patch.ID != "patchAppsV1NamespacedDeployment" {
		t.Fatalf("deployment PATCH operation = %+v", patch)
	}
	if !reflect.DeepEqual(patch.Consumes, defaultPatchTypes) {
		t.Errorf("PATCH consumes %v, want %v", patch.Consumes, defaultPatchTypes)
	}
	parameterNames := map[string]bool{}
	for _, p := range patch.Parameters {
		parameterNames[p.Name] = true
	}
	for _, name := range []string{"body", "dryRun", "fieldManager", "fieldValidation", "force"} {
		if !parameterNames[name] {
			t.Errorf("PATCH lacks parameter %s (has %v)", name, parameterNames)
		}
	}
	if patch.Extensions[extensionAction] != "patch" {
		t.Errorf("x-kubernetes-action = %v", patch.Extensions[extensionAction])
	}
	wantKind := map[string]interface{}{"group": "apps", "version": "v1", "kind": "Deployment"}
	if got := patch.Extensions[extensionGroupVersionKind]; !reflect.DeepEqual(got, wantKind) {
		t.Errorf("operation x-kubernetes-group-version-kind = %v", got)
	}
	if got := patch.Responses.StatusCodeResponses[200].Schema.Ref.String(); got != "#/definitions/io.k8s.api.apps.v1.Deployment" {
		t.Errorf("PATCH 200 schema = %s", got)
	}
	scale := swagger.Paths.Paths["/apis/apps/v1/namespaces/{namespace}/deployments/{name}/scale"].Get
	if scale.ID != "readAppsV1NamespacedDeploymentScale" || scale.Responses.StatusCodeResponses[200].Schema.Ref.String() != "#/definitions/io.k8s.api.autoscaling.v1.Scale" {
		t.Errorf("scale GET = %s → %v", scale.ID, scale.Responses.StatusCodeResponses[200].Schema.Ref.String())
	}

	for _, name := range []string{"io.k8s.api.apps.v1.Deployment", "io.k8s.api.apps.v1.DeploymentList",
		"io.k8s.api.core.v1.PodSpec", "io.k8s.apimachinery.pkg.apis.meta.v1.Status", "io.k8s.api.autoscaling.v1.Scale"} {
		if _, ok := swagger.Definitions[name]; !ok {
			t.Errorf("definition %s missing", name)
		}
	}
	if _, ok := swagger.Definitions["io.k8s.api.batch.v1.Job"]; ok {
		t.Error("v2 includes definitions of kinds that are not served")
	}
}

// supportsQueryParamV2 mirrors how kubectl decides from the v2 document that
// the server validates fields: a PATCH operation for the kind must list it.
func supportsQueryParamV2(document *openapi_v2.Document, group, version, kind, queryParam string) bool {
	for _, path := range document.GetPaths().GetPath() {
		op := path.GetValue().GetPatch()
		if op == nil {
			continue
		}
		for _, extension := range op.GetVendorExtension() {
			if extension.GetName() != extensionGroupVersionKind {
				continue
			}
			var gvk map[string]string
			if err := yaml.Unmarshal([]byte(extension.GetValue().GetYaml()), &gvk); err != nil {
				continue
			}
			if gvk["group"] != group || gvk["version"] != version || gvk["kind"] != kind {
				continue
			}
			for _, param := range op.GetParameters() {
				if param.GetParameter().GetNonBodyParameter().GetQueryParameterSubSchema().GetName() == queryParam {
					return true
				}
			}
		}
	}
	return false
}

func TestV2ProtobufDocument(t *testing.T) {
	document := fetchV2Protobuf(t, newTestService(t))
	if document.GetInfo().GetTitle() != "Kubernetes" {
		t.Errorf("protobuf info = %v", document.GetInfo())
	}
	if !supportsQueryParamV2(document, "apps", "v1", "Deployment", "fieldValidation") {
		t.Error("kubectl would not detect server-side fieldValidation for apps/v1 Deployment")
	}
	if !supportsQueryParamV2(document, "", "v1", "ConfigMap", "fieldValidation") {
		t.Error("kubectl would not detect server-side fieldValidation for v1 ConfigMap")
	}
	if supportsQueryParamV2(document, "batch", "v1", "Job", "fieldValidation") {
		t.Error("an unserved kind claims fieldValidation support")
	}
	for _, path := range document.GetPaths().GetPath() {
		if path.GetName() != "/apis/apps/v1/namespaces/{namespace}/deployments/{name}" {
			continue
		}
		if got := path.GetValue().GetPatch().GetConsumes(); !reflect.DeepEqual(got, defaultPatchTypes) {
			t.Errorf("protobuf PATCH consumes %v", got)
		}
	}
}

// kubectl explain (v2 path) and client-side tooling read models this way.
func TestExplainModelsFromV2Protobuf(t *testing.T) {
	models, err := openapiproto.NewOpenAPIData(fetchV2Protobuf(t, newTestService(t)))
	if err != nil {
		t.Fatalf("kube-openapi proto cannot load the v2 document: %v", err)
	}
	deployment, ok := models.LookupModel("io.k8s.api.apps.v1.Deployment").(*openapiproto.Kind)
	if !ok {
		t.Fatalf("Deployment model is %T", models.LookupModel("io.k8s.api.apps.v1.Deployment"))
	}
	specRef, ok := deployment.Fields["spec"].(openapiproto.Reference)
	if !ok {
		t.Fatalf("Deployment.spec is %T", deployment.Fields["spec"])
	}
	deploymentSpec, ok := specRef.SubSchema().(*openapiproto.Kind)
	if !ok {
		t.Fatalf("DeploymentSpec is %T", specRef.SubSchema())
	}
	replicas := deploymentSpec.Fields["replicas"]
	if replicas == nil || !strings.Contains(replicas.GetDescription(), "Number of desired pods") {
		t.Errorf("Deployment.spec.replicas = %v", replicas)
	}
}

func TestV2CachingHeaders(t *testing.T) {
	s := newTestService(t)
	first := get(t, s, "/openapi/v2", map[string]string{"Accept": "application/json"})
	etag := first.Header.Get("Etag")
	if etag == "" {
		t.Fatal("no ETag on /openapi/v2")
	}
	notModified := get(t, s, "/openapi/v2", map[string]string{"Accept": "application/json", "If-None-Match": etag})
	if notModified.StatusCode != http.StatusNotModified {
		t.Errorf("If-None-Match with current ETag: %s, want 304", notModified.Status)
	}
	protobufNotModified := get(t, s, "/openapi/v2", map[string]string{"Accept": protobufV2, "If-None-Match": etag})
	if protobufNotModified.StatusCode != http.StatusNotModified {
		t.Errorf("protobuf If-None-Match: %s, want 304", protobufNotModified.Status)
	}

	compressed := get(t, s, "/openapi/v2", map[string]string{"Accept": "application/json", "Accept-Encoding": "gzip"})
	if compressed.Header.Get("Content-Encoding") != "gzip" {
		t.Fatalf("Content-Encoding = %q, want gzip", compressed.Header.Get("Content-Encoding"))
	}
	reader, err := gzip.NewReader(compressed.Body)
	if err != nil {
		t.Fatal(err)
	}
	decompressed, err := io.ReadAll(reader)
	if err != nil || !json.Valid(decompressed) {
		t.Errorf("gzip body is not JSON (err %v)", err)
	}

	// A client --disable-compression-for-client-ips names gets it as is.
	uncompressed := httptest.NewRequest(http.MethodGet, "/openapi/v2", nil)
	uncompressed.Header.Set("Accept", "application/json")
	uncompressed.Header.Set("Accept-Encoding", "gzip")
	uncompressed = uncompressed.WithContext(request.WithoutCompression(uncompressed.Context()))
	recorder := httptest.NewRecorder()
	s.ServeHTTP(recorder, uncompressed)
	if encoding := recorder.Header().Get("Content-Encoding"); encoding != "" || !bytes.Equal(recorder.Body.Bytes(), decompressed) {
		t.Errorf("without compression: Content-Encoding %q, body equal to the gzip one's: %v", encoding, bytes.Equal(recorder.Body.Bytes(), decompressed))
	}
}

// TestV3GzipFollowsTheClient: /openapi/v3 is gzipped for a client that
// asks, except one --disable-compression-for-client-ips names.
func TestV3GzipFollowsTheClient(t *testing.T) {
	s := newTestService(t)
	for _, tc := range []struct {
		disabled bool
		want     string
	}{{false, "gzip"}, {true, ""}} {
		req := httptest.NewRequest(http.MethodGet, "/openapi/v3/apis/apps/v1", nil)
		req.Header.Set("Accept-Encoding", "gzip")
		if tc.disabled {
			req = req.WithContext(request.WithoutCompression(req.Context()))
		}
		recorder := httptest.NewRecorder()
		s.ServeHTTP(recorder, req)
		if recorder.Code != http.StatusOK || recorder.Header().Get("Content-Encoding") != tc.want {
			t.Errorf("compression disabled %v: %d, Content-Encoding %q, want %q", tc.disabled, recorder.Code, recorder.Header().Get("Content-Encoding"), tc.want)
		}
		if tc.disabled && !json.Valid(recorder.Body.Bytes()) {
			t.Error("uncompressed v3 document is not JSON")
		}
	}
}

func fetchV3Index(t testing.TB, s *Service) handler3.OpenAPIV3Discovery {
	t.Helper()
	response := get(t, s, "/openapi/v3", nil)
	if response.StatusCode != http.StatusOK {
		t.Fatalf("GET /openapi/v3: %s", response.Status)
	}
	var index handler3.OpenAPIV3Discovery
	if err := json.Unmarshal(readBody(t, response), &index); err != nil {
		t.Fatalf("v3 index: %v", err)
	}
	return index
}

func TestV3IndexAndGroupVersionDocument(t *testing.T) {
	s := newTestService(t)
	index := fetchV3Index(t, s)
	for _, key := range []string{"api/v1", "apis/apps/v1"} {
		url := index.Paths[key].ServerRelativeURL
		if !strings.HasPrefix(url, "/openapi/v3/"+key+"?hash=") {
			t.Errorf("index entry %s = %q", key, url)
		}
	}
	if len(index.Paths) != 2 {
		t.Errorf("index has %d group versions, want 2: %v", len(index.Paths), index.Paths)
	}

	response := get(t, s, index.Paths["apis/apps/v1"].ServerRelativeURL, map[string]string{"Accept": "application/json"})
	if response.StatusCode != http.StatusOK {
		t.Fatalf("GET apps/v1 document: %s", response.Status)
	}
	if got := response.Header.Get("Cache-Control"); got != "public, immutable" {
		t.Errorf("Cache-Control with matching hash = %q", got)
	}
	var document spec3.OpenAPI
	if err := json.Unmarshal(readBody(t, response), &document); err != nil {
		t.Fatalf("apps/v1 document does not parse: %v", err)
	}
	if !strings.HasPrefix(document.Version, "3.") {
		t.Errorf("openapi = %q", document.Version)
	}
	deployment := document.Components.Schemas["io.k8s.api.apps.v1.Deployment"]
	if deployment == nil || deployment.Extensions[extensionGroupVersionKind] == nil {
		t.Fatalf("apps/v1 document lacks the Deployment schema with its kind: %v", deployment)
	}
	if _, ok := document.Components.Schemas["io.k8s.api.core.v1.ConfigMap"]; ok {
		t.Error("apps/v1 document carries core/v1 ConfigMap, which none of its paths use")
	}
	for path := range document.Paths.Paths {
		if !strings.HasPrefix(path, "/apis/apps/v1/") {
			t.Errorf("apps/v1 document has foreign path %s", path)
		}
	}
	if !supportsQueryParamV3(&document, "apps", "v1", "Deployment", "fieldValidation") {
		t.Error("kubectl would not detect server-side fieldValidation from the v3 document")
	}
	patch := document.Paths.Paths["/apis/apps/v1/namespaces/{namespace}/deployments/{name}"].Patch
	for _, patchType := range defaultPatchTypes {
		if patch.RequestBody.Content[patchType] == nil {
			t.Errorf("v3 PATCH request body lacks %s", patchType)
		}
	}
	assertAllRefsResolve(t, &document)

	if stale := get(t, s, "/openapi/v3/apis/apps/v1?hash=stale", nil); stale.StatusCode != http.StatusMovedPermanently {
		t.Errorf("stale hash: %s, want 301 to the current one", stale.Status)
	}
	if unknown := get(t, s, "/openapi/v3/apis/batch/v1", nil); unknown.StatusCode != http.StatusNotFound {
		t.Errorf("unserved group version: %s, want 404", unknown.Status)
	}
	protobuf := get(t, s, "/openapi/v3/api/v1", map[string]string{"Accept": "application/com.github.proto-openapi.spec.v3@v1.0+protobuf"})
	if protobuf.StatusCode != http.StatusOK || len(readBody(t, protobuf)) == 0 {
		t.Errorf("v3 protobuf: %s", protobuf.Status)
	}
}

// supportsQueryParamV3 mirrors kubectl's v3 field-validation detection: the
// PATCH operation whose x-kubernetes-group-version-kind is the kind must list
// the parameter itself (path-level parameters do not count).
func supportsQueryParamV3(document *spec3.OpenAPI, group, version, kind, queryParam string) bool {
	for _, path := range document.Paths.Paths {
		op := path.Patch
		if op == nil {
			continue
		}
		gvk, _ := op.Extensions[extensionGroupVersionKind].(map[string]interface{})
		if gvk["group"] != group || gvk["version"] != version || gvk["kind"] != kind {
			continue
		}
		for _, param := range op.Parameters {
			if param.Name == queryParam {
				return true
			}
		}
	}
	return false
}

func assertAllRefsResolve(t *testing.T, document *spec3.OpenAPI) {
	t.Helper()
	raw, err := json.Marshal(document)
	if err != nil {
		t.Fatal(err)
	}
	for _, chunk := range strings.Split(string(raw), `"$ref":"`)[1:] {
		target := chunk[:strings.IndexByte(chunk, '"')]
		name := strings.TrimPrefix(target, v3RefPrefix)
		if name == target || document.Components.Schemas[name] == nil {
			t.Errorf("dangling $ref %s", target)
		}
	}
}

func cronTabSchemas() map[string]*spec.Schema {
	return map[string]*spec.Schema{
		"com.example.stable.v1.CronTab": {
			SchemaProps: spec.SchemaProps{
				Type: []string{"object"},
				Properties: map[string]spec.Schema{
					"metadata": {SchemaProps: spec.SchemaProps{Ref: spec.MustCreateRef("#/definitions/io.k8s.apimachinery.pkg.apis.meta.v1.ObjectMeta")}},
					"spec": {SchemaProps: spec.SchemaProps{Type: []string{"object"}, Properties: map[string]spec.Schema{
						"cronSpec": {SchemaProps: spec.SchemaProps{Type: []string{"string"}, Description: "schedule in cron format"}},
					}}},
				},
			},
			VendorExtensible: spec.VendorExtensible{Extensions: spec.Extensions{extensionGroupVersionKind: []interface{}{
				map[string]interface{}{"group": "stable.example.com", "version": "v1", "kind": "CronTab"},
			}}},
		},
		"com.example.stable.v1.CronTabList": {SchemaProps: spec.SchemaProps{
			Type: []string{"object"},
			Properties: map[string]spec.Schema{
				"items": {SchemaProps: spec.SchemaProps{Type: []string{"array"}, Items: &spec.SchemaOrArray{Schema: &spec.Schema{
					SchemaProps: spec.SchemaProps{Ref: spec.MustCreateRef("#/components/schemas/com.example.stable.v1.CronTab")}}}}},
				"metadata": {SchemaProps: spec.SchemaProps{Ref: spec.MustCreateRef("#/definitions/io.k8s.apimachinery.pkg.apis.meta.v1.ListMeta")}},
			},
		}},
	}
}

func cronTabResource() Resource {
	return Resource{Group: "stable.example.com", Version: "v1", Resource: "crontabs", Kind: "CronTab", ListKind: "CronTabList",
		Namespaced: true, Verbs: allVerbs, Subresources: []string{"status"}, DefinitionName: "com.example.stable.v1.CronTab",
		PatchTypes: []string{PatchTypeJSON, PatchTypeMerge, PatchTypeApplyYAML}}
}

func TestUpdateServesNewDocuments(t *testing.T) {
	s := newTestService(t)
	_, etagBefore := fetchV2JSON(t, s)
	indexBefore := fetchV3Index(t, s)

	// A CRD arrives and apps/v1 loses its scale subresource.
	resources := builtinResources()
	resources[2].Subresources = []string{"status"}
	resources = append(resources, cronTabResource())
	s.Update(resources, StaticDefinitions(cronTabSchemas()))

	swagger, etagAfter := fetchV2JSON(t, s)
	if etagAfter == etagBefore {
		t.Error("v2 ETag unchanged after Update")
	}
	if _, ok := swagger.Paths.Paths["/apis/apps/v1/namespaces/{namespace}/deployments/{name}/scale"]; ok {
		t.Error("v2 still serves the removed scale subresource")
	}
	crontabPatch := swagger.Paths.Paths["/apis/stable.example.com/v1/namespaces/{namespace}/crontabs/{name}"].Patch
	if crontabPatch == nil || crontabPatch.ID != "patchStableExampleComV1NamespacedCronTab" {
		t.Fatalf("custom resource PATCH = %+v", crontabPatch)
	}
	if !reflect.DeepEqual(crontabPatch.Consumes, cronTabResource().PatchTypes) {
		t.Errorf("custom resource PATCH consumes %v", crontabPatch.Consumes)
	}
	if _, ok := swagger.Definitions["com.example.stable.v1.CronTab"]; !ok {
		t.Error("v2 lacks the custom resource definition")
	}
	cronTabMetadata := swagger.Definitions["com.example.stable.v1.CronTab"].Properties["metadata"]
	if cronTabMetadata.Ref.String() != "#/definitions/io.k8s.apimachinery.pkg.apis.meta.v1.ObjectMeta" {
		t.Errorf("custom resource metadata ref = %s", cronTabMetadata.Ref.String())
	}
	if _, err := openapiproto.NewOpenAPIData(fetchV2Protobuf(t, s)); err != nil {
		t.Errorf("v2 with a custom resource does not load as kubectl models: %v", err)
	}

	indexAfter := fetchV3Index(t, s)
	if indexAfter.Paths["apis/apps/v1"] == indexBefore.Paths["apis/apps/v1"] {
		t.Error("apps/v1 hash unchanged after its resources changed")
	}
	if indexAfter.Paths["api/v1"] != indexBefore.Paths["api/v1"] {
		t.Error("api/v1 hash changed although its resources did not")
	}
	cronTabURL := indexAfter.Paths["apis/stable.example.com/v1"].ServerRelativeURL
	if cronTabURL == "" {
		t.Fatalf("index lacks the custom resource group version: %v", indexAfter.Paths)
	}
	var document spec3.OpenAPI
	if err := json.Unmarshal(readBody(t, get(t, s, cronTabURL, nil)), &document); err != nil {
		t.Fatal(err)
	}
	if !supportsQueryParamV3(&document, "stable.example.com", "v1", "CronTab", "fieldValidation") {
		t.Error("custom resource PATCH lacks fieldValidation in v3")
	}
	if document.Components.Schemas["io.k8s.apimachinery.pkg.apis.meta.v1.ObjectMeta"] == nil {
		t.Error("custom resource document lacks ObjectMeta it refers to")
	}
	assertAllRefsResolve(t, &document)

	// Removing the CRD removes its group version.
	s.Update(builtinResources(), nil)
	if _, ok := fetchV3Index(t, s).Paths["apis/stable.example.com/v1"]; ok {
		t.Error("removed group version still in the v3 index")
	}
}

func TestResourcesWithUnknownDefinitionsAreLeftOut(t *testing.T) {
	s := NewService("v1.37.0")
	s.Update([]Resource{{Group: "example.com", Version: "v1", Resource: "widgets", Kind: "Widget", Verbs: allVerbs,
		DefinitionName: "com.example.v1.Widget"}}, nil)
	swagger, _ := fetchV2JSON(t, s)
	if len(swagger.Paths.Paths) != 0 {
		t.Errorf("paths for a resource without a schema: %v", swagger.Paths.Paths)
	}
}

func TestOperationIDGroupVersion(t *testing.T) {
	for _, tc := range []struct{ group, version, want string }{
		{"", "v1", "CoreV1"},
		{"apps", "v1", "AppsV1"},
		{"rbac.authorization.k8s.io", "v1", "RbacAuthorizationV1"},
		{"autoscaling", "v2", "AutoscalingV2"},
		{"stable.example.com", "v1beta1", "StableExampleComV1beta1"},
		{"my-group.example.io", "v1", "MyGroupExampleIoV1"},
	} {
		if got := operationIDGroupVersion(tc.group, tc.version); got != tc.want {
			t.Errorf("operationIDGroupVersion(%q, %q) = %q, want %q", tc.group, tc.version, got, tc.want)
		}
	}
	if got := operationTag("rbac.authorization.k8s.io", "v1"); got != "rbacAuthorization_v1" {
		t.Errorf("operationTag = %q", got)
	}
}

func TestUnknownPathIsNotFound(t *testing.T) {
	if response := get(t, newTestService(t), "/openapi/v4", nil); response.StatusCode != http.StatusNotFound {
		t.Errorf("GET /openapi/v4: %s", response.Status)
	}
}

// BenchmarkFirstV2BuildAndServe measures a cold /openapi/v2 protobuf request:
// generating definitions, building the document, JSON and protobuf encoding.
func BenchmarkFirstV2BuildAndServe(b *testing.B) {
	var size int
	for i := 0; i < b.N; i++ {
		generatedV2 = resetDefinitions(v2RefPrefix)
		s := newTestService(b)
		response := get(b, s, "/openapi/v2", map[string]string{"Accept": protobufV2})
		body := readBody(b, response)
		if response.StatusCode != http.StatusOK || !bytes.Contains(body, []byte("io.k8s.api.apps.v1.Deployment")) {
			b.Fatalf("cold v2 request: %s", response.Status)
		}
		size = len(body)
	}
	b.ReportMetric(float64(b.Elapsed().Milliseconds())/float64(b.N), "ms/op")
	b.ReportMetric(float64(size), "protobuf-bytes")
}

// resetDefinitions gives the benchmark a cold, not yet built definition set.
func resetDefinitions(refPrefix string) *definitionCache {
	return newDefinitionCache(refPrefix)
}

// everyGeneratedKind serves every generated kind that has a list kind, to
// size documents like a full built-in API surface.
func everyGeneratedKind() []Resource {
	var resources []Resource
	for name, value := range groupVersionKindsByDefinition() {
		for _, entry := range value {
			gvk := entry.(map[string]interface{})
			kind := gvk["kind"].(string)
			if strings.HasSuffix(kind, "List") || !strings.HasSuffix(name, "."+kind) || Definitions()[name+"List"] == nil {
				continue
			}
			resources = append(resources, Resource{
				Group: gvk["group"].(string), Version: gvk["version"].(string), Resource: strings.ToLower(kind) + "s",
				Kind: kind, ListKind: kind + "List", Namespaced: true, Verbs: allVerbs, Subresources: []string{"status"},
				DefinitionName: name,
			})
		}
	}
	return resources
}

func BenchmarkFirstV2BuildAndServeAllKinds(b *testing.B) {
	resources := everyGeneratedKind()
	var size int
	for i := 0; i < b.N; i++ {
		generatedV2 = resetDefinitions(v2RefPrefix)
		s := NewService("v1.37.0")
		s.Update(resources, nil)
		response := get(b, s, "/openapi/v2", map[string]string{"Accept": protobufV2})
		if response.StatusCode != http.StatusOK {
			b.Fatalf("cold v2 request: %s", response.Status)
		}
		size = len(readBody(b, response))
	}
	b.ReportMetric(float64(len(resources)), "resources")
	b.ReportMetric(float64(b.Elapsed().Milliseconds())/float64(b.N), "ms/op")
	b.ReportMetric(float64(size), "protobuf-bytes")
}

func TestConcurrentUpdateAndServe(t *testing.T) {
	s := newTestService(t)
	var wg sync.WaitGroup
	for _, request := range []struct {
		url     string
		headers map[string]string
	}{
		{"/openapi/v2", nil},
		{"/openapi/v2", map[string]string{"Accept": protobufV2, "Accept-Encoding": "gzip"}},
		{"/openapi/v2", map[string]string{"Accept": "application/json", "Accept-Encoding": "gzip"}},
		{"/openapi/v3", nil},
		{"/openapi/v3/apis/apps/v1", nil},
	} {
		url := request.url
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := 0; i < 5; i++ {
				if response := get(t, s, url, request.headers); response.StatusCode != http.StatusOK && response.StatusCode != http.StatusNotFound {
					t.Errorf("GET %s during updates: %s", url, response.Status)
				}
			}
		}()
	}
	for i := 0; i < 5; i++ {
		resources := builtinResources()
		if i%2 == 0 {
			resources = append(resources, cronTabResource())
		}
		s.Update(resources, StaticDefinitions(cronTabSchemas()))
	}
	wg.Wait()
	if _, ok := fetchV3Index(t, s).Paths["apis/stable.example.com/v1"]; !ok {
		t.Error("the last Update (with the custom resource) is not what is served")
	}
}
