package testenv_test

import (
	"context"
	"fmt"
	"os"
	"sync"
	"testing"

	admissionregistrationv1 "k8s.io/api/admissionregistration/v1"
	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/dynamic"
	"sigs.k8s.io/yaml"

	"github.com/devplane/devplane/apiserver/testenv"
)

// What the example suites load (see testdata/examples/README.md).
const (
	exampleCRDs    = "../../testdata/examples/crds"
	exampleWebhook = "../../testdata/examples/webhooks/validating.yaml"
)

var widgetGVR = schema.GroupVersionResource{Group: "examples.devplane.dev", Version: "v1", Resource: "widgets"}

var rbacClusterRole = rbacv1.ClusterRole{ObjectMeta: metav1.ObjectMeta{Name: "test-reader"},
	Rules: []rbacv1.PolicyRule{{APIGroups: []string{""}, Resources: []string{"pods"}, Verbs: []string{"get"}}}}

// create500 makes namespaces team-a and team-b with 250 ConfigMaps each.
func create500(t testing.TB, env *testenv.Instance) {
	t.Helper()
	c := clientFor(t, env.Config())
	for _, ns := range []string{"team-a", "team-b"} {
		_, err := c.CoreV1().Namespaces().Create(t.Context(), &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: ns}}, metav1.CreateOptions{})
		if err != nil && !apierrors.IsAlreadyExists(err) {
			t.Fatal(err)
		}
	}
	var wg sync.WaitGroup
	errs := make(chan error, 500)
	for w := range 10 { // ten writers: creating 500 one by one is slower than Reset
		wg.Go(func() {
			for i := w; i < 500; i += 10 {
				ns := []string{"team-a", "team-b"}[i%2]
				cm := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: fmt.Sprintf("cm-%d", i),
					Labels: map[string]string{"suite": "reset"}}, Data: map[string]string{"i": fmt.Sprint(i)}}
				if _, err := c.CoreV1().ConfigMaps(ns).Create(t.Context(), cm, metav1.CreateOptions{}); err != nil {
					errs <- err
					return
				}
			}
		})
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Fatal(err)
	}
}

func readWebhookConfig(t testing.TB) ([]*admissionregistrationv1.ValidatingWebhookConfiguration, error) {
	t.Helper()
	data, err := os.ReadFile(exampleWebhook)
	if err != nil {
		return nil, err
	}
	cfg := &admissionregistrationv1.ValidatingWebhookConfiguration{}
	if err := yaml.UnmarshalStrict(data, cfg); err != nil {
		return nil, err
	}
	return []*admissionregistrationv1.ValidatingWebhookConfiguration{cfg}, nil
}

func widgetClient(t testing.TB, env *testenv.Instance, namespace string) dynamic.ResourceInterface {
	t.Helper()
	dyn, err := dynamic.NewForConfig(env.Config())
	if err != nil {
		t.Fatal(err)
	}
	return dyn.Resource(widgetGVR).Namespace(namespace)
}

func newWidget(name, message string) *unstructured.Unstructured {
	return &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": "examples.devplane.dev/v1",
		"kind":       "Widget",
		"metadata":   map[string]any{"name": name},
		"spec":       map[string]any{"message": message},
	}}
}

// runUntilCleanup runs start (a manager's, a webhook server's) until t's
// cleanup, which stops it and reports its error. Registered after StartT's
// cleanup, it runs before devplane stops.
func runUntilCleanup(t *testing.T, what string, start func(context.Context) error) {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- start(ctx) }()
	t.Cleanup(func() {
		cancel()
		if err := <-done; err != nil {
			t.Errorf("%s: %v", what, err)
		}
	})
}
