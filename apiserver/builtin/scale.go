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

var deploymentScale = &Scale{
	Get: func(obj runtime.Object) *autoscalingv1.Scale {
		d, ok := obj.(*appsv1.Deployment)
		if !ok {
			return nil
		}
		return newScale(&d.ObjectMeta, d.Spec.Replicas, d.Status.Replicas, selectorString(d.Spec.Selector))
	},
	Set: func(obj runtime.Object, replicas int32) {
		if d, ok := obj.(*appsv1.Deployment); ok {
			d.Spec.Replicas = &replicas
		}
	},
}

var replicaSetScale = &Scale{
	Get: func(obj runtime.Object) *autoscalingv1.Scale {
		rs, ok := obj.(*appsv1.ReplicaSet)
		if !ok {
			return nil
		}
		return newScale(&rs.ObjectMeta, rs.Spec.Replicas, rs.Status.Replicas, selectorString(rs.Spec.Selector))
	},
	Set: func(obj runtime.Object, replicas int32) {
		if rs, ok := obj.(*appsv1.ReplicaSet); ok {
			rs.Spec.Replicas = &replicas
		}
	},
}

var statefulSetScale = &Scale{
	Get: func(obj runtime.Object) *autoscalingv1.Scale {
		s, ok := obj.(*appsv1.StatefulSet)
		if !ok {
			return nil
		}
		return newScale(&s.ObjectMeta, s.Spec.Replicas, s.Status.Replicas, selectorString(s.Spec.Selector))
	},
	Set: func(obj runtime.Object, replicas int32) {
		if s, ok := obj.(*appsv1.StatefulSet); ok {
			s.Spec.Replicas = &replicas
		}
	},
}

var replicationControllerScale = &Scale{
	Get: func(obj runtime.Object) *autoscalingv1.Scale {
		rc, ok := obj.(*corev1.ReplicationController)
		if !ok {
			return nil
		}
		return newScale(&rc.ObjectMeta, rc.Spec.Replicas, rc.Status.Replicas, labels.SelectorFromSet(rc.Spec.Selector).String())
	},
	Set: func(obj runtime.Object, replicas int32) {
		if rc, ok := obj.(*corev1.ReplicationController); ok {
			rc.Spec.Replicas = &replicas
		}
	},
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
