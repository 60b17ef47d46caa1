package registry

import (
	"reflect"
	"testing"
	"unsafe"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"

	"github.com/devplane/devplane/apiserver/builtin"
	"github.com/devplane/devplane/apiserver/internal/populate"
)

// Two objects decoded from the same stored bytes end up sharing their
// repeated parts, and each still reads as the object that was stored.
func TestShareRepeatedParts(t *testing.T) {
	pod := &corev1.Pod{}
	populate.Fill(pod)
	pod.Name = "big-7d4b9c-x2x7k"
	pod.ManagedFields = append(pod.ManagedFields, metav1.ManagedFieldsEntry{Manager: "kubelet", Operation: metav1.ManagedFieldsOperationUpdate,
		APIVersion: "v1", FieldsType: "FieldsV1", FieldsV1: &metav1.FieldsV1{Raw: []byte(`{"f:status":{}}`)}})
	a, b := decodeTwice(t, "pods", pod)
	podA, podB := a.(*corev1.Pod), b.(*corev1.Pod)
	for i := range podA.ManagedFields {
		if &podA.ManagedFields[i].FieldsV1.Raw[0] != &podB.ManagedFields[i].FieldsV1.Raw[0] {
			t.Errorf("managedFields[%d].fieldsV1 kept apart", i)
		}
	}
	expectShared(t, "pod", map[string][2]string{
		"namespace":                           {podA.Namespace, podB.Namespace},
		"ownerReferences[0].name":             {podA.OwnerReferences[0].Name, podB.OwnerReferences[0].Name},
		"managedFields[1].manager":            {podA.ManagedFields[1].Manager, podB.ManagedFields[1].Manager},
		"spec.nodeName":                       {podA.Spec.NodeName, podB.Spec.NodeName},
		"spec.containers[0].image":            {podA.Spec.Containers[0].Image, podB.Spec.Containers[0].Image},
		"spec.tolerations[0].key":             {podA.Spec.Tolerations[0].Key, podB.Spec.Tolerations[0].Key},
		"status.conditions[0].type":           {string(podA.Status.Conditions[0].Type), string(podB.Status.Conditions[0].Type)},
		"status.containerStatuses[0].imageID": {podA.Status.ContainerStatuses[0].ImageID, podB.Status.ContainerStatuses[0].ImageID},
	})
	// A unique part stays the object's own.
	if unsafe.StringData(podA.Name) == unsafe.StringData(podB.Name) {
		t.Error("pod names shared")
	}

	event := &corev1.Event{}
	populate.Fill(event)
	event.Message = "Started container c"
	a, b = decodeTwice(t, "events", event)
	eventA, eventB := a.(*corev1.Event), b.(*corev1.Event)
	expectShared(t, "event", map[string][2]string{
		"involvedObject.kind": {eventA.InvolvedObject.Kind, eventB.InvolvedObject.Kind},
		"reason":              {eventA.Reason, eventB.Reason},
		"message":             {eventA.Message, eventB.Message},
		"source.host":         {eventA.Source.Host, eventB.Source.Host},
	})
}

// decodeTwice stores obj as the resource's cache would read it and decodes
// it twice, each time compacted as the watch cache does.
func decodeTwice(t *testing.T, resource string, obj runtime.Object) (runtime.Object, runtime.Object) {
	t.Helper()
	k, ok := builtin.Lookup(corev1.SchemeGroupVersion.WithResource(resource))
	if !ok {
		t.Fatalf("no built-in %s", resource)
	}
	cfg := StorageConfig(k)
	data, handled, err := cfg.Encode(obj)
	if err != nil || !handled {
		t.Fatalf("encode: handled %v, %v", handled, err)
	}
	decode := func() runtime.Object {
		t.Helper()
		out := k.New()
		if _, err := cfg.Decode(data, nil, out); err != nil {
			t.Fatal(err)
		}
		want := out.DeepCopyObject()
		cfg.Compact(out)
		if !reflect.DeepEqual(out, want) {
			t.Fatalf("compacting changed the %s:\n%+v\nwant\n%+v", resource, out, want)
		}
		return out
	}
	return decode(), decode()
}

func expectShared(t *testing.T, what string, parts map[string][2]string) {
	t.Helper()
	for name, pair := range parts {
		if pair[0] == "" {
			t.Errorf("%s %s: empty (the test object lacks it)", what, name)
		} else if unsafe.StringData(pair[0]) != unsafe.StringData(pair[1]) {
			t.Errorf("%s %s kept apart", what, name)
		}
	}
}
