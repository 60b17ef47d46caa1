package pod

import (
	"context"
	"fmt"
	"net/http"
	"time"

	corev1 "k8s.io/api/core/v1"
	policyv1 "k8s.io/api/policy/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/runtime"

	"github.com/devplane/devplane/apiserver/admission"
	"github.com/devplane/devplane/apiserver/registry"
)

// evictionRetries bounds the attempts to take a disruption from a PDB that
// others are updating at the same time.
const evictionRetries = 5

// evictionBudgetMessage is kube's refusal when an eviction would violate a
// PodDisruptionBudget.
const evictionBudgetMessage = "Cannot evict pod as it would violate the pod's disruption budget."

// InstallEviction serves pods/eviction: the pod is deleted unless its
// PodDisruptionBudget allows no disruption now (429, kube's message and
// DisruptionBudget cause), taking one disruption from the budget first.
func InstallEviction(reg *registry.Registry) {
	pods, ok := reg.Lookup("", "v1", "pods")
	pdbs, ok2 := reg.Lookup(policyv1.GroupName, "v1", "poddisruptionbudgets")
	if !ok || !ok2 || pods.Store == nil || pdbs.Store == nil {
		return
	}
	e := &evictions{pods: pods.Store, pdbs: pdbs.Store}
	reg.AddCreateSubresource(pods.GVR, "eviction", &registry.SubresourceCreate{
		Kind: policyv1.SchemeGroupVersion.WithKind("Eviction"), New: func() runtime.Object { return &policyv1.Eviction{} }, Create: e.evict})
}

type evictions struct{ pods, pdbs *registry.Store }

func (e *evictions) evict(ctx context.Context, namespace, name string, obj runtime.Object) (runtime.Object, error) {
	ev := obj.(*policyv1.Eviction)
	if ev.Name != "" && ev.Name != name {
		return nil, apierrors.NewBadRequest("name in URL does not match name in Eviction object")
	}
	deleteOpts := metav1.DeleteOptions{}
	if ev.DeleteOptions != nil {
		deleteOpts = *ev.DeleteOptions
	}
	for attempt := 0; ; attempt++ {
		podObj, err := e.pods.Get(ctx, namespace, name, metav1.GetOptions{})
		if err != nil {
			return nil, err
		}
		pod := podObj.(*corev1.Pod)
		err = e.takeDisruption(ctx, pod, deleteOpts)
		if apierrors.IsConflict(err) && attempt < evictionRetries {
			continue
		}
		if err != nil {
			return nil, err
		}
		marked, err := e.markDisruptionTarget(ctx, pod, deleteOpts)
		if err != nil {
			return nil, err
		}
		if p := deleteOpts.Preconditions; p != nil && p.ResourceVersion != nil && *p.ResourceVersion != "" && marked != nil {
			// The condition was this eviction's own write.
			rv := marked.ResourceVersion
			deleteOpts.Preconditions = &metav1.Preconditions{UID: p.UID, ResourceVersion: &rv}
		}
		if _, _, err := e.pods.Delete(ctx, namespace, name, &deleteOpts); err != nil {
			return nil, err
		}
		return &metav1.Status{Status: metav1.StatusSuccess, Code: http.StatusCreated}, nil
	}
}

// markDisruptionTarget gives a pod about to be evicted kube's
// DisruptionTarget condition (EvictionByEvictionAPI) through its status, as
// kube's eviction does before the delete: the kubelet keeps it in the
// final status, and a Job's pod failure policy can tell an eviction from a
// failure by it.
func (e *evictions) markDisruptionTarget(ctx context.Context, pod *corev1.Pod, opts metav1.DeleteOptions) (*corev1.Pod, error) {
	if len(opts.DryRun) > 0 || pod.DeletionTimestamp != nil {
		return nil, nil
	}
	updated, _, err := e.pods.Update(admission.WithoutAdmission(ctx), pod.Namespace, pod.Name, "status",
		func(_ context.Context, current runtime.Object) (runtime.Object, error) {
			latest := current.(*corev1.Pod).DeepCopy()
			if p := opts.Preconditions; p != nil && ((p.UID != nil && *p.UID != latest.UID) ||
				(p.ResourceVersion != nil && *p.ResourceVersion != "" && *p.ResourceVersion != latest.ResourceVersion)) {
				return nil, apierrors.NewConflict(corev1.Resource("pods"), latest.Name,
					fmt.Errorf("the object has been modified; please apply your changes to the latest version and try again"))
			}
			setCondition(&latest.Status, corev1.PodCondition{Type: corev1.DisruptionTarget, Status: corev1.ConditionTrue,
				Reason: "EvictionByEvictionAPI", Message: "Eviction API: evicting"})
			return latest, nil
		}, metav1.UpdateOptions{})
	if err != nil {
		return nil, err
	}
	marked, _ := updated.(*corev1.Pod)
	return marked, nil
}

