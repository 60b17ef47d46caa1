package aggregator_test

import (
	"net/http"
	"strings"
	"testing"
	"time"

	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	apiregv1 "k8s.io/kube-aggregator/pkg/apis/apiregistration/v1"
	"k8s.io/kube-openapi/pkg/spec3"
	"k8s.io/kube-openapi/pkg/validation/spec"

	"github.com/devplane/devplane/apiserver/controlplane/controlplanetest"
)

const (
	flunderDefinition  = "com.example.wardle.v1alpha1.Flunder"
	flunderDescription = "Flunder is the example resource of the wardle extension server."
	referenceDoc       = "Reference names another flunder this one refers to."
)

// flunderSchemas are wardle's definitions, with refs under refPrefix.
func flunderSchemas(refPrefix string) map[string]spec.Schema {
	str := func(d string) spec.Schema {
		return spec.Schema{SchemaProps: spec.SchemaProps{Type: []string{"string"}, Description: d}}
	}
	return map[string]spec.Schema{
		flunderDefinition: {
			SchemaProps: spec.SchemaProps{Type: []string{"object"}, Description: flunderDescription,
				Properties: map[string]spec.Schema{
					"apiVersion": str("APIVersion of the object."),
					"kind":       str("Kind of the object."),
					"metadata": {SchemaProps: spec.SchemaProps{Type: []string{"object"},
						Description: "Standard object metadata."}},
					"spec": {SchemaProps: spec.SchemaProps{
						Ref: spec.MustCreateRef(refPrefix + "com.example.wardle.v1alpha1.FlunderSpec")}},
				}},
			VendorExtensible: spec.VendorExtensible{Extensions: spec.Extensions{
				"x-kubernetes-group-version-kind": []any{map[string]any{
					"group": wardleGroup, "version": wardleVersion, "kind": "Flunder"}},
			}},
		},
		"com.example.wardle.v1alpha1.FlunderSpec": {SchemaProps: spec.SchemaProps{Type: []string{"object"},
			Description: "FlunderSpec is the desired state of a flunder.",
			Properties:  map[string]spec.Schema{"reference": str(referenceDoc)}}},
	}
}

// serveWardleOpenAPI answers /openapi/v2 and /openapi/v3/apis/wardle.example.com/v1alpha1
// as a generic API server would (trimmed to wardle's own types).
func serveWardleOpenAPI(rw http.ResponseWriter, r *http.Request) {
	// kubectl explain finds a resource's kind from its operations' GVK.
	gvk := spec.VendorExtensible{Extensions: spec.Extensions{
		"x-kubernetes-action":             "get",
		"x-kubernetes-group-version-kind": map[string]any{"group": wardleGroup, "version": wardleVersion, "kind": "Flunder"},
	}}
	get := spec.PathItem{PathItemProps: spec.PathItemProps{Get: &spec.Operation{VendorExtensible: gvk, OperationProps: spec.OperationProps{
		ID: "readWardleV1alpha1NamespacedFlunder", Produces: []string{"application/json"},
		Responses: &spec.Responses{ResponsesProps: spec.ResponsesProps{StatusCodeResponses: map[int]spec.Response{
			200: {ResponseProps: spec.ResponseProps{Description: "OK",
				Schema: &spec.Schema{SchemaProps: spec.SchemaProps{Ref: spec.MustCreateRef("#/definitions/" + flunderDefinition)}}}},
		}}},
	}}}}
	path := "/apis/" + wardleGroup + "/" + wardleVersion + "/namespaces/{namespace}/flunders/{name}"
	switch r.URL.Path {
	case "/openapi/v2":
		definitions := spec.Definitions{}
		for name, s := range flunderSchemas("#/definitions/") {
			definitions[name] = s
		}
		writeJSON(rw, &spec.Swagger{SwaggerProps: spec.SwaggerProps{Swagger: "2.0",
			Info:        &spec.Info{InfoProps: spec.InfoProps{Title: "wardle", Version: "v0"}},
			Paths:       &spec.Paths{Paths: map[string]spec.PathItem{path: get}},
			Definitions: definitions}})
	case "/openapi/v3/apis/" + wardleGroup + "/" + wardleVersion:
		schemas := map[string]*spec.Schema{}
		for name, s := range flunderSchemas("#/components/schemas/") {
			schemas[name] = &s
		}
		op := &spec3.Operation{VendorExtensible: gvk, OperationProps: spec3.OperationProps{
			OperationId: "readWardleV1alpha1NamespacedFlunder",
			Responses: &spec3.Responses{ResponsesProps: spec3.ResponsesProps{StatusCodeResponses: map[int]*spec3.Response{
				200: {ResponseProps: spec3.ResponseProps{Description: "OK", Content: map[string]*spec3.MediaType{
					"application/json": {MediaTypeProps: spec3.MediaTypeProps{Schema: &spec.Schema{SchemaProps: spec.SchemaProps{
						Ref: spec.MustCreateRef("#/components/schemas/" + flunderDefinition)}}}},
				}}},
			}}},
		}}
		writeJSON(rw, &spec3.OpenAPI{Version: "3.0.0",
			Info:       &spec.Info{InfoProps: spec.InfoProps{Title: "wardle", Version: "v0"}},
			Paths:      &spec3.Paths{Paths: map[string]*spec3.Path{path: {PathProps: spec3.PathProps{Get: op}}}},
			Components: &spec3.Components{Schemas: schemas}})
	default:
		http.Error(rw, "not found", http.StatusNotFound)
	}
}

