package patch

import (
	"errors"
	"testing"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
)

// FuzzPatchBodies feeds arbitrary bodies of every patch type to a
// Deployment: the answer is a patched object or a Kubernetes Status error,
// never a panic and never a bare Go error.
func FuzzPatchBodies(f *testing.F) {
	seeds := []string{
		`{"spec":{"replicas":3}}`,
		`[{"op":"replace","path":"/spec/replicas","value":2}]`,
		`{"spec":{"template":{"spec":{"containers":[{"name":"app","$patch":"delete"}]}}}}`,
		`{"$retainKeys":["type"],"spec":{"strategy":{"type":"Recreate"}}}`,
		"apiVersion: apps/v1\nkind: Deployment\nmetadata: {name: web}\nspec: {replicas: 4}",
		`[{"op":"test","path":"/spec","value":null}]`, `{`, `[]`, `null`, `{"spec":null}`,
	}
	for i, s := range seeds {
		f.Add(uint8(i), []byte(s))
	}
	live := &appsv1.Deployment{
		TypeMeta:   metav1.TypeMeta{APIVersion: "apps/v1", Kind: "Deployment"},
		ObjectMeta: metav1.ObjectMeta{Name: "web", Namespace: "default"},
		Spec: appsv1.DeploymentSpec{
			Selector: &metav1.LabelSelector{MatchLabels: map[string]string{"app": "web"}},
			Template: corev1.PodTemplateSpec{
				ObjectMeta: metav1.ObjectMeta{Labels: map[string]string{"app": "web"}},
				Spec:       corev1.PodSpec{Containers: []corev1.Container{{Name: "app", Image: "nginx"}}},
			},
		},
	}
	gvk := appsv1.SchemeGroupVersion.WithKind("Deployment")
	patchTypes := []types.PatchType{types.JSONPatchType, types.MergePatchType, types.StrategicMergePatchType, types.ApplyPatchType}
	f.Fuzz(func(t *testing.T, which uint8, body []byte) {
		pt := patchTypes[int(which)%len(patchTypes)]
		var err error
		if pt == types.ApplyPatchType {
			_, err = BuiltinFieldManager(gvk).ApplyPatch(live.DeepCopy(), body, "fuzzer", false, "")
		} else {
			_, _, err = Apply(live.DeepCopy(), gvk, pt, body, "Strict")
		}
		var status apierrors.APIStatus
		if err != nil && !errors.As(err, &status) {
			t.Fatalf("%s patch %q: error is not a Kubernetes Status: %T %v", pt, body, err, err)
		}
	})
}
