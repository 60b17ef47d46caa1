package registry

import (
	"context"
	"fmt"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/util/validation/field"
)

var podsBinding = schema.GroupResource{Resource: "pods/binding"}

// Bind assigns the pod podName of namespace to binding's target node, as
// kube's pods/binding (and bindings) do: the scheduler's one write. It
// sets spec.nodeName, adds the binding's annotations and marks the pod
// PodScheduled; a pod already assigned, or being deleted, is a Conflict.
// Like kube it writes straight to storage: a pod's update validation would
// refuse the nodeName change that binding exists to make.
func (s *Store) Bind(ctx context.Context, namespace, podName string, binding *corev1.Binding) error {
	if binding.Name != "" && binding.Name != podName {
		return apierrors.NewBadRequest(fmt.Sprintf("the name of the object (%s) does not match the name on the URL (%s)", binding.Name, podName))
	}
	var errs field.ErrorList
	if binding.Target.Name == "" {
		errs = append(errs, field.Required(field.NewPath("target", "name"), ""))
	}
	if k := binding.Target.Kind; k != "" && k != "Node" {
		errs = append(errs, field.NotSupported(field.NewPath("target", "kind"), k, []string{"Node", "<empty>"}))
	}
	if len(errs) > 0 {
		return apierrors.NewInvalid(schema.GroupKind{Kind: "Binding"}, podName, errs)
	}
	if err := s.checkScope(namespace); err != nil {
		return err
	}
	node := binding.Target.Name
	out := s.NewFunc()
	return s.storageUpdate(ctx, s.Key(namespace, podName), out, false, nil, "binding", func(current runtime.Object) (runtime.Object, error) {
		pod, ok := current.(*corev1.Pod)
		if !ok || (pod.UID == "" && pod.CreationTimestamp.IsZero()) {
			return nil, apierrors.NewNotFound(schema.GroupResource{Resource: "pods"}, podName)
		}
		if uid := binding.UID; uid != "" && uid != pod.UID {
			return nil, apierrors.NewConflict(podsBinding, podName,
				fmt.Errorf("Precondition failed: UID in precondition: %v, UID in object meta: %v", uid, pod.UID))
		}
		if rv := binding.ResourceVersion; rv != "" && rv != pod.ResourceVersion {
			return nil, apierrors.NewConflict(podsBinding, podName,
				fmt.Errorf("Precondition failed: ResourceVersion in precondition: %v, ResourceVersion in object meta: %v", rv, pod.ResourceVersion))
		}
		if pod.DeletionTimestamp != nil {
			return nil, apierrors.NewConflict(podsBinding, podName, fmt.Errorf("pod %v is being deleted, cannot be assigned to a host", podName))
		}
		if pod.Spec.NodeName != "" {
			return nil, apierrors.NewConflict(podsBinding, podName, fmt.Errorf("pod %v is already assigned to node %q", podName, pod.Spec.NodeName))
		}
		bound := pod.DeepCopy()
		bound.Spec.NodeName = node
		for k, v := range binding.Annotations {
			if bound.Annotations == nil {
				bound.Annotations = map[string]string{}
			}
			bound.Annotations[k] = v
		}
		setPodScheduled(bound)
		return bound, nil
	})
}

// setPodScheduled sets the PodScheduled condition True, with a transition
// time only when it changes.
func setPodScheduled(pod *corev1.Pod) {
	now := metav1.Now()
	for i := range pod.Status.Conditions {
		c := &pod.Status.Conditions[i]
		if c.Type != corev1.PodScheduled {
			continue
		}
		if c.Status != corev1.ConditionTrue {
			c.Status, c.LastTransitionTime = corev1.ConditionTrue, now
		}
		c.Reason, c.Message = "", ""
		return
	}
	pod.Status.Conditions = append(pod.Status.Conditions, corev1.PodCondition{
		Type: corev1.PodScheduled, Status: corev1.ConditionTrue, LastTransitionTime: now})
}