// openAPIState is whether devplane's v3 index lists wardle and its v2
// document has the Flunder definition.
func (e *env) openAPIState(t *testing.T) (inV3, inV2 bool) {
	t.Helper()
	var index struct{ Paths map[string]any }
	e.getJSON(t, "/openapi/v3", "application/json", &index)
	_, inV3 = index.Paths["apis/"+wardleGroup+"/"+wardleVersion]
	var v2 struct{ Definitions map[string]any }
	e.getJSON(t, "/openapi/v2", "application/json", &v2)
	_, inV2 = v2.Definitions[flunderDefinition]
	return inV3, inV2
}

func (e *env) waitOpenAPI(t *testing.T, want bool) {
	t.Helper()
	controlplanetest.Eventually(t, 30*time.Second, "wardle in /openapi/v2 and /openapi/v3 = "+map[bool]string{true: "yes", false: "no"}[want],
		func() (bool, string) {
			v3, v2 := e.openAPIState(t)
			return v3 == want && v2 == want, "v3 " + map[bool]string{true: "listed", false: "absent"}[v3] +
				", v2 " + map[bool]string{true: "listed", false: "absent"}[v2]
		})
}

func TestAggregatorOpenAPI(t *testing.T) {
	e := start(t)
	w := newWardle(t, e.cp.Certs.FrontProxyCAPool())
	e.register(t, w)
	e.waitAvailable(t, wardleName, apiregv1.ConditionTrue, "")
	e.waitOpenAPI(t, true)

	t.Run("kubectl explain", func(t *testing.T) {
		out, err := e.kubectl(t, "get", "--raw", "/openapi/v3")
		if err != nil || !strings.Contains(out, "apis/"+wardleGroup+"/"+wardleVersion) || !strings.Contains(out, "apis/apps/v1") {
			t.Errorf("get --raw /openapi/v3: %v\n%s", err, out)
		}
		out, err = e.kubectl(t, "explain", "flunders")
		if err != nil || !strings.Contains(out, "Flunder") || !strings.Contains(out, wardleGroup) ||
			!strings.Contains(out, flunderDescription) {
			t.Errorf("explain flunders: %v\n%s", err, out)
		}
		out, err = e.kubectl(t, "explain", "flunders.spec.reference")
		if err != nil || !strings.Contains(out, referenceDoc) {
			t.Errorf("explain flunders.spec.reference: %v\n%s", err, out)
		}
		out, err = e.kubectl(t, "explain", "flunders", "--output", "plaintext-openapiv2")
		if err != nil || !strings.Contains(out, flunderDescription) {
			t.Errorf("explain flunders (v2): %v\n%s", err, out)
		}
		// Built-in kinds are still described.
		out, err = e.kubectl(t, "explain", "deployments.spec.replicas")
		if err != nil || !strings.Contains(out, "replicas") {
			t.Errorf("explain deployments.spec.replicas: %v\n%s", err, out)
		}
	})

	t.Run("backend stopped", func(t *testing.T) {
		w.stop()
		e.waitAvailable(t, wardleName, apiregv1.ConditionFalse, "")
		e.waitOpenAPI(t, false)
		w.start()
		e.waitAvailable(t, wardleName, apiregv1.ConditionTrue, "")
		e.waitOpenAPI(t, true)
	})

	t.Run("APIService deleted", func(t *testing.T) {
		if err := e.dyn.Resource(apiservicesGVR).Delete(testCtx(t), wardleName, metav1.DeleteOptions{}); err != nil {
			t.Fatal(err)
		}
		e.waitOpenAPI(t, false)
		if r := controlplanetest.Kubectl(t, e.kubeconfig, "get", "--raw", "/openapi/v3/apis/"+wardleGroup+"/"+wardleVersion); r.Code == 0 {
			t.Errorf("wardle's v3 document is still served:\n%s", r.Stdout)
		}
	})
}

