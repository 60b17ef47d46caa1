package kubeplugin

import (
	corev1 "k8s.io/api/core/v1"
	api "k8s.io/kubernetes/pkg/apis/core"
	k8sv1 "k8s.io/kubernetes/pkg/apis/core/v1"
	"k8s.io/kubernetes/plugin/pkg/admission/limitranger"
)

// ValidatePodLimits is LimitRanger's check of pod against one LimitRange:
// each container's and the whole pod's min, max and limit/request ratio,
// with kube's messages (nil when it fits).
func ValidatePodLimits(limits *corev1.LimitRange, pod *corev1.Pod) error {
	internal, err := podResources(pod)
	if err != nil {
		return err
	}
	return limitranger.PodValidateLimitFunc(limits, internal)
}

// ValidateClaimLimits is LimitRanger's check of a claim's storage request
// against one LimitRange's PersistentVolumeClaim min and max.
func ValidateClaimLimits(limits *corev1.LimitRange, pvc *corev1.PersistentVolumeClaim) error {
	claim := &api.PersistentVolumeClaim{}
	if err := k8sv1.Convert_v1_VolumeResourceRequirements_To_core_VolumeResourceRequirements(&pvc.Spec.Resources, &claim.Spec.Resources, nil); err != nil {
		return err
	}
	return limitranger.PersistentVolumeClaimValidateLimitFunc(limits, claim)
}

// podResources is the part of pod LimitRanger reads, as kube's internal
// type: containers' and the pod's resources, and which init containers
// are sidecars. Converting only that keeps the check cheap.
func podResources(pod *corev1.Pod) (*api.Pod, error) {
	out := &api.Pod{}
	containers := func(cs []corev1.Container) ([]api.Container, error) {
		if len(cs) == 0 {
			return nil, nil
		}
		res := make([]api.Container, len(cs))
		for i := range cs {
			res[i].Name = cs[i].Name
			if err := k8sv1.Convert_v1_ResourceRequirements_To_core_ResourceRequirements(&cs[i].Resources, &res[i].Resources, nil); err != nil {
				return nil, err
			}
			if p := cs[i].RestartPolicy; p != nil {
				policy := api.ContainerRestartPolicy(*p)
				res[i].RestartPolicy = &policy
			}
		}
		return res, nil
	}
	var err error
	if out.Spec.Containers, err = containers(pod.Spec.Containers); err != nil {
		return nil, err
	}
	if out.Spec.InitContainers, err = containers(pod.Spec.InitContainers); err != nil {
		return nil, err
	}
	if r := pod.Spec.Resources; r != nil {
		out.Spec.Resources = &api.ResourceRequirements{}
		if err := k8sv1.Convert_v1_ResourceRequirements_To_core_ResourceRequirements(r, out.Spec.Resources, nil); err != nil {
			return nil, err
		}
	}
	return out, nil
}
