package admission

import (
	"context"
	"sort"
	"strings"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	kadmission "k8s.io/apiserver/pkg/admission"

	"github.com/devplane/devplane/apiserver/admission/kubeplugin"
)

// limitRangerAnnotation records on a pod which defaults LimitRanger set.
const limitRangerAnnotation = "kubernetes.io/limit-ranger"

// LimitRanger applies the namespace's LimitRanges as kube does: a new pod's
// containers get the Container defaults for requests and limits they do
// not set; then pods (on create, and on resize) and claims (on create and
// update) must keep within each range's min, max and limit/request ratio
// (kube's checks and words).
func LimitRanger(src Source) Interface {
	return Func{
		MutateFunc: func(ctx context.Context, a *Attributes) error {
			pod, ok := a.Object.(*corev1.Pod)
			if !ok || !limitRanged(a) {
				return nil
			}
			ranges, err := limitRanges(ctx, src, a.Namespace)
			if err != nil {
				return err
			}
			for _, lr := range ranges {
				setLimitDefaults(lr, pod)
			}
			return nil
		},
		ValidateFunc: func(ctx context.Context, a *Attributes) error {
			if !limitRanged(a) {
				return nil
			}
			ranges, err := limitRanges(ctx, src, a.Namespace)
			if err != nil {
				return err
			}
			for _, lr := range ranges {
				switch o := a.Object.(type) {
				case *corev1.Pod:
					err = kubeplugin.ValidatePodLimits(lr, o)
				case *corev1.PersistentVolumeClaim:
					err = kubeplugin.ValidateClaimLimits(lr, o)
				}
				if err != nil {
					return kadmission.NewForbidden(kadmission.NewAttributesRecord(a.Object, a.OldObject, a.Kind, a.Namespace,
						a.Name, a.Resource, a.Subresource, kadmission.Operation(a.Operation), a.Options, a.DryRun, nil), err)
				}
			}
			return nil
		},
	}
}

// limitRanged reports whether LimitRanger looks at a: pod creates and
// resizes (a pod's containers cannot change otherwise), claim creates and
// updates; never an object on its way out.
func limitRanged(a *Attributes) bool {
	if a.Namespace == "" || a.Object == nil {
		return false
	}
	switch {
	case a.Resource == podsGVR && a.Subresource == "" && a.Operation == Create:
	case a.Resource == podsGVR && a.Subresource == "resize" && a.Operation == Update:
	case a.Resource == pvcsGVR && a.Subresource == "" && (a.Operation == Create || a.Operation == Update):
	default:
		return false
	}
	if a.OldObject != nil {
		if old, err := meta.Accessor(a.OldObject); err == nil && old.GetDeletionTimestamp() != nil {
			return false
		}
	}
	return true
}

func limitRanges(ctx context.Context, src Source, namespace string) ([]*corev1.LimitRange, error) {
	objs, err := src.List(ctx, limitRangesGVR, namespace, false)
	if err != nil {
		return nil, err
	}
	out := make([]*corev1.LimitRange, len(objs))
	for i, o := range objs {
		out[i] = o.(*corev1.LimitRange)
	}
	return out, nil
}

// setLimitDefaults gives pod's containers the requests and limits lr's
// Container items default to where they set none, and says in the pod's
// limit-ranger annotation what it set, in kube's words.
func setLimitDefaults(lr *corev1.LimitRange, pod *corev1.Pod) {
	requests, limits := corev1.ResourceList{}, corev1.ResourceList{}
	for _, item := range lr.Spec.Limits {
		if item.Type != corev1.LimitTypeContainer {
			continue
		}
		for name, q := range item.DefaultRequest {
			requests[name] = q
		}
		for name, q := range item.Default {
			limits[name] = q
		}
	}
	var notes []string
	fill := func(cs []corev1.Container, what string) {
		for i := range cs {
			r := &cs[i].Resources
			if set := fillMissing(&r.Requests, requests); len(set) > 0 {
				notes = append(notes, strings.Join(set, ", ")+" request for "+what+" "+cs[i].Name)
			}
			if set := fillMissing(&r.Limits, limits); len(set) > 0 {
				notes = append(notes, strings.Join(set, ", ")+" limit for "+what+" "+cs[i].Name)
			}
		}
	}
	fill(pod.Spec.Containers, "container")
	fill(pod.Spec.InitContainers, "init container")
	if len(notes) == 0 {
		return
	}
	if pod.Annotations == nil {
		pod.Annotations = map[string]string{}
	}
	pod.Annotations[limitRangerAnnotation] = "LimitRanger plugin set: " + strings.Join(notes, "; ")
}

// fillMissing adds to *have what defaults has and it lacks, and returns
// those names, sorted.
func fillMissing(have *corev1.ResourceList, defaults corev1.ResourceList) []string {
	var set []string
	for name, q := range defaults {
		if _, ok := (*have)[name]; ok {
			continue
		}
		if *have == nil {
			*have = corev1.ResourceList{}
		}
		(*have)[name] = q.DeepCopy()
		set = append(set, string(name))
	}
	sort.Strings(set)
	return set
}
