// Package servicecidr keeps the default ServiceCIDR, as kube's
// start-kubernetes-service-cidr-controller does.
package servicecidr

import (
	"context"
	"net"

	networkingv1 "k8s.io/api/networking/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"

	"github.com/devplane/devplane/apiserver/admission"
	"github.com/devplane/devplane/apiserver/registry"
)

// DefaultName is the ServiceCIDR of the service cluster IP range.
const DefaultName = "kubernetes"

// EnsureDefault makes the default ServiceCIDR for serviceRange exist and
// be Ready.
func EnsureDefault(ctx context.Context, store *registry.Store, serviceRange *net.IPNet) error {
	obj, err := store.Get(ctx, "", DefaultName, metav1.GetOptions{})
	if apierrors.IsNotFound(err) {
		obj, err = store.Create(ctx, "", &networkingv1.ServiceCIDR{ObjectMeta: metav1.ObjectMeta{Name: DefaultName},
			Spec: networkingv1.ServiceCIDRSpec{CIDRs: []string{serviceRange.String()}}}, metav1.CreateOptions{})
		if apierrors.IsAlreadyExists(err) {
			obj, err = store.Get(ctx, "", DefaultName, metav1.GetOptions{})
		}
	}
	if err != nil {
		return err
	}
	cidr := obj.(*networkingv1.ServiceCIDR)
	for _, c := range cidr.Status.Conditions {
		if c.Type == networkingv1.ServiceCIDRConditionReady && c.Status == metav1.ConditionTrue {
			return nil
		}
	}
	ready := cidr.DeepCopy()
	ready.Status.Conditions = []metav1.Condition{{Type: networkingv1.ServiceCIDRConditionReady, Status: metav1.ConditionTrue,
		Message: "Kubernetes default Service CIDR is ready", LastTransitionTime: metav1.Now()}}
	_, _, err = store.Update(admission.WithoutAdmission(ctx), "", DefaultName, "status",
		func(context.Context, runtime.Object) (runtime.Object, error) { return ready, nil }, metav1.UpdateOptions{})
	return err
}
