// Package kubevalidation runs kube's own validation (k8s.io/kubernetes
// pkg/apis/core/validation, already linked through kube's controllers) on
// v1 objects, for the rules too intricate to restate: volume sources,
// container resources, sysctls, and what a pod update may change. It is the one package of devplane that
// converts to kube's internal types for validation.
package kubevalidation

import (
	"fmt"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/util/sets"
	"k8s.io/apimachinery/pkg/util/validation/field"
	podutil "k8s.io/kubernetes/pkg/api/pod"
	"k8s.io/kubernetes/pkg/apis/core"
	k8sv1 "k8s.io/kubernetes/pkg/apis/core/v1"
	corevalidation "k8s.io/kubernetes/pkg/apis/core/validation"
)

// PodSpec checks spec's volumes, its containers' resources and its
// sysctls as kube does on create, errors under fldPath.
func PodSpec(spec *corev1.PodSpec, fldPath *field.Path) field.ErrorList {
	var internal core.PodSpec
	if err := k8sv1.Convert_v1_PodSpec_To_core_PodSpec(spec, &internal, nil); err != nil {
		return field.ErrorList{field.InternalError(fldPath, err)}
	}
	opts := podutil.GetValidationOptionsFromPodSpecAndMeta(&internal, nil, nil, nil)
	_, errs := corevalidation.ValidateVolumes(internal.Volumes, nil, fldPath.Child("volumes"), opts)

	claims := sets.New[string]()
	for _, c := range internal.ResourceClaims {
		claims.Insert(c.Name)
	}
	for _, group := range []struct {
		name       string
		containers []core.Container
	}{{"initContainers", internal.InitContainers}, {"containers", internal.Containers}} {
		for i := range group.containers {
			resPath := fldPath.Child(group.name).Index(i).Child("resources")
			errs = append(errs, corevalidation.ValidateContainerResourceRequirements(&group.containers[i].Resources, claims, resPath, opts)...)
		}
	}

	if sc := internal.SecurityContext; sc != nil {
		errs = append(errs, sysctls(sc.Sysctls, &internal, fldPath.Child("securityContext", "sysctls"))...)
	}
	return errs
}

// PodUpdate is kube's ValidatePodUpdate with the options kube's pod
// strategy gives it: metadata and spec of the new pod, and what an update
// may change.
func PodUpdate(pod, old *corev1.Pod) field.ErrorList {
	return podUpdate(pod, old, corevalidation.ValidatePodUpdate)
}

// PodStatusUpdate is kube's ValidatePodStatusUpdate, as kube's pod status
// strategy calls it: conditions, container statuses, IPs, nodeName.
func PodStatusUpdate(pod, old *corev1.Pod) field.ErrorList {
	return podUpdate(pod, old, corevalidation.ValidatePodStatusUpdate)
}

func podUpdate(pod, old *corev1.Pod, validate func(pod, old *core.Pod, opts corevalidation.PodValidationOptions) field.ErrorList) field.ErrorList {
	var in, prev core.Pod
	if err := k8sv1.Convert_v1_Pod_To_core_Pod(pod, &in, nil); err != nil {
		return field.ErrorList{field.InternalError(nil, err)}
	}
	if err := k8sv1.Convert_v1_Pod_To_core_Pod(old, &prev, nil); err != nil {
		return field.ErrorList{field.InternalError(nil, err)}
	}
	opts := podutil.GetValidationOptionsFromPodSpecAndMeta(&in.Spec, &prev.Spec, &in.ObjectMeta, &prev.ObjectMeta)
	opts.ResourceIsPod = true
	return withoutResourceVersion(validate(&in, &prev, opts))
}

// withoutResourceVersion drops errors about metadata.resourceVersion:
// kube's REST layer fills in the stored resourceVersion of an
// unconditional update before validating; devplane's checks it itself.
func withoutResourceVersion(errs field.ErrorList) field.ErrorList {
	kept := errs[:0]
	for _, e := range errs {
		if e.Field != "metadata.resourceVersion" {
			kept = append(kept, e)
		}
	}
	return kept
}

// sysctls is kube's validateSysctls (unexported there) from its exported
// parts: valid unique names, and no namespaced sysctl of a namespace the
// pod shares with its host.
func sysctls(list []core.Sysctl, spec *core.PodSpec, fldPath *field.Path) field.ErrorList {
	var errs field.ErrorList
	seen := sets.New[string]()
	for i, s := range list {
		namePath := fldPath.Index(i).Child("name")
		switch {
		case s.Name == "":
			errs = append(errs, field.Required(namePath, ""))
		case !corevalidation.IsValidSysctlName(s.Name):
			errs = append(errs, field.Invalid(namePath, s.Name, sysctlNameMessage))
		case seen.Has(s.Name):
			errs = append(errs, field.Duplicate(namePath, s.Name))
		}
		if err := corevalidation.ValidateHostSysctl(s.Name, spec, namePath); err != nil {
			errs = append(errs, err)
		}
		seen.Insert(s.Name)
	}
	return errs
}

// sysctlNameMessage is kube's wording for a sysctl name it cannot read.
var sysctlNameMessage = fmt.Sprintf("must have at most %d characters and match regex ^%s$", corevalidation.SysctlMaxLength, corevalidation.SysctlContainSlashFmt)