// setCondition sets c in status, its transition time kept unless its
// status changes, as kube's UpdatePodCondition.
func setCondition(status *corev1.PodStatus, c corev1.PodCondition) {
	now := metav1.Now()
	for i := range status.Conditions {
		old := &status.Conditions[i]
		if old.Type != c.Type {
			continue
		}
		c.LastTransitionTime = old.LastTransitionTime
		if old.Status != c.Status {
			c.LastTransitionTime = now
		}
		c.LastProbeTime = old.LastProbeTime
		*old = c
		return
	}
	c.LastTransitionTime = now
	status.Conditions = append(status.Conditions, c)
}

// takeDisruption checks the pod's budget and records the disruption in its
// status; nil when the pod may be deleted.
func (e *evictions) takeDisruption(ctx context.Context, pod *corev1.Pod, opts metav1.DeleteOptions) error {
	// Pods that are not running, or already going, disrupt nothing.
	if pod.DeletionTimestamp != nil || pod.Status.Phase == corev1.PodSucceeded || pod.Status.Phase == corev1.PodFailed || pod.Status.Phase == corev1.PodPending {
		return nil
	}
	list, err := e.pdbs.List(ctx, pod.Namespace, metav1.ListOptions{})
	if err != nil {
		return err
	}
	var matching []*policyv1.PodDisruptionBudget
	for _, item := range list.(*policyv1.PodDisruptionBudgetList).Items {
		if item.Spec.Selector == nil {
			continue
		}
		sel, err := metav1.LabelSelectorAsSelector(item.Spec.Selector)
		if err != nil || !sel.Matches(labels.Set(pod.Labels)) {
			continue
		}
		matching = append(matching, item.DeepCopy())
	}
	switch len(matching) {
	case 0:
		return nil
	case 1:
	default:
		return apierrors.NewInternalError(fmt.Errorf("This pod has more than one PodDisruptionBudget, which the eviction subresource does not support."))
	}
	pdb := matching[0]
	if pdb.Status.ObservedGeneration < pdb.Generation {
		return tooManyRequests(fmt.Sprintf("The disruption budget %s is still being processed by the server.", pdb.Name))
	}
	// A pod that is not ready may go when the budget says so.
	if !podReady(pod) {
		policy := policyv1.IfHealthyBudget
		if pdb.Spec.UnhealthyPodEvictionPolicy != nil {
			policy = *pdb.Spec.UnhealthyPodEvictionPolicy
		}
		if policy == policyv1.AlwaysAllow || pdb.Status.CurrentHealthy >= pdb.Status.DesiredHealthy {
			return nil
		}
	}
	if pdb.Status.DisruptionsAllowed <= 0 {
		return tooManyRequests(fmt.Sprintf("The disruption budget %s needs %d healthy pods and has %d currently",
			pdb.Name, pdb.Status.DesiredHealthy, pdb.Status.CurrentHealthy))
	}
	if opts.DryRun != nil && len(opts.DryRun) > 0 {
		return nil
	}
	// Take the disruption before deleting: the disruption controller
	// removes it from disruptedPods once it sees the pod go.
	pdb.Status.DisruptionsAllowed--
	if pdb.Status.DisruptedPods == nil {
		pdb.Status.DisruptedPods = map[string]metav1.Time{}
	}
	pdb.Status.DisruptedPods[pod.Name] = metav1.Time{Time: time.Now()}
	_, _, err = e.pdbs.Update(admission.WithoutAdmission(ctx), pdb.Namespace, pdb.Name, "status",
		func(context.Context, runtime.Object) (runtime.Object, error) { return pdb, nil }, metav1.UpdateOptions{})
	return err
}

func podReady(pod *corev1.Pod) bool {
	for _, c := range pod.Status.Conditions {
		if c.Type == corev1.PodReady {
			return c.Status == corev1.ConditionTrue
		}
	}
	return false
}

// tooManyRequests is kube's 429 for a refused eviction.
func tooManyRequests(cause string) error {
	err := apierrors.NewTooManyRequests(evictionBudgetMessage, 0)
	err.ErrStatus.Details = &metav1.StatusDetails{Causes: []metav1.StatusCause{{Type: "DisruptionBudget", Message: cause}}}
	return err
}
