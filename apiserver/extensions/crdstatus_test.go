package extensions_test

import (
	"context"
	"slices"
	"strconv"
	"testing"
	"time"

	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/watch"

	"github.com/devplane/devplane/apiserver/controlplane/controlplanetest"
)

// A CRD's status write may change its metadata, finalizers and labels
// alike (kube's CRD status strategy resets the spec only, see
// kubernetes/kubernetes#137681; the cleanup finalizer goes that way); a deleted
// CRD's watch event carries the deletion revision and the whole CRD.
func TestCRDStatusWritesFinalizersAndDeletion(t *testing.T) {
	d := start(t)
	ctx := context.Background()
	crds := d.apiext(t).ApiextensionsV1().CustomResourceDefinitions()
	const name = "crontabs.stable.example.com"
	if _, err := crds.Create(ctx, readCRD(t, "crontab-crd.yaml"), metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	crd := waitEstablished(t, d.apiext(t), name)

	const hold = "example.com/hold"
	crd.Finalizers = append(crd.Finalizers, hold)
	crd.Labels = map[string]string{"from": "status"}
	got, err := crds.UpdateStatus(ctx, crd, metav1.UpdateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Contains(got.Finalizers, hold) {
		t.Fatalf("finalizers after a status write: %v, want %s among them", got.Finalizers, hold)
	}
	if got.Labels["from"] != "status" {
		t.Fatalf("labels after a status write: %v, want the written from=status", got.Labels)
	}

	w, err := crds.Watch(ctx, metav1.ListOptions{ResourceVersion: got.ResourceVersion})
	if err != nil {
		t.Fatal(err)
	}
	defer w.Stop()
	if err := crds.Delete(ctx, name, metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	// The controller removes its cleanup finalizer (through /status); ours
	// keeps the CRD.
	var held *apiextensionsv1.CustomResourceDefinition
	controlplanetest.Eventually(t, 10*time.Second, "cleanup finalizer removed", func() (bool, string) {
		cur, err := crds.Get(ctx, name, metav1.GetOptions{})
		if err != nil {
			return false, err.Error()
		}
		held = cur
		return cur.DeletionTimestamp != nil && slices.Equal(cur.Finalizers, []string{hold}), strconv.Quote(cur.ResourceVersion)
	})
	held.Finalizers = nil
	if _, err := crds.UpdateStatus(ctx, held, metav1.UpdateOptions{}); err != nil && !apierrors.IsNotFound(err) {
		t.Fatal(err)
	}
	controlplanetest.Eventually(t, 10*time.Second, "CRD gone", func() (bool, string) {
		_, err := crds.Get(ctx, name, metav1.GetOptions{})
		return apierrors.IsNotFound(err), ""
	})

	var last int64
	timeout := time.After(10 * time.Second)
	for {
		select {
		case ev, ok := <-w.ResultChan():
			if !ok {
				t.Fatal("watch closed before the deletion")
			}
			obj, ok := ev.Object.(*apiextensionsv1.CustomResourceDefinition)
			if !ok {
				t.Fatalf("event %s: %T", ev.Type, ev.Object)
			}
			rv, _ := strconv.ParseInt(obj.ResourceVersion, 10, 64)
			if ev.Type != watch.Deleted {
				last = rv
				continue
			}
			if rv <= last {
				t.Fatalf("deleted at resourceVersion %d, not after the last change (%d)", rv, last)
			}
			if len(obj.Spec.Versions) == 0 || obj.Spec.Versions[0].Schema == nil || obj.Spec.Versions[0].Schema.OpenAPIV3Schema == nil {
				t.Fatal("the deleted event's CRD has no schema")
			}
			return
		case <-timeout:
			t.Fatal("no deleted event")
		}
	}
}
