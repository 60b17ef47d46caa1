package registry

import (
	"reflect"
	"testing"
	"unsafe"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/devplane/devplane/apiserver/builtin"
	"github.com/devplane/devplane/apiserver/internal/populate"
)

// Two pods decoded from the same stored bytes end up sharing the repeated
// metadata, and each still reads as the pod that was stored.
func TestShareMetadataSharesRepeatedParts(t *testing.T) {
	k, ok := builtin.Lookup(corev1.SchemeGroupVersion.WithResource("pods"))
	if !ok {
		t.Fatal("no built-in pods")
	}
	pod := &corev1.Pod{}
	populate.Fill(pod)
	pod.ManagedFields = append(pod.ManagedFields, metav1.ManagedFieldsEntry{Manager: "kubelet", Operation: metav1.ManagedFieldsOperationUpdate,
		APIVersion: "v1", FieldsType: "FieldsV1", FieldsV1: &metav1.FieldsV1{Raw: []byte(`{"f:status":{}}`)}})
	cfg := StorageConfig(k)
	data, handled, err := cfg.Encode(pod)
	if err != nil || !handled {
		t.Fatalf("encode: handled %v, %v", handled, err)
	}
	decode := func() *corev1.Pod {
		t.Helper()
		out := &corev1.Pod{}
		if _, err := cfg.Decode(data, nil, out); err != nil {
			t.Fatal(err)
		}
		want := out.DeepCopy()
		cfg.Compact(out)
		if !reflect.DeepEqual(out, want) {
			t.Fatalf("compacting changed the pod:\n%+v\nwant\n%+v", out.ObjectMeta, want.ObjectMeta)
		}
		return out
	}
	a, b := decode(), decode()
	if len(a.ManagedFields) < 2 {
		t.Fatalf("%d managedFields entries", len(a.ManagedFields))
	}
	for i := range a.ManagedFields {
		if &a.ManagedFields[i].FieldsV1.Raw[0] != &b.ManagedFields[i].FieldsV1.Raw[0] {
			t.Errorf("managedFields[%d].fieldsV1 kept apart", i)
		}
		if a.ManagedFields[i].Manager != "" && unsafeData(a.ManagedFields[i].Manager) != unsafeData(b.ManagedFields[i].Manager) {
			t.Errorf("managedFields[%d].manager kept apart", i)
		}
	}
	if unsafeData(a.Namespace) != unsafeData(b.Namespace) || unsafeData(a.OwnerReferences[0].Name) != unsafeData(b.OwnerReferences[0].Name) {
		t.Error("namespace or owner kept apart")
	}
}

func unsafeData(s string) *byte { return unsafe.StringData(s) }