var crdGVR = schema.GroupVersionResource{Group: "apiextensions.k8s.io", Version: "v1", Resource: "customresourcedefinitions"}

// A CRD's group is served by devplane itself: it gets a local APIService,
// which goes with the CRD.
func TestCRDGroupGetsLocalAPIService(t *testing.T) {
	e := start(t)
	ctx := testCtx(t)
	crd := &apiextensionsv1.CustomResourceDefinition{
		TypeMeta:   metav1.TypeMeta{APIVersion: "apiextensions.k8s.io/v1", Kind: "CustomResourceDefinition"},
		ObjectMeta: metav1.ObjectMeta{Name: "gizmos.gadgets.example.com"},
		Spec: apiextensionsv1.CustomResourceDefinitionSpec{
			Group: "gadgets.example.com",
			Names: apiextensionsv1.CustomResourceDefinitionNames{Plural: "gizmos", Singular: "gizmo", Kind: "Gizmo", ListKind: "GizmoList"},
			Scope: apiextensionsv1.NamespaceScoped,
			Versions: []apiextensionsv1.CustomResourceDefinitionVersion{{Name: "v1", Served: true, Storage: true,
				Schema: &apiextensionsv1.CustomResourceValidation{OpenAPIV3Schema: &apiextensionsv1.JSONSchemaProps{
					Type: "object", XPreserveUnknownFields: func() *bool { b := true; return &b }()}}}},
		},
	}
	obj, err := runtime.DefaultUnstructuredConverter.ToUnstructured(crd)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := e.dyn.Resource(crdGVR).Create(ctx, &unstructured.Unstructured{Object: obj}, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	controlplanetest.Eventually(t, 20*time.Second, "v1.gadgets.example.com Local True", func() (bool, string) {
		out, err := e.kubectl(t, "get", "apiservices")
		return err == nil && hasRow(out, "v1.gadgets.example.com", "Local", "True"), out + errString(err)
	})
	if err := e.dyn.Resource(crdGVR).Delete(ctx, crd.Name, metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	controlplanetest.Eventually(t, 20*time.Second, "v1.gadgets.example.com gone", func() (bool, string) {
		out, err := e.kubectl(t, "get", "apiservices")
		return err == nil && !hasRow(out, "v1.gadgets.example.com"), out + errString(err)
	})
}
