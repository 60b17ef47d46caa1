package builtin

import (
	"fmt"

	autoscalingv1 "k8s.io/api/autoscaling/v1"
	autoscalingv2 "k8s.io/api/autoscaling/v2"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/runtime"
)

// autoscaling/v1 HPAs are views of the stored autoscaling/v2 ones, as in
// kube. v1 says only "average CPU utilization": it maps to v2's CPU
// Resource metric with a Utilization target. What v1 cannot say (other
// metrics, behavior, conditions) is kept from the stored object when a v1
// client writes, and not shown to v1 readers.

// isCPUUtilization is the v2 metric that v1's targetCPUUtilizationPercentage is.
func isCPUUtilization(m autoscalingv2.MetricSpec) bool {
	return m.Type == autoscalingv2.ResourceMetricSourceType && m.Resource != nil &&
		m.Resource.Name == corev1.ResourceCPU && m.Resource.Target.Type == autoscalingv2.UtilizationMetricType
}

func isCPUUtilizationStatus(m autoscalingv2.MetricStatus) bool {
	return m.Type == autoscalingv2.ResourceMetricSourceType && m.Resource != nil &&
		m.Resource.Name == corev1.ResourceCPU && m.Resource.Current.AverageUtilization != nil
}

func hpaFromV2(stored runtime.Object) (runtime.Object, error) {
	in, ok := stored.(*autoscalingv2.HorizontalPodAutoscaler)
	if !ok {
		return nil, fmt.Errorf("expected an autoscaling/v2 HorizontalPodAutoscaler, got %T", stored)
	}
	out := &autoscalingv1.HorizontalPodAutoscaler{ObjectMeta: *in.ObjectMeta.DeepCopy()}
	out.APIVersion, out.Kind = autoscalingV1.String(), "HorizontalPodAutoscaler"
	if in.Kind == "" { // bookmarks and other bare objects stay bare
		out.APIVersion, out.Kind = "", ""
	}
	ref := in.Spec.ScaleTargetRef
	out.Spec.ScaleTargetRef = autoscalingv1.CrossVersionObjectReference{Kind: ref.Kind, Name: ref.Name, APIVersion: ref.APIVersion}
	if in.Spec.MinReplicas != nil {
		v := *in.Spec.MinReplicas
		out.Spec.MinReplicas = &v
	}
	out.Spec.MaxReplicas = in.Spec.MaxReplicas
	for _, m := range in.Spec.Metrics {
		if isCPUUtilization(m) && m.Resource.Target.AverageUtilization != nil {
			v := *m.Resource.Target.AverageUtilization
			out.Spec.TargetCPUUtilizationPercentage = &v
			break
		}
	}
	st := in.Status
	if st.ObservedGeneration != nil {
		v := *st.ObservedGeneration
		out.Status.ObservedGeneration = &v
	}
	out.Status.LastScaleTime = st.LastScaleTime.DeepCopy()
	out.Status.CurrentReplicas, out.Status.DesiredReplicas = st.CurrentReplicas, st.DesiredReplicas
	for _, m := range st.CurrentMetrics {
		if isCPUUtilizationStatus(m) {
			v := *m.Resource.Current.AverageUtilization
			out.Status.CurrentCPUUtilizationPercentage = &v
			break
		}
	}
	return out, nil
}

func hpaToV2(served, current runtime.Object) (runtime.Object, error) {
	in, ok := served.(*autoscalingv1.HorizontalPodAutoscaler)
	if !ok {
		return nil, fmt.Errorf("expected an autoscaling/v1 HorizontalPodAutoscaler, got %T", served)
	}
	out := &autoscalingv2.HorizontalPodAutoscaler{}
	if cur, ok := current.(*autoscalingv2.HorizontalPodAutoscaler); ok && cur != nil {
		out = cur.DeepCopy()
	}
	out.ObjectMeta = *in.ObjectMeta.DeepCopy()
	out.APIVersion, out.Kind = autoscalingV2.String(), "HorizontalPodAutoscaler"
	ref := in.Spec.ScaleTargetRef
	out.Spec.ScaleTargetRef = autoscalingv2.CrossVersionObjectReference{Kind: ref.Kind, Name: ref.Name, APIVersion: ref.APIVersion}
	out.Spec.MinReplicas = nil
	if in.Spec.MinReplicas != nil {
		v := *in.Spec.MinReplicas
		out.Spec.MinReplicas = &v
	}
	out.Spec.MaxReplicas = in.Spec.MaxReplicas

	// v1's CPU target replaces v2's, first in the list as kube puts it.
	var metrics []autoscalingv2.MetricSpec
	if in.Spec.TargetCPUUtilizationPercentage != nil {
		v := *in.Spec.TargetCPUUtilizationPercentage
		metrics = append(metrics, autoscalingv2.MetricSpec{Type: autoscalingv2.ResourceMetricSourceType,
			Resource: &autoscalingv2.ResourceMetricSource{Name: corev1.ResourceCPU,
				Target: autoscalingv2.MetricTarget{Type: autoscalingv2.UtilizationMetricType, AverageUtilization: &v}}})
	}
	for _, m := range out.Spec.Metrics {
		if !isCPUUtilization(m) {
			metrics = append(metrics, m)
		}
	}
	out.Spec.Metrics = metrics

	st := in.Status
	out.Status.ObservedGeneration = nil
	if st.ObservedGeneration != nil {
		v := *st.ObservedGeneration
		out.Status.ObservedGeneration = &v
	}
	out.Status.LastScaleTime = st.LastScaleTime.DeepCopy()
	out.Status.CurrentReplicas, out.Status.DesiredReplicas = st.CurrentReplicas, st.DesiredReplicas
	var current2 []autoscalingv2.MetricStatus
	if st.CurrentCPUUtilizationPercentage != nil {
		v := *st.CurrentCPUUtilizationPercentage
		current2 = append(current2, autoscalingv2.MetricStatus{Type: autoscalingv2.ResourceMetricSourceType,
			Resource: &autoscalingv2.ResourceMetricStatus{Name: corev1.ResourceCPU,
				Current: autoscalingv2.MetricValueStatus{AverageUtilization: &v}}})
	}
	for _, m := range out.Status.CurrentMetrics {
		if !isCPUUtilizationStatus(m) {
			current2 = append(current2, m)
		}
	}
	out.Status.CurrentMetrics = current2
	return out, nil
}
