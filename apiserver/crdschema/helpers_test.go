package crdschema

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	utiljson "k8s.io/apimachinery/pkg/util/json"
	"k8s.io/apimachinery/pkg/util/validation/field"
	"sigs.k8s.io/yaml"
)

// loadCRD reads testdata/<name>, defaults it and requires it to be valid.
func loadCRD(t testing.TB, name string) *apiextensionsv1.CustomResourceDefinition {
	t.Helper()
	crd := readCRD(t, name)
	if errs := ValidateCRD(crd); len(errs) > 0 {
		t.Fatalf("%s is invalid: %v", name, errs.ToAggregate())
	}
	return crd
}

func readCRD(t testing.TB, name string) *apiextensionsv1.CustomResourceDefinition {
	t.Helper()
	data, err := os.ReadFile(filepath.Join("testdata", name))
	if err != nil {
		t.Fatal(err)
	}
	crd := &apiextensionsv1.CustomResourceDefinition{}
	if err := yaml.UnmarshalStrict(data, crd); err != nil {
		t.Fatalf("decoding %s: %v", name, err)
	}
	DefaultCRD(crd)
	return crd
}

func compileVersion(t testing.TB, crd *apiextensionsv1.CustomResourceDefinition, version string) *Version {
	t.Helper()
	v, err := Compile(crd, version)
	if err != nil {
		t.Fatalf("Compile(%s, %s): %v", crd.Name, version, err)
	}
	return v
}

// object decodes a YAML custom resource.
func object(t testing.TB, doc string) *unstructured.Unstructured {
	t.Helper()
	// Decode like the API server: JSON numbers become int64 or float64.
	data, err := yaml.YAMLToJSON([]byte(doc))
	if err != nil {
		t.Fatal(err)
	}
	u := &unstructured.Unstructured{}
	if err := utiljson.Unmarshal(data, &u.Object); err != nil {
		t.Fatal(err)
	}
	return u
}

// errorStrings renders errors as kube prints them in a 422 response.
func errorStrings(errs field.ErrorList) []string {
	out := make([]string, len(errs))
	for i, e := range errs {
		out[i] = e.Error()
	}
	return out
}

func requireErrors(t *testing.T, errs field.ErrorList, want ...string) {
	t.Helper()
	got := errorStrings(errs)
	if len(got) != len(want) {
		t.Fatalf("got %d errors, want %d:\n got: %s\nwant: %s", len(got), len(want), strings.Join(got, "\n      "), strings.Join(want, "\n      "))
	}
	for i := range want {
		if got[i] != want[i] {
			t.Errorf("error %d:\n got: %s\nwant: %s", i, got[i], want[i])
		}
	}
}
