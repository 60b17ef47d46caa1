package extensions_test

import (
	"context"
	"strings"
	"testing"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/discovery"

	"github.com/devplane/devplane/apiserver/controlplane/controlplanetest"
)

var crontabs = schema.GroupVersionResource{Group: "stable.example.com", Version: "v1", Resource: "crontabs"}

func cronTab(name string, labels map[string]any, replicas int64) *unstructured.Unstructured {
	return &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": "stable.example.com/v1", "kind": "CronTab",
		"metadata": map[string]any{"name": name, "labels": labels},
		"spec":     map[string]any{"cronSpec": "* * * * *", "image": "nginx", "replicas": replicas},
	}}
}

func TestDynamicClientCRUDAndWatch(t *testing.T) {
	d := start(t)
	ctx := context.Background()
	ext := d.apiext(t)
	if _, err := ext.ApiextensionsV1().CustomResourceDefinitions().Create(ctx, readCRD(t, "crontab-crd.yaml"), metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	crd := waitEstablished(t, ext, "crontabs.stable.example.com")
	if crd.Status.AcceptedNames.Kind != "CronTab" || crd.Status.AcceptedNames.Plural != "crontabs" ||
		len(crd.Status.StoredVersions) != 1 || crd.Status.StoredVersions[0] != "v1" {
		t.Errorf("status: %+v", crd.Status)
	}

	// Discovery lists the new resource (legacy and aggregated).
	dc, err := discovery.NewDiscoveryClientForConfig(d.config)
	if err != nil {
		t.Fatal(err)
	}
	controlplanetest.Eventually(t, 10*time.Second, "crontabs in discovery", func() (bool, string) {
		_, lists, err := dc.ServerGroupsAndResources()
		if err != nil {
			return false, err.Error()
		}
		for _, l := range lists {
			if l.GroupVersion != "stable.example.com/v1" {
				continue
			}
			for _, r := range l.APIResources {
				if r.Name == "crontabs/scale" {
					return true, ""
				}
			}
		}
		return false, "not listed"
	})

	c := d.dynamic(t).Resource(crontabs).Namespace("default")
	w, err := c.Watch(ctx, metav1.ListOptions{LabelSelector: "app=web"})
	if err != nil {
		t.Fatal(err)
	}
	defer w.Stop()

	created, err := c.Create(ctx, cronTab("a", map[string]any{"app": "web"}, 1), metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if p, _, _ := unstructured.NestedString(created.Object, "spec", "concurrencyPolicy"); p != "Allow" {
		t.Errorf("created object not defaulted: %v", created.Object["spec"])
	}
	if _, err := c.Create(ctx, cronTab("b", map[string]any{"app": "db"}, 1), metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	if _, err := c.Create(ctx, cronTab("dry", nil, 1), metav1.CreateOptions{DryRun: []string{metav1.DryRunAll}}); err != nil {
		t.Fatal(err)
	}
	if _, err := c.Get(ctx, "dry", metav1.GetOptions{}); !apierrors.IsNotFound(err) {
		t.Errorf("dry-run create was stored: %v", err)
	}
	_, err = d.dynamic(t).Resource(crontabs).Namespace("missing").Create(ctx, cronTab("x", nil, 1), metav1.CreateOptions{})
	if !apierrors.IsNotFound(err) {
		t.Errorf("create in a missing namespace: %v", err)
	}

	// Update, status, selectors, pagination.
	created.Object["spec"].(map[string]any)["replicas"] = int64(4)
	updated, err := c.Update(ctx, created, metav1.UpdateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if updated.GetGeneration() != 2 {
		t.Errorf("generation after a spec update = %d, want 2", updated.GetGeneration())
	}
	_ = unstructured.SetNestedField(updated.Object, int64(4), "status", "replicas")
	// A custom resource's status write takes the status only (kube's
	// custom resource status strategy): not the labels, not the spec.
	updated.SetLabels(map[string]string{"via": "status"})
	_ = unstructured.SetNestedField(updated.Object, int64(9), "spec", "replicas")
	withStatus, err := c.UpdateStatus(ctx, updated, metav1.UpdateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if r, _, _ := unstructured.NestedInt64(withStatus.Object, "status", "replicas"); r != 4 || withStatus.GetGeneration() != 2 {
		t.Errorf("status update: replicas %d generation %d", r, withStatus.GetGeneration())
	}
	if spec, _, _ := unstructured.NestedInt64(withStatus.Object, "spec", "replicas"); spec != 4 || withStatus.GetLabels()["via"] != "" {
		t.Errorf("status update: spec.replicas %d labels %v, want the stored 4 and no label", spec, withStatus.GetLabels())
	}
	list, err := c.List(ctx, metav1.ListOptions{FieldSelector: "metadata.name=b"})
	if err != nil || len(list.Items) != 1 || list.Items[0].GetName() != "b" {
		t.Errorf("field selector: %v %v", err, list)
	}
	page, err := c.List(ctx, metav1.ListOptions{Limit: 1})
	if err != nil || len(page.Items) != 1 || page.GetContinue() == "" {
		t.Fatalf("first page: %v %+v", err, page)
	}
	rest, err := c.List(ctx, metav1.ListOptions{Limit: 1, Continue: page.GetContinue()})
	if err != nil || len(rest.Items) != 1 || rest.Items[0].GetName() == page.Items[0].GetName() {
		t.Errorf("second page: %v %+v", err, rest)
	}
	if _, err := c.Patch(ctx, "b", types.MergePatchType, []byte(`{"metadata":{"labels":{"app":"web"}}}`), metav1.PatchOptions{}); err != nil {
		t.Fatal(err)
	}
	if err := c.Delete(ctx, "a", metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}

	// The watch saw a's life and b entering the selection.
	var got []string
	timeout := time.After(5 * time.Second)
	for len(got) < 5 {
		select {
		case ev := <-w.ResultChan():
			u, ok := ev.Object.(*unstructured.Unstructured)
			if !ok {
				t.Fatalf("watch event %s: %T", ev.Type, ev.Object)
			}
			if u.GetAPIVersion() != "stable.example.com/v1" || u.GetKind() != "CronTab" {
				t.Errorf("watch object kind %s %s", u.GetAPIVersion(), u.GetKind())
			}
			got = append(got, string(ev.Type)+" "+u.GetName())
		case <-timeout:
			t.Fatalf("watch events so far: %v", got)
		}
	}
	want := []string{"ADDED a", "MODIFIED a", "MODIFIED a", "ADDED b", "DELETED a"}
	if strings.Join(got, ",") != strings.Join(want, ",") {
		t.Errorf("watch events %v, want %v", got, want)
	}
}
