package patch

import (
	"net/http"
	"strings"
	"testing"

	appsv1 "k8s.io/api/apps/v1"
	autoscalingv1 "k8s.io/api/autoscaling/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/intstr"
)

var (
	deploymentGVK = appsv1.SchemeGroupVersion.WithKind("Deployment")
	configMapGVK  = corev1.SchemeGroupVersion.WithKind("ConfigMap")
	scaleGVK      = autoscalingv1.SchemeGroupVersion.WithKind("Scale")
	widgetGVK     = schema.GroupVersionKind{Group: "example.com", Version: "v1", Kind: "Widget"}
)

func testDeployment() *appsv1.Deployment {
	maxSurge := intstr.FromString("25%")
	return &appsv1.Deployment{
		ObjectMeta: metav1.ObjectMeta{Name: "web", Namespace: "default", Labels: map[string]string{"app": "web"}},
		Spec: appsv1.DeploymentSpec{
			Selector: &metav1.LabelSelector{MatchLabels: map[string]string{"app": "web"}},
			Strategy: appsv1.DeploymentStrategy{
				Type:          appsv1.RollingUpdateDeploymentStrategyType,
				RollingUpdate: &appsv1.RollingUpdateDeployment{MaxSurge: &maxSurge},
			},
			Template: corev1.PodTemplateSpec{
				ObjectMeta: metav1.ObjectMeta{Labels: map[string]string{"app": "web"}},
				Spec: corev1.PodSpec{Containers: []corev1.Container{
					{Name: "web", Image: "nginx:1.27"},
					{Name: "sidecar", Image: "envoy:1.30"},
				}},
			},
		},
	}
}

func applyOK(t *testing.T, current runtime.Object, gvk schema.GroupVersionKind, pt types.PatchType, body string) runtime.Object {
	t.Helper()
	out, warnings, err := Apply(current, gvk, pt, []byte(body), metav1.FieldValidationStrict)
	if err != nil {
		t.Fatalf("%s patch %s: %v", pt, body, err)
	}
	if len(warnings) > 0 {
		t.Fatalf("unexpected warnings: %q", warnings)
	}
	return out
}

func wantStatus(t *testing.T, err error, code int32, reason metav1.StatusReason) *apierrors.StatusError {
	t.Helper()
	status, ok := err.(*apierrors.StatusError)
	if !ok {
		t.Fatalf("want a %d status error, got %T %v", code, err, err)
	}
	if status.ErrStatus.Code != code || status.ErrStatus.Reason != reason {
		t.Fatalf("want %d %s, got %d %s: %s", code, reason, status.ErrStatus.Code, status.ErrStatus.Reason, status.ErrStatus.Message)
	}
	return status
}

func TestStrategicAddsEnvByContainerName(t *testing.T) {
	current := testDeployment()
	out := applyOK(t, current, deploymentGVK, types.StrategicMergePatchType,
		`{"spec":{"template":{"spec":{"containers":[{"name":"web","env":[{"name":"MODE","value":"prod"}]}]}}}}`)
	d := out.(*appsv1.Deployment)
	containers := d.Spec.Template.Spec.Containers
	if len(containers) != 2 {
		t.Fatalf("containers merged by name should stay 2, got %d", len(containers))
	}
	web := containers[0]
	if web.Name != "web" || web.Image != "nginx:1.27" || len(web.Env) != 1 || web.Env[0].Value != "prod" {
		t.Fatalf("web container = %+v", web)
	}
	if d.APIVersion != "apps/v1" || d.Kind != "Deployment" {
		t.Fatalf("TypeMeta = %v", d.TypeMeta)
	}
	if len(current.Spec.Template.Spec.Containers[0].Env) != 0 {
		t.Fatal("current object was modified")
	}
}

func TestStrategicDeleteDirectiveRemovesContainer(t *testing.T) {
	out := applyOK(t, testDeployment(), deploymentGVK, types.StrategicMergePatchType,
		`{"spec":{"template":{"spec":{"containers":[{"name":"sidecar","$patch":"delete"}]}}}}`)
	containers := out.(*appsv1.Deployment).Spec.Template.Spec.Containers
	if len(containers) != 1 || containers[0].Name != "web" {
		t.Fatalf("containers = %+v", containers)
	}
}

func TestStrategicRetainKeysDropsRollingUpdate(t *testing.T) {
	// What kubectl apply sends when switching to Recreate: strategy has
	// patchStrategy retainKeys, so rollingUpdate must go.
	out := applyOK(t, testDeployment(), deploymentGVK, types.StrategicMergePatchType,
		`{"spec":{"strategy":{"$retainKeys":["type"],"type":"Recreate"}}}`)
	strategy := out.(*appsv1.Deployment).Spec.Strategy
	if strategy.Type != appsv1.RecreateDeploymentStrategyType || strategy.RollingUpdate != nil {
		t.Fatalf("strategy = %+v", strategy)
	}
}

