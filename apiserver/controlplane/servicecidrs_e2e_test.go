package controlplane_test

import (
	"context"
	"fmt"
	"net"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	networkingv1 "k8s.io/api/networking/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/devplane/devplane/apiserver/controlplane/controlplanetest"
)

func TestServiceCIDRAndIPAddresses(t *testing.T) {
	s := startControlPlane(t, "")
	cs := s.clientset(t, false)
	ctx := context.Background()

	kubernetes, err := cs.CoreV1().Services("default").Get(ctx, "kubernetes", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	controlplanetest.Eventually(t, 30*time.Second, "the default ServiceCIDR, Ready", func() (bool, string) {
		cidr, err := cs.NetworkingV1().ServiceCIDRs().Get(ctx, "kubernetes", metav1.GetOptions{})
		if err != nil {
			return false, err.Error()
		}
		ready := false
		for _, c := range cidr.Status.Conditions {
			ready = ready || c.Type == networkingv1.ServiceCIDRConditionReady && c.Status == metav1.ConditionTrue
		}
		if !ready || len(cidr.Spec.CIDRs) != 1 {
			return false, fmt.Sprintf("%+v", cidr)
		}
		_, ipnet, err := net.ParseCIDR(cidr.Spec.CIDRs[0])
		return err == nil && ipnet.Contains(net.ParseIP(kubernetes.Spec.ClusterIP)), fmt.Sprintf("%v holds %s: %v", cidr.Spec.CIDRs, kubernetes.Spec.ClusterIP, err)
	})

	ns := createNamespace(t, cs, "ipaddresses")
	svc, err := cs.CoreV1().Services(ns).Create(ctx, &corev1.Service{ObjectMeta: metav1.ObjectMeta{Name: "web"},
		Spec: corev1.ServiceSpec{Ports: []corev1.ServicePort{{Port: 80}}}}, metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	ip := svc.Spec.ClusterIP
	controlplanetest.Eventually(t, 30*time.Second, "the Service's IPAddress", func() (bool, string) {
		addr, err := cs.NetworkingV1().IPAddresses().Get(ctx, ip, metav1.GetOptions{})
		if err != nil {
			return false, err.Error()
		}
		ref := addr.Spec.ParentRef
		return ref != nil && ref.Resource == "services" && ref.Namespace == ns && ref.Name == "web" &&
				addr.Labels["ipaddress.kubernetes.io/managed-by"] == "ipallocator.k8s.io" && addr.Labels["ipaddress.kubernetes.io/ip-family"] == "IPv4",
			fmt.Sprintf("%+v", addr)
	})
	if err := cs.CoreV1().Services(ns).Delete(ctx, "web", metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	controlplanetest.Eventually(t, 30*time.Second, "the released IPAddress gone", func() (bool, string) {
		_, err := cs.NetworkingV1().IPAddresses().Get(ctx, ip, metav1.GetOptions{})
		return apierrors.IsNotFound(err), fmt.Sprint(err)
	})
	out := s.mustKubectl(t, "get", "ipaddresses")
	found := false
	for _, line := range strings.Split(out, "\n") {
		f := strings.Fields(line)
		found = found || len(f) == 2 && f[0] == kubernetes.Spec.ClusterIP && f[1] == "services/default/kubernetes"
	}
	if !found {
		t.Errorf("kubectl get ipaddresses lacks the kubernetes Service's %s:\n%s", kubernetes.Spec.ClusterIP, out)
	}
}
