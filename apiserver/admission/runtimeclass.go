package admission

import (
	"context"
	"fmt"

	corev1 "k8s.io/api/core/v1"
	nodev1 "k8s.io/api/node/v1"
	"k8s.io/apimachinery/pkg/api/equality"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
)

var runtimeClassesGVR = nodev1.SchemeGroupVersion.WithResource("runtimeclasses")

// RuntimeClass is kube's RuntimeClass plugin: a pod naming a class gets
// the class's fixed overhead and scheduling constraints, and a pod naming
// a missing class, or carrying an overhead of its own, is refused.
func RuntimeClass(src Source) Interface {
	return Func{
		MutateFunc: func(ctx context.Context, a *Attributes) error {
			pod, class, err := podRuntimeClass(ctx, src, a)
			if pod == nil || class == nil || err != nil {
				return err
			}
			if err := setRuntimeOverhead(a, pod, class); err != nil {
				return err
			}
			return setRuntimeScheduling(a, pod, class)
		},
		ValidateFunc: func(ctx context.Context, a *Attributes) error {
			pod, class, err := podRuntimeClass(ctx, src, a)
			if pod == nil || err != nil {
				return err
			}
			// Mutation set the overhead; a later plugin must not have
			// changed it.
			if class != nil && class.Overhead != nil {
				if !equality.Semantic.DeepEqual(class.Overhead.PodFixed, pod.Spec.Overhead) {
					return runtimeClassForbidden(a, "pod rejected: Pod's Overhead doesn't match RuntimeClass's defined Overhead")
				}
			} else if pod.Spec.Overhead != nil {
				return runtimeClassForbidden(a, "pod rejected: Pod Overhead set without corresponding RuntimeClass defined Overhead")
			}
			return nil
		},
	}
}

// podRuntimeClass returns the pod of a pod create and the RuntimeClass it
// names (nil when it names none).
func podRuntimeClass(ctx context.Context, src Source, a *Attributes) (*corev1.Pod, *nodev1.RuntimeClass, error) {
	pod := podCreate(a)
	if pod == nil || pod.Spec.RuntimeClassName == nil {
		return pod, nil, nil
	}
	obj, err := src.Get(ctx, runtimeClassesGVR, "", *pod.Spec.RuntimeClassName)
	if apierrors.IsNotFound(err) {
		return pod, nil, runtimeClassForbidden(a, fmt.Sprintf("pod rejected: RuntimeClass %q not found", *pod.Spec.RuntimeClassName))
	}
	if err != nil {
		return pod, nil, err
	}
	return pod, obj.(*nodev1.RuntimeClass), nil
}

func setRuntimeOverhead(a *Attributes, pod *corev1.Pod, class *nodev1.RuntimeClass) error {
	if class.Overhead == nil {
		return nil
	}
	if len(pod.Spec.Overhead) > 0 && !equality.Semantic.DeepEqual(class.Overhead.PodFixed, pod.Spec.Overhead) {
		return runtimeClassForbidden(a, "pod rejected: Pod's Overhead doesn't match RuntimeClass's defined Overhead")
	}
	pod.Spec.Overhead = class.Overhead.PodFixed.DeepCopy()
	return nil
}

// setRuntimeScheduling adds the class's node selector (refusing a pod that
// asks for another value of one of its labels) and tolerations.
func setRuntimeScheduling(a *Attributes, pod *corev1.Pod, class *nodev1.RuntimeClass) error {
	if class.Scheduling == nil {
		return nil
	}
	selector := pod.Spec.NodeSelector
	if selector == nil {
		selector = make(map[string]string, len(class.Scheduling.NodeSelector))
	}
	for key, classValue := range class.Scheduling.NodeSelector {
		if podValue, ok := selector[key]; ok && podValue != classValue {
			return runtimeClassForbidden(a, fmt.Sprintf("conflict: runtimeClass.scheduling.nodeSelector[%s] = %s; pod.spec.nodeSelector[%s] = %s", key, classValue, key, podValue))
		}
		selector[key] = classValue
	}
	if len(selector) > 0 {
		pod.Spec.NodeSelector = selector
	}
	pod.Spec.Tolerations = mergeTolerations(pod.Spec.Tolerations, class.Scheduling.Tolerations)
	return nil
}

func runtimeClassForbidden(a *Attributes, msg string) error {
	return apierrors.NewForbidden(a.Resource.GroupResource(), a.Name, fmt.Errorf("%s", msg))
}

// mergeTolerations joins two toleration lists, dropping each toleration
// another one kept already covers, as kube merges a class's into a pod's.
func mergeTolerations(first, second []corev1.Toleration) []corev1.Toleration {
	all := append(append([]corev1.Toleration(nil), first...), second...)
	var merged []corev1.Toleration
next:
	for i := range all {
		t := all[i]
		for _, kept := range merged {
			if toleratesSuperset(kept, t) {
				continue next
			}
		}
		for _, later := range all[i+1:] {
			// Of two equal tolerations the first stays.
			if !equality.Semantic.DeepEqual(t, later) && toleratesSuperset(later, t) {
				continue next
			}
		}
		merged = append(merged, t)
	}
	return merged
}

// toleratesSuperset reports whether ss tolerates every taint t does.
func toleratesSuperset(ss, t corev1.Toleration) bool {
	if equality.Semantic.DeepEqual(t, ss) {
		return true
	}
	// An empty key with Exists matches every key.
	if t.Key != ss.Key && (ss.Key != "" || ss.Operator != corev1.TolerationOpExists) {
		return false
	}
	// An empty effect matches every effect.
	if t.Effect != ss.Effect && ss.Effect != "" {
		return false
	}
	if ss.Effect == corev1.TaintEffectNoExecute && ss.TolerationSeconds != nil &&
		(t.TolerationSeconds == nil || *t.TolerationSeconds > *ss.TolerationSeconds) {
		return false
	}
	switch ss.Operator {
	case corev1.TolerationOpEqual, "":
		return t.Operator == corev1.TolerationOpEqual && t.Value == ss.Value
	case corev1.TolerationOpExists:
		return true
	}
	return false
}