func TestStrategicSetElementOrder(t *testing.T) {
	out := applyOK(t, testDeployment(), deploymentGVK, types.StrategicMergePatchType,
		`{"spec":{"template":{"spec":{"$setElementOrder/containers":[{"name":"sidecar"},{"name":"web"}],"containers":[{"name":"web","image":"nginx:1.28"}]}}}}`)
	containers := out.(*appsv1.Deployment).Spec.Template.Spec.Containers
	if len(containers) != 2 || containers[0].Name != "sidecar" || containers[1].Name != "web" || containers[1].Image != "nginx:1.28" {
		t.Fatalf("containers = %+v", containers)
	}
}

func TestStrategicDeleteFromPrimitiveList(t *testing.T) {
	current := testDeployment()
	current.Finalizers = []string{"a", "b", "c"}
	out := applyOK(t, current, deploymentGVK, types.StrategicMergePatchType, `{"metadata":{"$deleteFromPrimitiveList/finalizers":["b"]}}`)
	if got := out.(*appsv1.Deployment).Finalizers; strings.Join(got, ",") != "a,c" {
		t.Fatalf("finalizers = %v", got)
	}
}

func TestStrategicBadRetainKeysIs400(t *testing.T) {
	_, _, err := Apply(testDeployment(), deploymentGVK, types.StrategicMergePatchType,
		[]byte(`{"spec":{"strategy":{"$retainKeys":["type"],"type":"Recreate","rollingUpdate":{"maxSurge":1}}}}`), "")
	status := wantStatus(t, err, http.StatusBadRequest, metav1.StatusReasonBadRequest)
	if status.ErrStatus.Message != "invalid patch format of retainKeys" {
		t.Fatalf("message = %q", status.ErrStatus.Message)
	}
}

func TestMergePatchNullDeletes(t *testing.T) {
	current := &corev1.ConfigMap{
		ObjectMeta: metav1.ObjectMeta{Name: "cfg", Namespace: "default"},
		Data:       map[string]string{"keep": "1", "drop": "2"},
	}
	out := applyOK(t, current, configMapGVK, types.MergePatchType, `{"data":{"drop":null,"new":"3"}}`)
	data := out.(*corev1.ConfigMap).Data
	if len(data) != 2 || data["keep"] != "1" || data["new"] != "3" {
		t.Fatalf("data = %v", data)
	}
}

func TestMergePatchReplacesLists(t *testing.T) {
	out := applyOK(t, testDeployment(), deploymentGVK, types.MergePatchType,
		`{"spec":{"template":{"spec":{"containers":[{"name":"only","image":"busybox"}]}}}}`)
	containers := out.(*appsv1.Deployment).Spec.Template.Spec.Containers
	if len(containers) != 1 || containers[0].Name != "only" {
		t.Fatalf("merge patch must replace lists wholesale, got %+v", containers)
	}
}

func TestJSONPatchOperations(t *testing.T) {
	out := applyOK(t, testDeployment(), deploymentGVK, types.JSONPatchType, `[
		{"op":"test","path":"/spec/template/spec/containers/0/name","value":"web"},
		{"op":"replace","path":"/spec/template/spec/containers/0/image","value":"nginx:1.28"},
		{"op":"add","path":"/metadata/labels/tier","value":"front"},
		{"op":"remove","path":"/spec/template/spec/containers/1"},
		{"op":"copy","from":"/metadata/labels/app","path":"/metadata/labels/copied"},
		{"op":"move","from":"/metadata/labels/copied","path":"/metadata/labels/moved"}
	]`)
	d := out.(*appsv1.Deployment)
	if d.Spec.Template.Spec.Containers[0].Image != "nginx:1.28" || len(d.Spec.Template.Spec.Containers) != 1 {
		t.Fatalf("containers = %+v", d.Spec.Template.Spec.Containers)
	}
	if d.Labels["tier"] != "front" || d.Labels["moved"] != "web" || d.Labels["copied"] != "" {
		t.Fatalf("labels = %v", d.Labels)
	}
}

func TestJSONPatchFailingTestIs422(t *testing.T) {
	_, _, err := Apply(testDeployment(), deploymentGVK, types.JSONPatchType,
		[]byte(`[{"op":"test","path":"/metadata/name","value":"other"}]`), "")
	status := wantStatus(t, err, http.StatusUnprocessableEntity, metav1.StatusReasonInvalid)
	// kube's generic 422 drops the detail; kubectl prints exactly this.
	if status.ErrStatus.Message != "the server rejected our request due to an error in our request" {
		t.Fatalf("message = %q", status.ErrStatus.Message)
	}
}

