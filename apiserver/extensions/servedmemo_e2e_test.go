package extensions_test

import (
	"context"
	"fmt"
	"testing"
	"time"

	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/devplane/devplane/apiserver/controlplane/controlplanetest"
)

// Lists and watches reuse each object's served form (pruned, defaulted):
// an update of the object, and a schema change of its CRD, must still show.
func TestServedFormsFollowUpdatesAndSchemaChanges(t *testing.T) {
	d := start(t)
	ctx := context.Background()
	ext := d.apiext(t)
	if _, err := ext.ApiextensionsV1().CustomResourceDefinitions().Create(ctx, readCRD(t, "crontab-crd.yaml"), metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	waitEstablished(t, ext, "crontabs.stable.example.com")
	dyn := d.dynamic(t).Resource(crontabs).Namespace("default")
	if _, err := dyn.Create(ctx, cronTab("memo", nil, 2), metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	listed := func() map[string]any {
		t.Helper()
		l, err := dyn.List(ctx, metav1.ListOptions{})
		if err != nil || len(l.Items) != 1 {
			t.Fatalf("list: %v (%d items)", err, len(l.Items))
		}
		spec, _, _ := unstructured.NestedMap(l.Items[0].Object, "spec")
		return spec
	}
	for range 2 { // the second list is served from the memo
		if spec := listed(); spec["replicas"] != int64(2) || spec["concurrencyPolicy"] != "Allow" {
			t.Fatalf("spec %v: want replicas 2 and the default concurrencyPolicy", spec)
		}
	}

	// An update is listed at once (well, as soon as the cache has it).
	cur, err := dyn.Get(ctx, "memo", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if err := unstructured.SetNestedField(cur.Object, int64(3), "spec", "replicas"); err != nil {
		t.Fatal(err)
	}
	if _, err := dyn.Update(ctx, cur, metav1.UpdateOptions{}); err != nil {
		t.Fatal(err)
	}
	controlplanetest.Eventually(t, 10*time.Second, "updated replicas listed", func() (bool, string) {
		spec := listed()
		return spec["replicas"] == int64(3), fmt.Sprint(spec)
	})

	// A new default in the schema applies to the stored object when read.
	crd, err := ext.ApiextensionsV1().CustomResourceDefinitions().Get(ctx, "crontabs.stable.example.com", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	spec := crd.Spec.Versions[0].Schema.OpenAPIV3Schema.Properties["spec"]
	spec.Properties["timezone"] = apiextensionsv1.JSONSchemaProps{Type: "string", Default: &apiextensionsv1.JSON{Raw: []byte(`"UTC"`)}}
	crd.Spec.Versions[0].Schema.OpenAPIV3Schema.Properties["spec"] = spec
	if _, err := ext.ApiextensionsV1().CustomResourceDefinitions().Update(ctx, crd, metav1.UpdateOptions{}); err != nil {
		t.Fatal(err)
	}
	controlplanetest.Eventually(t, 10*time.Second, "the new default listed", func() (bool, string) {
		spec := listed()
		return spec["timezone"] == "UTC" && spec["replicas"] == int64(3), fmt.Sprint(spec)
	})
}
