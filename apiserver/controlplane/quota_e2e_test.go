package controlplane_test

import (
	"context"
	"fmt"
	"testing"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/devplane/devplane/apiserver/internal/testsupport"
)

// The resource quota controller fills a new quota's status at once and
// counts usage down after deletes, as kube-controller-manager's does.
func TestResourceQuotaStatus(t *testing.T) {
	s := startControlPlane(t, "")
	cs := s.clientset(t, false)
	ctx := context.Background()
	testNamespace(t, cs, "quota-status", nil)
	hard := corev1.ResourceList{
		"configmaps":                   resource.MustParse("10"),
		"pods":                         resource.MustParse("4"),
		"requests.cpu":                 resource.MustParse("2"),
		"count/deployments.apps":       resource.MustParse("3"),
		"services.loadbalancers":       resource.MustParse("1"),
		"count/widgets.example.com":    resource.MustParse("1"), // not served: counts zero
		"count/persistentvolumeclaims": resource.MustParse("2"),
	}
	if _, err := cs.CoreV1().ResourceQuotas("quota-status").Create(ctx, &corev1.ResourceQuota{
		ObjectMeta: metav1.ObjectMeta{Name: "q"}, Spec: corev1.ResourceQuotaSpec{Hard: hard}}, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	used := func(want map[string]string) {
		t.Helper()
		testsupport.Eventually(t, 15*time.Second, fmt.Sprintf("status.used %v", want), func() (bool, string) {
			q, err := cs.CoreV1().ResourceQuotas("quota-status").Get(ctx, "q", metav1.GetOptions{})
			if err != nil {
				return false, err.Error()
			}
			if len(q.Status.Hard) != len(hard) || len(q.Status.Used) != len(hard) {
				return false, fmt.Sprintf("hard %v used %v", q.Status.Hard, q.Status.Used)
			}
			for name, v := range want {
				if got := q.Status.Used[corev1.ResourceName(name)]; got.String() != v {
					return false, fmt.Sprintf("used %v", q.Status.Used)
				}
			}
			return true, ""
		})
	}
	// kube-root-ca.crt is in every namespace: one ConfigMap from the start.
	used(map[string]string{"configmaps": "1", "pods": "0", "requests.cpu": "0", "count/deployments.apps": "0", "count/widgets.example.com": "0"})

	for i := range 2 {
		if _, err := cs.CoreV1().ConfigMaps("quota-status").Create(ctx, configMap(fmt.Sprintf("c%d", i), nil), metav1.CreateOptions{}); err != nil {
			t.Fatal(err)
		}
	}
	pod := simplePod("p", nil)
	pod.Spec.Containers[0].Resources.Requests = corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("500m")}
	if _, err := cs.CoreV1().Pods("quota-status").Create(ctx, pod, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	replicas := int32(1)
	dep := &appsv1.Deployment{ObjectMeta: metav1.ObjectMeta{Name: "d"}, Spec: appsv1.DeploymentSpec{Replicas: &replicas,
		Selector: &metav1.LabelSelector{MatchLabels: map[string]string{"app": "d"}},
		Template: corev1.PodTemplateSpec{ObjectMeta: metav1.ObjectMeta{Labels: map[string]string{"app": "d"}}, Spec: pod.Spec}}}
	if _, err := cs.AppsV1().Deployments("quota-status").Create(ctx, dep, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	used(map[string]string{"configmaps": "3", "pods": "1", "requests.cpu": "500m", "count/deployments.apps": "1"})

	// Deletes are counted down.
	if err := cs.CoreV1().ConfigMaps("quota-status").Delete(ctx, "c0", metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	if err := cs.CoreV1().Pods("quota-status").Delete(ctx, "p", metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	used(map[string]string{"configmaps": "2", "pods": "0", "requests.cpu": "0", "count/deployments.apps": "1"})
}
