package patch

import (
	"net/http"
	"strings"
	"testing"

	appsv1 "k8s.io/api/apps/v1"
	autoscalingv1 "k8s.io/api/autoscaling/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
)

const deploymentApply = `apiVersion: apps/v1
kind: Deployment
metadata: {name: web, namespace: default}
spec:
  replicas: 1
  selector: {matchLabels: {app: web}}
  template:
    metadata: {labels: {app: web}}
    spec:
      containers: [{name: web, image: "nginx:1.27"}]
`

func TestScaleSubresourceManagedFields(t *testing.T) {
	parent, err := BuiltinFieldManager(deploymentGVK).ApplyPatch(nil, []byte(deploymentApply), "deployer", false, "")
	if err != nil {
		t.Fatal(err)
	}
	deployment := parent.(*appsv1.Deployment)

	// kubectl scale: a merge patch on the Scale view by "kubectl-scale".
	scaleEntries, err := ScaleManagedFields(deployment, appsv1.SchemeGroupVersion)
	if err != nil {
		t.Fatal(err)
	}
	if len(scaleEntries) != 1 || scaleEntries[0].Manager != "deployer" || scaleEntries[0].APIVersion != "autoscaling/v1" {
		t.Fatalf("scale view entries = %+v", scaleEntries)
	}
	oldScale := &autoscalingv1.Scale{
		ObjectMeta: metav1.ObjectMeta{Name: "web", Namespace: "default", ManagedFields: scaleEntries},
		Spec:       autoscalingv1.ScaleSpec{Replicas: 1},
	}
	patched, _, err := Apply(oldScale, ScaleGVK, types.MergePatchType, []byte(`{"spec":{"replicas":3}}`), "")
	if err != nil {
		t.Fatal(err)
	}
	newScale, err := BuiltinFieldManager(ScaleGVK).UpdateManagedFields(oldScale, patched, "kubectl-scale", "scale")
	if err != nil {
		t.Fatal(err)
	}
	parentEntries, err := ParentManagedFields(deployment, appsv1.SchemeGroupVersion, newScale.(*autoscalingv1.Scale))
	if err != nil {
		t.Fatal(err)
	}
	deployment.ManagedFields = parentEntries
	got := entries(t, deployment)
	if !strings.Contains(got["kubectl-scale/Update/scale"], `"f:replicas"`) || strings.Contains(got["deployer/Apply/"], `"f:replicas"`) {
		t.Fatalf("parent managedFields = %v", got)
	}
	if !strings.Contains(got["deployer/Apply/"], `"f:template"`) {
		t.Fatalf("the applier keeps its other fields: %v", got)
	}

	// Re-applying the old replicas now conflicts with the scaler.
	replicas := int32(3)
	deployment.Spec.Replicas = &replicas
	_, err = BuiltinFieldManager(deploymentGVK).ApplyPatch(deployment, []byte(deploymentApply), "deployer", false, "")
	status := wantStatus(t, err, http.StatusConflict, metav1.StatusReasonConflict)
	if want := `Apply failed with 1 conflict: conflict with "kubectl-scale" with subresource "scale" using apps/v1: .spec.replicas`; status.ErrStatus.Message != want {
		t.Fatalf("message = %q, want %q", status.ErrStatus.Message, want)
	}
}
