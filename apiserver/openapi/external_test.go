package openapi

import (
	"net/http"
	"strings"
	"testing"

	"k8s.io/kube-openapi/pkg/spec3"
	"k8s.io/kube-openapi/pkg/validation/spec"
)

func gadgetExternal() External {
	gadget := spec.Schema{SchemaProps: spec.SchemaProps{Type: []string{"object"}, Description: "A gadget."}}
	ok := &spec.Responses{ResponsesProps: spec.ResponsesProps{StatusCodeResponses: map[int]spec.Response{
		200: {ResponseProps: spec.ResponseProps{Description: "OK"}},
	}}}
	item := spec.PathItem{PathItemProps: spec.PathItemProps{Get: &spec.Operation{OperationProps: spec.OperationProps{ID: "readGadget", Responses: ok}}}}
	return External{
		V2: &spec.Swagger{SwaggerProps: spec.SwaggerProps{
			Paths: &spec.Paths{Paths: map[string]spec.PathItem{
				"/apis/gadgets.example.com/v1/gadgets/{name}": item,
				"/api/v1/namespaces":                          item, // not the backend's to describe
			}},
			Definitions: spec.Definitions{
				"com.example.gadgets.v1.Gadget":        gadget,
				"io.k8s.api.core.v1.ConfigMap":         gadget, // ours wins
				"io.k8s.apimachinery.pkg.version.Info": gadget,
			},
		}},
		V3: &spec3.OpenAPI{Version: "3.0.0", Info: &spec.Info{InfoProps: spec.InfoProps{Title: "gadgets"}},
			Components: &spec3.Components{Schemas: map[string]*spec.Schema{"com.example.gadgets.v1.Gadget": &gadget}}},
	}
}

func TestExternalDocumentsAreMergedAndRemoved(t *testing.T) {
	s := newTestService(t)
	s.SetExternal("gadgets.example.com", "v1", gadgetExternal())

	if _, ok := fetchV3Index(t, s).Paths["apis/gadgets.example.com/v1"]; !ok {
		t.Fatal("v3 index does not list apis/gadgets.example.com/v1")
	}
	if r := get(t, s, "/openapi/v3/apis/gadgets.example.com/v1", nil); r.StatusCode != http.StatusOK {
		t.Fatalf("GET external v3 document: %s", r.Status)
	} else if body := string(readBody(t, r)); !strings.Contains(body, "com.example.gadgets.v1.Gadget") {
		t.Fatalf("external v3 document lacks its schema: %s", body)
	}
	v2, _ := fetchV2JSON(t, s)
	if _, ok := v2.Paths.Paths["/apis/gadgets.example.com/v1/gadgets/{name}"]; !ok {
		t.Error("v2 lacks the external path")
	}
	if _, ok := v2.Definitions["com.example.gadgets.v1.Gadget"]; !ok {
		t.Error("v2 lacks the external definition")
	}
	if v2.Definitions["io.k8s.api.core.v1.ConfigMap"].Description == "A gadget." {
		t.Error("an external definition replaced a local one")
	}
	if v2.Paths.Paths["/api/v1/namespaces"].Get != nil && v2.Paths.Paths["/api/v1/namespaces"].Get.ID == "readGadget" {
		t.Error("an external path outside its group version replaced a local one")
	}
	// Local updates keep the external document.
	s.Update(builtinResources(), nil)
	if _, ok := fetchV3Index(t, s).Paths["apis/gadgets.example.com/v1"]; !ok {
		t.Fatal("Update dropped the external document")
	}

	s.DeleteExternal("gadgets.example.com", "v1")
	if _, ok := fetchV3Index(t, s).Paths["apis/gadgets.example.com/v1"]; ok {
		t.Error("v3 index still lists the deleted external document")
	}
	if r := get(t, s, "/openapi/v3/apis/gadgets.example.com/v1", nil); r.StatusCode != http.StatusNotFound {
		t.Errorf("GET deleted external v3 document: %s, want 404", r.Status)
	}
	if v2, _ := fetchV2JSON(t, s); v2.Definitions["com.example.gadgets.v1.Gadget"].Description != "" {
		t.Error("v2 still has the deleted external definition")
	}
	if _, ok := fetchV3Index(t, s).Paths["apis/apps/v1"]; !ok {
		t.Error("local group versions are gone")
	}
}
