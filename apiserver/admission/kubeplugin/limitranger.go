package kubeplugin

import (
	corev1 "k8s.io/api/core/v1"
	api "k8s.io/kubernetes/pkg/apis/core"
	"k8s.io/kubernetes/plugin/pkg/admission/limitranger"
)

// ValidatePodLimits is LimitRanger's check of pod against one LimitRange:
// each container's and the whole pod's min, max and limit/request ratio,
// with kube's messages (nil when it fits).
func ValidatePodLimits(limits *corev1.LimitRange, pod *corev1.Pod) error {
	return limitranger.PodValidateLimitFunc(limits, podResources(pod))
}

// ValidateClaimLimits is LimitRanger's check of a claim's storage request
// against one LimitRange's PersistentVolumeClaim min and max.
func ValidateClaimLimits(limits *corev1.LimitRange, pvc *corev1.PersistentVolumeClaim) error {
	claim := &api.PersistentVolumeClaim{}
	claim.Spec.Resources.Requests = internalResources(pvc.Spec.Resources.Requests)
	return limitranger.PersistentVolumeClaimValidateLimitFunc(limits, claim)
}

// podResources is the part of pod LimitRanger reads, as kube's internal
// type: containers' and the pod's resources, and which init containers
// are sidecars. Converting only that keeps the check cheap.
func podResources(pod *corev1.Pod) *api.Pod {
	out := &api.Pod{}
	containers := func(cs []corev1.Container) []api.Container {
		if len(cs) == 0 {
			return nil
		}
		res := make([]api.Container, len(cs))
		for i := range cs {
			res[i].Name = cs[i].Name
			res[i].Resources.Requests = internalResources(cs[i].Resources.Requests)
			res[i].Resources.Limits = internalResources(cs[i].Resources.Limits)
			if p := cs[i].RestartPolicy; p != nil {
				policy := api.ContainerRestartPolicy(*p)
				res[i].RestartPolicy = &policy
			}
		}
		return res
	}
	out.Spec.Containers = containers(pod.Spec.Containers)
	out.Spec.InitContainers = containers(pod.Spec.InitContainers)
	if r := pod.Spec.Resources; r != nil {
		out.Spec.Resources = &api.ResourceRequirements{Requests: internalResources(r.Requests), Limits: internalResources(r.Limits)}
	}
	return out
}

func internalResources(in corev1.ResourceList) api.ResourceList {
	if in == nil {
		return nil
	}
	out := make(api.ResourceList, len(in))
	for name, q := range in {
		out[api.ResourceName(name)] = q
	}
	return out
}
