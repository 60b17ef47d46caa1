package kubevalidation

import (
	"testing"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// What kube's validation adds to each pod status write (the simulated
// kubelet writes several per pod) and to each pod update.
func BenchmarkPodStatusUpdate(b *testing.B) {
	old := benchPod()
	pod := old.DeepCopy()
	pod.Status.Phase = corev1.PodRunning
	pod.Status.PodIP, pod.Status.PodIPs = "10.244.1.7", []corev1.PodIP{{IP: "10.244.1.7"}}
	pod.Status.ContainerStatuses = []corev1.ContainerStatus{{Name: "web", Image: "nginx", Ready: true,
		State: corev1.ContainerState{Running: &corev1.ContainerStateRunning{StartedAt: metav1.Now()}}}}
	for b.Loop() {
		if errs := PodStatusUpdate(pod, old); len(errs) > 0 {
			b.Fatal(errs)
		}
	}
}

func BenchmarkPodUpdate(b *testing.B) {
	old := benchPod()
	pod := old.DeepCopy()
	pod.Labels["version"] = "2"
	for b.Loop() {
		if errs := PodUpdate(pod, old); len(errs) > 0 {
			b.Fatal(errs)
		}
	}
}

func benchPod() *corev1.Pod {
	grace := int64(30)
	return &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{Name: "web-7d9c-abcde", Namespace: "default", ResourceVersion: "12",
			UID: "5b1f0c1e-8f1c-4c1e-9a4e-2f7c1f0b1a2b", Labels: map[string]string{"app": "web"}},
		Spec: corev1.PodSpec{
			Containers: []corev1.Container{{Name: "web", Image: "nginx", ImagePullPolicy: corev1.PullAlways,
				TerminationMessagePath: "/dev/termination-log", TerminationMessagePolicy: corev1.TerminationMessageReadFile,
				Resources: corev1.ResourceRequirements{Requests: corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("100m")}}}},
			RestartPolicy: corev1.RestartPolicyAlways, DNSPolicy: corev1.DNSClusterFirst, SchedulerName: "default-scheduler",
			TerminationGracePeriodSeconds: &grace, NodeName: "node-1", SecurityContext: &corev1.PodSecurityContext{},
		},
		Status: corev1.PodStatus{Phase: corev1.PodPending, QOSClass: corev1.PodQOSBurstable},
	}
}