func TestJSONPatchUndecodableIs400(t *testing.T) {
	_, _, err := Apply(testDeployment(), deploymentGVK, types.JSONPatchType, []byte(`{"op":"add"}`), "")
	wantStatus(t, err, http.StatusBadRequest, metav1.StatusReasonBadRequest)
}

func TestJSONPatchTooManyOperationsIs413(t *testing.T) {
	ops := strings.Repeat(`{"op":"test","path":"/kind","value":"Deployment"},`, MaxJSONPatchOperations+1)
	_, _, err := Apply(testDeployment(), deploymentGVK, types.JSONPatchType, []byte("["+strings.TrimSuffix(ops, ",")+"]"), "")
	status := wantStatus(t, err, http.StatusRequestEntityTooLarge, metav1.StatusReasonRequestEntityTooLarge)
	if !strings.Contains(status.ErrStatus.Message, "The allowed maximum operations in a JSON patch is 10000, got 10001") {
		t.Fatalf("message = %q", status.ErrStatus.Message)
	}
}

func testWidget() *unstructured.Unstructured {
	return &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": "example.com/v1", "kind": "Widget",
		"metadata": map[string]any{"name": "w", "namespace": "default"},
		"spec":     map[string]any{"size": int64(1), "items": []any{"a", "b"}},
	}}
}

func TestStrategicOnCustomResourceIs415(t *testing.T) {
	_, _, err := Apply(testWidget(), widgetGVK, types.StrategicMergePatchType, []byte(`{"spec":{"size":2}}`), "")
	status := wantStatus(t, err, http.StatusUnsupportedMediaType, metav1.StatusReasonUnsupportedMediaType)
	want := "the body of the request was in an unknown format - accepted media types include: application/json-patch+json, application/merge-patch+json, application/apply-patch+yaml"
	if status.ErrStatus.Message != want {
		t.Fatalf("message = %q", status.ErrStatus.Message)
	}
}

func TestMergeAndJSONPatchOnCustomResource(t *testing.T) {
	out := applyOK(t, testWidget(), widgetGVK, types.MergePatchType, `{"spec":{"size":3,"items":null,"color":"red"}}`)
	spec := out.(*unstructured.Unstructured).Object["spec"].(map[string]any)
	if spec["size"] != int64(3) || spec["color"] != "red" || spec["items"] != nil {
		t.Fatalf("spec = %v", spec)
	}
	out = applyOK(t, out, widgetGVK, types.JSONPatchType, `[{"op":"replace","path":"/spec/color","value":"blue"}]`)
	if got := out.(*unstructured.Unstructured).Object["spec"].(map[string]any)["color"]; got != "blue" {
		t.Fatalf("color = %v", got)
	}
}

func TestPatchScaleSubresource(t *testing.T) {
	scale := &autoscalingv1.Scale{
		ObjectMeta: metav1.ObjectMeta{Name: "web", Namespace: "default"},
		Spec:       autoscalingv1.ScaleSpec{Replicas: 1},
	}
	out := applyOK(t, scale, scaleGVK, types.MergePatchType, `{"spec":{"replicas":4}}`)
	if got := out.(*autoscalingv1.Scale).Spec.Replicas; got != 4 {
		t.Fatalf("replicas = %d", got)
	}
	out = applyOK(t, scale, scaleGVK, types.StrategicMergePatchType, `{"spec":{"replicas":5}}`)
	if got := out.(*autoscalingv1.Scale).Spec.Replicas; got != 5 {
		t.Fatalf("replicas = %d", got)
	}
}

func TestPatchStatusSubresource(t *testing.T) {
	out := applyOK(t, testDeployment(), deploymentGVK, types.StrategicMergePatchType,
		`{"status":{"replicas":2,"conditions":[{"type":"Available","status":"True"}]}}`)
	status := out.(*appsv1.Deployment).Status
	if status.Replicas != 2 || len(status.Conditions) != 1 || status.Conditions[0].Type != appsv1.DeploymentAvailable {
		t.Fatalf("status = %+v", status)
	}
}

func TestApplyPatchTypeIsNotAPlainPatch(t *testing.T) {
	_, _, err := Apply(testDeployment(), deploymentGVK, types.ApplyYAMLPatchType, []byte(`{}`), "")
	if err == nil {
		t.Fatal("apply patches must go through FieldManager.ApplyPatch")
	}
	_, _, err = Apply(testDeployment(), deploymentGVK, types.PatchType("text/plain"), []byte(`{}`), "")
	wantStatus(t, err, http.StatusUnsupportedMediaType, metav1.StatusReasonUnsupportedMediaType)
}
