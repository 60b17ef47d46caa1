package builtin

import (
	"reflect"
	"testing"

	corev1 "k8s.io/api/core/v1"
	eventsv1 "k8s.io/api/events/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/fields"
)

func TestGetAttrsPod(t *testing.T) {
	pod := &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{Name: "p", Namespace: "ns", Labels: map[string]string{"app": "web"}},
		Spec:       corev1.PodSpec{NodeName: "node-1", RestartPolicy: corev1.RestartPolicyAlways, HostNetwork: true},
		Status:     corev1.PodStatus{Phase: corev1.PodRunning, PodIPs: []corev1.PodIP{{IP: "10.0.0.5"}, {IP: "fd00::5"}}},
	}
	lbls, set, err := GetAttrs(kindFor(t, "", "pods"))(pod)
	if err != nil {
		t.Fatal(err)
	}
	if lbls["app"] != "web" {
		t.Errorf("labels %v", lbls)
	}
	for f, want := range map[string]string{
		"metadata.name": "p", "metadata.namespace": "ns", "spec.nodeName": "node-1", "spec.restartPolicy": "Always",
		"spec.hostNetwork": "true", "status.phase": "Running", "status.podIP": "10.0.0.5",
	} {
		if set[f] != want {
			t.Errorf("%s = %q, want %q", f, set[f], want)
		}
	}
	if !fields.OneTermEqualSelector("spec.nodeName", "node-1").Matches(set) || fields.OneTermEqualSelector("status.phase", "Pending").Matches(set) {
		t.Error("field selectors do not match the pod's fields as expected")
	}
}

func TestGetAttrsEvents(t *testing.T) {
	ref := corev1.ObjectReference{Kind: "Pod", Namespace: "ns", Name: "p", UID: "u1", APIVersion: "v1", FieldPath: "spec.containers{app}"}
	core := &corev1.Event{ObjectMeta: metav1.ObjectMeta{Name: "e", Namespace: "ns"}, InvolvedObject: ref, Reason: "Pulled", Type: "Normal", Source: corev1.EventSource{Component: "kubelet"}, ReportingController: "kubelet"}
	_, set, err := GetAttrs(kindFor(t, "", "events"))(core)
	if err != nil {
		t.Fatal(err)
	}
	for f, want := range map[string]string{"involvedObject.kind": "Pod", "involvedObject.name": "p", "involvedObject.uid": "u1", "involvedObject.fieldPath": "spec.containers{app}", "reason": "Pulled", "type": "Normal", "source": "kubelet", "reportingComponent": "kubelet"} {
		if set[f] != want {
			t.Errorf("core event %s = %q, want %q", f, set[f], want)
		}
	}

	newer := &eventsv1.Event{ObjectMeta: metav1.ObjectMeta{Name: "e", Namespace: "ns"}, Regarding: ref, Reason: "Pulled", Type: "Warning", ReportingController: "kubelet"}
	_, set, err = GetAttrs(kindFor(t, "events.k8s.io", "events"))(newer)
	if err != nil {
		t.Fatal(err)
	}
	if set["involvedObject.name"] != "p" || set["regarding.name"] != "p" || set["type"] != "Warning" || set["reportingController"] != "kubelet" {
		t.Errorf("events.k8s.io fields %v", set)
	}
}

func TestSupportedFields(t *testing.T) {
	want := []string{"metadata.name", "metadata.namespace", "spec.hostNetwork", "spec.nodeName", "spec.restartPolicy", "spec.schedulerName",
		"spec.serviceAccountName", "status.nominatedNodeName", "status.phase", "status.podIP", "status.podIPs"}
	if got := SupportedFields(kindFor(t, "", "pods")); !reflect.DeepEqual(got, want) {
		t.Errorf("pods: %v", got)
	}
	if got := SupportedFields(kindFor(t, "", "configmaps")); !reflect.DeepEqual(got, []string{"metadata.name", "metadata.namespace"}) {
		t.Errorf("configmaps: %v", got)
	}
	for resource, field := range map[string]string{"secrets": "type", "namespaces": "status.phase", "nodes": "spec.unschedulable", "replicationcontrollers": "status.replicas", "services": "spec.type"} {
		if !contains(SupportedFields(kindFor(t, "", resource)), field) {
			t.Errorf("%s should support %s", resource, field)
		}
	}
	for group, resource := range map[string]string{"batch": "jobs", "apps": "replicasets", "certificates.k8s.io": "certificatesigningrequests"} {
		if len(SupportedFields(kindFor(t, group, resource))) != 3 {
			t.Errorf("%s: %v", resource, SupportedFields(kindFor(t, group, resource)))
		}
	}
}

func contains(list []string, s string) bool {
	for _, v := range list {
		if v == s {
			return true
		}
	}
	return false
}
