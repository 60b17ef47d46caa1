package builtin

import (
	appsv1 "k8s.io/api/apps/v1"
	autoscalingv1 "k8s.io/api/autoscaling/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/runtime"
)

// The scale subresource of deployments, replicasets, statefulsets and
// replicationcontrollers. Get on the wrong type returns nil; Set is a no-op.

var deploymentScale = scaleOf(func(d *appsv1.Deployment) scaleFields {
	return scaleFields{&d.ObjectMeta, &d.Spec.Replicas, d.Status.Replicas, selectorString(d.Spec.Selector)}
})

var replicaSetScale = scaleOf(func(rs *appsv1.ReplicaSet) scaleFields {
	return scaleFields{&rs.ObjectMeta, &rs.Spec.Replicas, rs.Status.Replicas, selectorString(rs.Spec.Selector)}
})

var statefulSetScale = scaleOf(func(s *appsv1.StatefulSet) scaleFields {
	return scaleFields{&s.ObjectMeta, &s.Spec.Replicas, s.Status.Replicas, selectorString(s.Spec.Selector)}
})

var replicationControllerScale = scaleOf(func(rc *corev1.ReplicationController) scaleFields {
	return scaleFields{&rc.ObjectMeta, &rc.Spec.Replicas, rc.Status.Replicas, labels.SelectorFromSet(rc.Spec.Selector).String()}
})

// scaleFields points into a scalable object at what its Scale shows.
type scaleFields struct {
	meta           *metav1.ObjectMeta
	specReplicas   **int32 // Set writes here
	statusReplicas int32
	selector       string
}

// scaleOf is the Scale of kind T, whose fields say where T keeps them.
func scaleOf[T runtime.Object](fields func(T) scaleFields) *Scale {
	return &Scale{
		Get: func(obj runtime.Object) *autoscalingv1.Scale {
			o, ok := obj.(T)
			if !ok {
				return nil
			}
			f := fields(o)
			return newScale(f.meta, *f.specReplicas, f.statusReplicas, f.selector)
		},
		Set: func(obj runtime.Object, replicas int32) {
			if o, ok := obj.(T); ok {
				*fields(o).specReplicas = &replicas
			}
		},
	}
}

// newScale builds the Scale view; its metadata identifies the parent object
// as kube's does (name, namespace, uid, resourceVersion, creationTimestamp).
func newScale(meta *metav1.ObjectMeta, specReplicas *int32, statusReplicas int32, selector string) *autoscalingv1.Scale {
	replicas := int32(1) // the default, for objects not yet defaulted
	if specReplicas != nil {
		replicas = *specReplicas
	}
	return &autoscalingv1.Scale{
		TypeMeta: metav1.TypeMeta{APIVersion: autoscalingv1.SchemeGroupVersion.String(), Kind: "Scale"},
		ObjectMeta: metav1.ObjectMeta{
			Name:              meta.Name,
			Namespace:         meta.Namespace,
			UID:               meta.UID,
			ResourceVersion:   meta.ResourceVersion,
			CreationTimestamp: meta.CreationTimestamp,
		},
		Spec:   autoscalingv1.ScaleSpec{Replicas: replicas},
		Status: autoscalingv1.ScaleStatus{Replicas: statusReplicas, Selector: selector},
	}
}

func selectorString(sel *metav1.LabelSelector) string {
	if sel == nil {
		return ""
	}
	s, err := metav1.LabelSelectorAsSelector(sel)
	if err != nil {
		return ""
	}
	return s.String()
}
