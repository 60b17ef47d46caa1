package controllers_test

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/devplane/devplane/apiserver/controllers"
	"github.com/devplane/devplane/apiserver/controlplane/controlplanetest"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
)

func namespaceGone(t *testing.T, s *testServer, name string) func() (bool, string) {
	return func() (bool, string) {
		ns, err := s.client.CoreV1().Namespaces().Get(context.Background(), name, metav1.GetOptions{})
		if apierrors.IsNotFound(err) {
			return true, ""
		}
		if err != nil {
			return false, err.Error()
		}
		return false, fmt.Sprintf("phase %s, finalizers %v, conditions %+v", ns.Status.Phase, ns.Spec.Finalizers, ns.Status.Conditions)
	}
}

func createNamespace(t *testing.T, s *testServer, name string) {
	t.Helper()
	if _, err := s.client.CoreV1().Namespaces().Create(context.Background(), &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: name}}, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
}

func TestNamespaceController(t *testing.T) {
	s := startServer(t)
	ctx := context.Background()
	c, err := controllers.NewNamespaceController(s.cfg, s.cp.LocalReader, nil)
	if err != nil {
		t.Fatal(err)
	}
	run(t, c)

	t.Run("empty namespace", func(t *testing.T) {
		createNamespace(t, s, "empty")
		start := time.Now()
		if err := s.client.CoreV1().Namespaces().Delete(ctx, "empty", metav1.DeleteOptions{}); err != nil {
			t.Fatal(err)
		}
		controlplanetest.Eventually(t, 30*time.Second, "empty namespace deleted", namespaceGone(t, s, "empty"))
		t.Logf("empty namespace gone %s after delete", time.Since(start))
	})

	t.Run("content and finalizers", func(t *testing.T) {
		const ns = "full"
		createNamespace(t, s, ns)
		for i := range 20 {
			cm := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: fmt.Sprintf("cm-%d", i)}, Data: map[string]string{"k": "v"}}
			if _, err := s.client.CoreV1().ConfigMaps(ns).Create(ctx, cm, metav1.CreateOptions{}); err != nil {
				t.Fatal(err)
			}
		}
		blocked := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "blocked", Finalizers: []string{"example.com/block"}}}
		if _, err := s.client.CoreV1().ConfigMaps(ns).Create(ctx, blocked, metav1.CreateOptions{}); err != nil {
			t.Fatal(err)
		}
		labels := map[string]string{"app": "web"}
		deployment := &appsv1.Deployment{
			ObjectMeta: metav1.ObjectMeta{Name: "web"},
			Spec: appsv1.DeploymentSpec{
				Selector: &metav1.LabelSelector{MatchLabels: labels},
				Template: corev1.PodTemplateSpec{
					ObjectMeta: metav1.ObjectMeta{Labels: labels},
					Spec:       corev1.PodSpec{Containers: []corev1.Container{{Name: "web", Image: "nginx"}}},
				},
			},
		}
		if _, err := s.client.AppsV1().Deployments(ns).Create(ctx, deployment, metav1.CreateOptions{}); err != nil {
			t.Fatal(err)
		}
		if err := s.client.CoreV1().Namespaces().Delete(ctx, ns, metav1.DeleteOptions{}); err != nil {
			t.Fatal(err)
		}

		wantRemaining := "Some resources are remaining: configmaps. has 1 resource instances"
		wantFinalizers := "Some content in the namespace has finalizers remaining: example.com/block in 1 resource instances"
		controlplanetest.Eventually(t, 30*time.Second, "finalizer conditions", func() (bool, string) {
			got, err := s.client.CoreV1().Namespaces().Get(ctx, ns, metav1.GetOptions{})
			if err != nil {
				return false, err.Error()
			}
			var remaining, finalizers bool
			for _, c := range got.Status.Conditions {
				remaining = remaining || c.Type == corev1.NamespaceContentRemaining && c.Status == corev1.ConditionTrue && c.Message == wantRemaining
				finalizers = finalizers || c.Type == corev1.NamespaceFinalizersRemaining && c.Status == corev1.ConditionTrue &&
					c.Reason == "SomeFinalizersRemain" && c.Message == wantFinalizers
			}
			return remaining && finalizers, fmt.Sprintf("%+v", got.Status.Conditions)
		})
		// Everything else is gone; the blocked ConfigMap waits, undeleted by us.
		cms, err := s.client.CoreV1().ConfigMaps(ns).List(ctx, metav1.ListOptions{})
		if err != nil {
			t.Fatal(err)
		}
		if len(cms.Items) != 1 || cms.Items[0].Name != "blocked" || cms.Items[0].DeletionTimestamp == nil {
			t.Fatalf("want only the blocked ConfigMap, being deleted; got %+v", cms.Items)
		}
		if deps, err := s.client.AppsV1().Deployments(ns).List(ctx, metav1.ListOptions{}); err != nil || len(deps.Items) != 0 {
			t.Fatalf("deployments left: %v %v", deps, err)
		}

		start := time.Now()
		patch := []byte(`{"metadata":{"finalizers":null}}`)
		if _, err := s.client.CoreV1().ConfigMaps(ns).Patch(ctx, "blocked", types.MergePatchType, patch, metav1.PatchOptions{}); err != nil {
			t.Fatal(err)
		}
		controlplanetest.Eventually(t, 30*time.Second, "namespace deleted after finalizer removal", namespaceGone(t, s, ns))
		t.Logf("namespace gone %s after the finalizer was removed", time.Since(start))
	})

	t.Run("1000 objects", func(t *testing.T) {
		const ns = "many"
		createNamespace(t, s, ns)
		for i := range 1000 {
			cm := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: fmt.Sprintf("cm-%d", i)}}
			if _, err := s.client.CoreV1().ConfigMaps(ns).Create(ctx, cm, metav1.CreateOptions{}); err != nil {
				t.Fatal(err)
			}
		}
		start := time.Now()
		if err := s.client.CoreV1().Namespaces().Delete(ctx, ns, metav1.DeleteOptions{}); err != nil {
			t.Fatal(err)
		}
		controlplanetest.Eventually(t, 60*time.Second, "namespace with 1000 objects deleted", namespaceGone(t, s, ns))
		t.Logf("namespace with 1000 ConfigMaps gone %s after delete", time.Since(start))
	})
}
