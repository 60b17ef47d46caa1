package cli_test

import (
	"context"
	"os/exec"
	"regexp"
	"strings"
	"testing"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	autoscalingv1 "k8s.io/api/autoscaling/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/kubernetes"
	"k8s.io/utils/ptr"

	"github.com/devplane/devplane/apiserver/history"
	"github.com/devplane/devplane/apiserver/testenv"
	"github.com/devplane/devplane/certs"
)

// The case: after `kubectl scale deploy web --replicas 5`,
// `devplane history deployments web --field spec.replicas` names the
// kubectl user and the time.
func TestHistoryNamesWhoScaled(t *testing.T) {
	env := testenv.StartT(t, testenv.Options{})
	kc := env.KubeconfigPath()
	ctx := t.Context()
	c := kubernetes.NewForConfigOrDie(env.Config())
	kubectl := func(args ...string) {
		t.Helper()
		path := requireKubectlOrNot()
		out, err := exec.CommandContext(ctx, path, append([]string{"--kubeconfig", kc}, args...)...).CombinedOutput()
		if err != nil {
			t.Fatalf("kubectl %s: %v\n%s", strings.Join(args, " "), err, out)
		}
	}
	withKubectl := requireKubectlOrNot() != ""

	start := time.Now().Truncate(time.Second)
	if _, err := c.AppsV1().Deployments("default").Create(ctx, &appsv1.Deployment{
		ObjectMeta: metav1.ObjectMeta{Name: "web"},
		Spec: appsv1.DeploymentSpec{Replicas: ptr.To[int32](3),
			Selector: &metav1.LabelSelector{MatchLabels: map[string]string{"app": "web"}},
			Template: corev1.PodTemplateSpec{ObjectMeta: metav1.ObjectMeta{Labels: map[string]string{"app": "web"}},
				Spec: corev1.PodSpec{Containers: []corev1.Container{{Name: "web", Image: "nginx"}}}}},
	}, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	// A label change between: a version that does not touch replicas.
	if _, err := c.AppsV1().Deployments("default").Patch(ctx, "web", "application/merge-patch+json",
		[]byte(`{"metadata":{"labels":{"tier":"front"}}}`), metav1.PatchOptions{FieldManager: "labeller"}); err != nil {
		t.Fatal(err)
	}
	scaledFrom := time.Now().Truncate(time.Second)
	if withKubectl {
		kubectl("scale", "deploy", "web", "--replicas", "5")
	} else {
		if _, err := c.AppsV1().Deployments("default").UpdateScale(ctx, "web", &autoscalingv1.Scale{
			ObjectMeta: metav1.ObjectMeta{Name: "web", Namespace: "default"}, Spec: autoscalingv1.ScaleSpec{Replicas: 5}},
			metav1.UpdateOptions{}); err != nil {
			t.Fatal(err)
		}
	}
	scaledBy := time.Now()

	out, err := devplaneIn(t, "history", "--kubeconfig", kc, "deployments", "web", "--field", "spec.replicas")
	if err != nil {
		t.Fatalf("history --field: %v\n%s", err, out)
	}
	lines := strings.Split(strings.TrimSpace(out), "\n")
	if len(lines) != 4 || !strings.Contains(lines[0], "deployments.apps default/web: 3 versions") {
		t.Fatalf("want a summary, a header and two changes (creation, scale), got:\n%s", out)
	}
	created, scaled := strings.Fields(lines[2]), strings.Fields(lines[3])
	if got := strings.Join(created[len(created)-3:], " "); got != "<unset> → 3" || created[3] != "create" {
		t.Errorf("creation line: %q", lines[2])
	}
	// RESOURCEVERSION TIME USER VERB MANAGER old → new
	if len(scaled) != 8 || scaled[2] != certs.AdminCommonName || strings.Join(scaled[5:], " ") != "3 → 5" {
		t.Fatalf("scale line %q: want user %s and 3 → 5", lines[3], certs.AdminCommonName)
	}
	wantVerb, wantManager := "update/scale", "cli.test" // client-go's, from the User-Agent
	if withKubectl {
		wantVerb, wantManager = "patch/scale", "kubectl"
	}
	if scaled[3] != wantVerb || scaled[4] != wantManager {
		t.Errorf("scale line %q: want verb %s, field manager %s", lines[3], wantVerb, wantManager)
	}
	at, err := time.Parse(time.RFC3339, scaled[1])
	if err != nil || at.Before(scaledFrom) || at.After(scaledBy) {
		t.Errorf("scale time %q (%v), want between %s and %s", scaled[1], err, scaledFrom, scaledBy)
	}
	if at.Before(start) {
		t.Errorf("scale time %s before the test started", at)
	}

	// The whole history by short name: diffs without managedFields, unless asked.
	out, err = devplaneIn(t, "history", "--kubeconfig", kc, "deploy", "web", "-n", "default")
	if err != nil {
		t.Fatalf("history: %v\n%s", err, out)
	}
	for _, want := range []string{"+  replicas: 3\n", "-  replicas: 3\n+  replicas: 5\n", "+    tier: front\n", "manager=labeller", "verb=create"} {
		if !strings.Contains(out, want) {
			t.Errorf("history lacks %q:\n%s", want, out)
		}
	}
	if strings.Contains(out, "managedFields") || strings.Contains(out, "resourceVersion:") {
		t.Errorf("history shows managedFields or resourceVersion:\n%s", out)
	}
	if out, err := devplaneIn(t, "history", "--kubeconfig", kc, "deployments.apps", "web", "--show-managed-fields"); err != nil || !strings.Contains(out, "managedFields") {
		t.Errorf("--show-managed-fields: %v\n%s", err, out)
	}

	// A deleted object's history lasts up to its deletion.
	if err := c.AppsV1().Deployments("default").Delete(ctx, "web", metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	out, err = devplaneIn(t, "history", "--kubeconfig", kc, "deployment", "web", "--field", "spec.replicas")
	if err != nil || !strings.Contains(out, "4 versions") || !strings.Contains(out, "5 → <deleted>") {
		t.Errorf("history after the deletion: %v\n%s", err, out)
	}

	if out, err := devplaneIn(t, "history", "--kubeconfig", kc, "nosuchthings", "web"); err == nil {
		t.Errorf("history of an unknown resource: %q", out)
	}
	if out, err := devplaneIn(t, "history", "--kubeconfig", kc, "deployments", "web", "--field", "spec..replicas"); err == nil {
		t.Errorf("history with a bad --field: %q", out)
	}
}

// Only cluster admins read history; bad queries get a Status; custom
// resources have history too.
func TestHistoryEndpointAnswers(t *testing.T) {
	env := testenv.StartT(t, testenv.Options{CRDDirectoryPaths: []string{"../testdata/examples/crds/widgets.yaml"}})
	ctx := t.Context()
	get := func(c *kubernetes.Clientset, query map[string]string) error {
		req := c.CoreV1().RESTClient().Get().AbsPath(history.Path)
		for k, v := range query {
			req.Param(k, v)
		}
		return req.Do(ctx).Error()
	}
	admin := kubernetes.NewForConfigOrDie(env.Config())
	cm := map[string]string{"resource": "configmaps", "namespace": "default", "name": "kube-root-ca.crt"}
	if err := waitFor(ctx, func() error { return get(admin, cm) }); err != nil {
		t.Fatalf("admin reading a ConfigMap's history: %v", err)
	}
	alice := kubernetes.NewForConfigOrDie(env.ConfigFor("alice", "system:authenticated"))
	if err := get(alice, cm); !apierrors.IsForbidden(err) {
		t.Errorf("a non-admin reading history: %v, want 403", err)
	}
	for _, bad := range []struct {
		query map[string]string
		is    func(error) bool
	}{
		{map[string]string{"resource": "configmaps", "namespace": "default"}, apierrors.IsBadRequest},
		{map[string]string{"resource": "configmaps", "name": "x"}, apierrors.IsBadRequest},
		{map[string]string{"resource": "configmaps", "namespace": "default", "name": "x", "limit": "-1"}, apierrors.IsBadRequest},
		{map[string]string{"resource": "nosuchthings", "name": "x"}, apierrors.IsNotFound},
		{map[string]string{"resource": "configmaps", "namespace": "default", "name": "nosuchmap"}, apierrors.IsNotFound},
	} {
		if err := get(admin, bad.query); !bad.is(err) {
			t.Errorf("%v: %v", bad.query, err)
		}
	}

	widgets := dynamic.NewForConfigOrDie(env.Config()).Resource(
		schema.GroupVersionResource{Group: "examples.devplane.dev", Version: "v1", Resource: "widgets"}).Namespace("default")
	w := &unstructured.Unstructured{Object: map[string]any{"apiVersion": "examples.devplane.dev/v1", "kind": "Widget",
		"metadata": map[string]any{"name": "w"}, "spec": map[string]any{"message": "hello"}}}
	if _, err := widgets.Create(ctx, w, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	if _, err := widgets.Patch(ctx, "w", types.MergePatchType, []byte(`{"spec":{"message":"bye"}}`), metav1.PatchOptions{FieldManager: "greeter"}); err != nil {
		t.Fatal(err)
	}
	out, err := devplaneIn(t, "history", "--kubeconfig", env.KubeconfigPath(), "widgets.examples.devplane.dev", "w", "--field", "spec.message")
	if err != nil || !strings.Contains(out, "2 versions") || !regexp.MustCompile(`greeter +hello → bye`).MatchString(out) {
		t.Errorf("a custom resource's history: %v\n%s", err, out)
	}
}

// requireKubectlOrNot is kubectl's path, or "" when it is not installed
// (the tests then scale with client-go).
func requireKubectlOrNot() string {
	path, err := exec.LookPath("kubectl")
	if err != nil {
		return ""
	}
	return path
}

// waitFor retries f for up to 10 seconds (the root CA ConfigMap appears
// once its controller ran).
func waitFor(ctx context.Context, f func() error) error {
	deadline := time.Now().Add(10 * time.Second)
	for {
		err := f()
		if err == nil || time.Now().After(deadline) {
			return err
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(100 * time.Millisecond):
		}
	}
}
