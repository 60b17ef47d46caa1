package kubevalidation

import (
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/util/validation/field"
	"k8s.io/kubernetes/pkg/apis/core"
	k8sv1 "k8s.io/kubernetes/pkg/apis/core/v1"
	corevalidation "k8s.io/kubernetes/pkg/apis/core/validation"
)

// NamespaceFinalize is kube's ValidateNamespaceFinalizeUpdate: the
// metadata update and each of spec.finalizers' names.
func NamespaceFinalize(ns, old *corev1.Namespace) field.ErrorList {
	var in, prev core.Namespace
	if err := k8sv1.Convert_v1_Namespace_To_core_Namespace(ns, &in, nil); err != nil {
		return field.ErrorList{field.InternalError(nil, err)}
	}
	if err := k8sv1.Convert_v1_Namespace_To_core_Namespace(old, &prev, nil); err != nil {
		return field.ErrorList{field.InternalError(nil, err)}
	}
	return withoutResourceVersion(corevalidation.ValidateNamespaceFinalizeUpdate(&in, &prev))
}
