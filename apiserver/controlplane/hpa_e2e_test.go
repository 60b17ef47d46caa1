package controlplane_test

import (
	"context"
	"testing"
	"time"

	autoscalingv1 "k8s.io/api/autoscaling/v1"
	autoscalingv2 "k8s.io/api/autoscaling/v2"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/watch"
)

// autoscaling/v1 and autoscaling/v2 are two views of the same HPAs, as in
// kube: `kubectl autoscale` writes v1 and `kubectl get hpa` reads v2.
func TestHPAVersionsShareObjects(t *testing.T) {
	s := startControlPlane(t, "")
	cs := s.clientset(t, true) // protobuf, as client-go's default
	ctx := context.Background()
	v1, v2 := cs.AutoscalingV1().HorizontalPodAutoscalers("default"), cs.AutoscalingV2().HorizontalPodAutoscalers("default")

	w, err := v1.Watch(ctx, metav1.ListOptions{})
	if err != nil {
		t.Fatal(err)
	}
	defer w.Stop()
	fifty, three := int32(50), int32(1)
	created, err := v1.Create(ctx, &autoscalingv1.HorizontalPodAutoscaler{ObjectMeta: metav1.ObjectMeta{Name: "web"},
		Spec: autoscalingv1.HorizontalPodAutoscalerSpec{ScaleTargetRef: autoscalingv1.CrossVersionObjectReference{Kind: "Deployment", Name: "web", APIVersion: "apps/v1"},
			MinReplicas: &three, MaxReplicas: 3, TargetCPUUtilizationPercentage: &fifty}}, metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	select {
	case ev := <-w.ResultChan():
		if h, ok := ev.Object.(*autoscalingv1.HorizontalPodAutoscaler); ev.Type != watch.Added || !ok || h.Name != "web" {
			t.Errorf("v1 watch: %s %T", ev.Type, ev.Object)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("no v1 watch event")
	}

	// v2 sees it, CPU target as a Resource metric.
	got, err := v2.Get(ctx, "web", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if len(got.Spec.Metrics) != 1 || got.Spec.Metrics[0].Resource == nil || *got.Spec.Metrics[0].Resource.Target.AverageUtilization != 50 ||
		got.UID != created.UID {
		t.Fatalf("v2 view: %+v", got.Spec)
	}
	if list, err := v2.List(ctx, metav1.ListOptions{}); err != nil || len(list.Items) != 1 {
		t.Fatalf("v2 list: %v %v", err, list)
	}
	// HPAs keep a generation (kube's HPAGeneration, on by default in 1.37).
	if created.Generation != 1 || got.Generation != 1 {
		t.Errorf("generation: created %d, v2 view %d, want 1", created.Generation, got.Generation)
	}
	checkListItemsWithoutKind(t, s, "/apis/autoscaling/v1/namespaces/default/horizontalpodautoscalers", 1)
	checkListItemsWithoutKind(t, s, "/apis/autoscaling/v2/namespaces/default/horizontalpodautoscalers", 1)

	// v2 adds a memory metric v1 cannot express; a v1 update keeps it.
	got.Spec.Metrics = append(got.Spec.Metrics, autoscalingv2.MetricSpec{Type: autoscalingv2.ResourceMetricSourceType,
		Resource: &autoscalingv2.ResourceMetricSource{Name: corev1.ResourceMemory,
			Target: autoscalingv2.MetricTarget{Type: autoscalingv2.AverageValueMetricType, AverageValue: resource.NewQuantity(100<<20, resource.BinarySI)}}})
	if _, err := v2.Update(ctx, got, metav1.UpdateOptions{}); err != nil {
		t.Fatal(err)
	}
	asV1, err := v1.Get(ctx, "web", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	seventy := int32(70)
	asV1.Spec.MaxReplicas, asV1.Spec.TargetCPUUtilizationPercentage = 7, &seventy
	if _, err := v1.Update(ctx, asV1, metav1.UpdateOptions{}); err != nil {
		t.Fatal(err)
	}
	got, err = v2.Get(ctx, "web", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if got.Spec.MaxReplicas != 7 || len(got.Spec.Metrics) != 2 || *got.Spec.Metrics[0].Resource.Target.AverageUtilization != 70 ||
		got.Spec.Metrics[1].Resource.Name != corev1.ResourceMemory {
		t.Errorf("after a v1 update: max %d, metrics %+v", got.Spec.MaxReplicas, got.Spec.Metrics)
	}

	// A v1 list (protobuf, from the shared watch cache) shows v1 objects.
	list, err := v1.List(ctx, metav1.ListOptions{})
	if err != nil || len(list.Items) != 1 || list.Items[0].Spec.MaxReplicas != 7 || *list.Items[0].Spec.TargetCPUUtilizationPercentage != 70 {
		t.Fatalf("v1 list: %v %+v", err, list)
	}

	// Status written through v1 lands in v2's currentMetrics.
	asV1 = &list.Items[0]
	cur := int32(42)
	asV1.Status.CurrentReplicas, asV1.Status.DesiredReplicas, asV1.Status.CurrentCPUUtilizationPercentage = 2, 3, &cur
	if _, err := v1.UpdateStatus(ctx, asV1, metav1.UpdateOptions{}); err != nil {
		t.Fatal(err)
	}
	got, err = v2.Get(ctx, "web", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if got.Status.DesiredReplicas != 3 || len(got.Status.CurrentMetrics) != 1 || *got.Status.CurrentMetrics[0].Resource.Current.AverageUtilization != 42 {
		t.Errorf("v2 status after a v1 status update: %+v", got.Status)
	}

	// Deleted through one version, gone from both.
	if err := v1.Delete(ctx, "web", metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	if list, err := v2.List(ctx, metav1.ListOptions{}); err != nil || len(list.Items) != 0 {
		t.Errorf("v2 after a v1 delete: %v %d items", err, len(list.Items))
	}
}

// kube's HPA controller runs: without a metrics API (none is installed,
// as on a cluster without metrics-server) an HPA still holds its target
// within minReplicas and maxReplicas, and says why it cannot do more.
func TestHPAControllerWithoutMetrics(t *testing.T) {
	_, cs := startWorkloads(t, 1)
	ctx := context.Background()
	if _, err := cs.AppsV1().Deployments("default").Create(ctx, testDeployment("web", 1), metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	fifty, three := int32(50), int32(3)
	if _, err := cs.AutoscalingV2().HorizontalPodAutoscalers("default").Create(ctx, &autoscalingv2.HorizontalPodAutoscaler{
		ObjectMeta: metav1.ObjectMeta{Name: "web"},
		Spec: autoscalingv2.HorizontalPodAutoscalerSpec{
			ScaleTargetRef: autoscalingv2.CrossVersionObjectReference{APIVersion: "apps/v1", Kind: "Deployment", Name: "web"},
			MinReplicas:    &three, MaxReplicas: 5,
			Metrics: []autoscalingv2.MetricSpec{{Type: autoscalingv2.ResourceMetricSourceType, Resource: &autoscalingv2.ResourceMetricSource{
				Name: corev1.ResourceCPU, Target: autoscalingv2.MetricTarget{Type: autoscalingv2.UtilizationMetricType, AverageUtilization: &fifty}}}},
		},
	}, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	waitFor(t, 10*time.Second, "the deployment scaled to minReplicas", func(ctx context.Context) (bool, error) {
		d, err := cs.AppsV1().Deployments("default").Get(ctx, "web", metav1.GetOptions{})
		return err == nil && d.Spec.Replicas != nil && *d.Spec.Replicas == 3, err
	})
	// The next sync (kube's 15 s period) tries the metrics.
	waitFor(t, 30*time.Second, "the HPA's status", func(ctx context.Context) (bool, error) {
		hpa, err := cs.AutoscalingV2().HorizontalPodAutoscalers("default").Get(ctx, "web", metav1.GetOptions{})
		if err != nil || hpa.Status.DesiredReplicas != 3 {
			return false, err
		}
		conditions := map[autoscalingv2.HorizontalPodAutoscalerConditionType]autoscalingv2.HorizontalPodAutoscalerCondition{}
		for _, c := range hpa.Status.Conditions {
			conditions[c.Type] = c
		}
		able, active := conditions[autoscalingv2.AbleToScale], conditions[autoscalingv2.ScalingActive]
		return able.Status == corev1.ConditionTrue && active.Status == corev1.ConditionFalse && active.Reason == "FailedGetResourceMetric", nil
	})
	events, err := cs.CoreV1().Events("default").List(ctx, metav1.ListOptions{FieldSelector: "involvedObject.kind=HorizontalPodAutoscaler,reason=SuccessfulRescale"})
	if err != nil || len(events.Items) == 0 || events.Items[0].Message != "New size: 3; reason: Current number of replicas below Spec.MinReplicas" {
		t.Errorf("rescale event: %v %+v", err, events)
	}
}
