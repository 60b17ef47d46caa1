// Package pod is kube's pod strategy where it differs from the generic
// store's: graceful deletion, what a status write may change, and its
// validation (kube's own).
package pod

import (
	"fmt"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/util/validation/field"

	"github.com/devplane/devplane/apiserver/kubevalidation"
	"github.com/devplane/devplane/apiserver/registry"
)

// Configure gives the generic strategy the pod's differences.
func Configure(s *registry.Strategy) {
	s.PrepareStatusUpdate = prepareStatusUpdate
	s.StatusResetFields = []string{"metadata.deletionTimestamp", "metadata.ownerReferences"}
	s.CheckGracefulDelete = checkGracefulDelete
	s.ValidateStatusUpdate = func(obj, old runtime.Object) field.ErrorList {
		pod, ok1 := obj.(*corev1.Pod)
		prev, ok2 := old.(*corev1.Pod)
		if !ok1 || !ok2 {
			return field.ErrorList{field.InternalError(nil, fmt.Errorf("pod status update of %T from %T", obj, old))}
		}
		return kubevalidation.PodStatusUpdate(pod, prev)
	}
}

// prepareStatusUpdate: owner references are not the kubelet's to change
// (old kubelets corrupted them, breaking garbage collection), and what an
// older client leaves out of the status it did not know is kept.
func prepareStatusUpdate(obj, old runtime.Object) {
	pod, ok1 := obj.(*corev1.Pod)
	prev, ok2 := old.(*corev1.Pod)
	if !ok1 || !ok2 {
		return
	}
	pod.OwnerReferences = prev.OwnerReferences
	if pod.Status.QOSClass == "" {
		pod.Status.QOSClass = prev.Status.QOSClass
	}
	if pod.Status.ResourceClaimStatuses == nil {
		pod.Status.ResourceClaimStatuses = prev.Status.ResourceClaimStatuses
	}
	if pod.Status.ExtendedResourceClaimStatus == nil {
		pod.Status.ExtendedResourceClaimStatus = prev.Status.ExtendedResourceClaimStatus
	}
	keepObservedGenerations(pod, prev)
}

// keepObservedGenerations keeps the stored observedGeneration of the status
// and of each condition (matched by type, in order) where the write has none.
func keepObservedGenerations(pod, prev *corev1.Pod) {
	if pod.Status.ObservedGeneration == 0 {
		pod.Status.ObservedGeneration = prev.Status.ObservedGeneration
	}
	stored := map[corev1.PodConditionType][]int64{}
	for _, c := range prev.Status.Conditions {
		stored[c.Type] = append(stored[c.Type], c.ObservedGeneration)
	}
	for i := range pod.Status.Conditions {
		c := &pod.Status.Conditions[i]
		var was int64
		if gens := stored[c.Type]; len(gens) > 0 {
			was, stored[c.Type] = gens[0], gens[1:]
		}
		if c.ObservedGeneration == 0 {
			c.ObservedGeneration = was
		}
	}
}

// checkGracefulDelete decides a pod's grace: the request's, else its
// terminationGracePeriodSeconds; none for a pod no kubelet runs (not
// scheduled) or that has finished.
func checkGracefulDelete(obj runtime.Object, opts *metav1.DeleteOptions) bool {
	pod, ok := obj.(*corev1.Pod)
	if !ok || opts == nil {
		return false
	}
	var grace int64
	switch {
	case opts.GracePeriodSeconds != nil:
		grace = *opts.GracePeriodSeconds
	case pod.Spec.TerminationGracePeriodSeconds != nil:
		grace = *pod.Spec.TerminationGracePeriodSeconds
	}
	if pod.Spec.NodeName == "" || pod.Status.Phase == corev1.PodSucceeded || pod.Status.Phase == corev1.PodFailed {
		grace = 0
	}
	if grace < 0 {
		grace = 1
	}
	opts.GracePeriodSeconds = &grace
	return true
}
