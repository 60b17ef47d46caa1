package controlplane

import (
	"context"
	"net/netip"
	"time"

	corev1 "k8s.io/api/core/v1"
	networkingv1 "k8s.io/api/networking/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"

	"github.com/devplane/devplane/apiserver/admission"
	"github.com/devplane/devplane/apiserver/registry"
	"github.com/devplane/devplane/apiserver/request"
)

// What kube's IP allocator puts on the IPAddress objects it manages.
const (
	ipManagedByLabel  = "ipaddress.kubernetes.io/managed-by"
	ipManagedByValue  = "ipallocator.k8s.io"
	ipFamilyLabel     = "ipaddress.kubernetes.io/ip-family"
	defaultServiceCID = "kubernetes"
	// ipAddressSyncInterval is how soon a Service's cluster IP shows as an
	// IPAddress (and a released one goes).
	ipAddressSyncInterval = 500 * time.Millisecond
)

// installServiceCIDRs keeps the default ServiceCIDR "kubernetes" for the
// service cluster IP range (Ready, as kube's
// start-kubernetes-service-cidr-controller does) and records every
// allocated Service cluster IP as an IPAddress naming its Service, as
// kube's allocator does. Allocation itself stays in ipalloc's etcd bitmaps
// (one truth for replicas and restarts); the IPAddress objects follow it.
func (cp *ControlPlane) installServiceCIDRs() error {
	cidrs, ok1 := cp.CoreRegistry.Lookup(networkingv1.GroupName, "v1", "servicecidrs")
	ips, ok2 := cp.CoreRegistry.Lookup(networkingv1.GroupName, "v1", "ipaddresses")
	services, ok3 := cp.CoreRegistry.Lookup("", "v1", "services")
	if !ok1 || !ok2 || !ok3 || cidrs.Store == nil || ips.Store == nil || services.Store == nil || cp.opts.ServiceClusterIPRange == nil {
		return nil
	}
	return cp.Core.AddPostStartHook("start-kubernetes-service-cidr-controller", func(ctx context.Context) error {
		ctx = request.AsAPIServer(ctx)
		if err := retry(ctx, func() error { return cp.ensureDefaultServiceCIDR(ctx, cidrs.Store) }); err != nil {
			return err
		}
		go func() {
			for {
				if err := syncIPAddresses(ctx, services.Store, ips.Store); err != nil && ctx.Err() == nil {
					cp.logger.Debug("recording service IPs as IPAddresses", "err", err)
				}
				select {
				case <-ctx.Done():
					return
				case <-time.After(ipAddressSyncInterval):
				}
			}
		}()
		return nil
	})
}

func (cp *ControlPlane) ensureDefaultServiceCIDR(ctx context.Context, store *registry.Store) error {
	obj, err := store.Get(ctx, "", defaultServiceCID, metav1.GetOptions{})
	if apierrors.IsNotFound(err) {
		obj, err = store.Create(ctx, "", &networkingv1.ServiceCIDR{ObjectMeta: metav1.ObjectMeta{Name: defaultServiceCID},
			Spec: networkingv1.ServiceCIDRSpec{CIDRs: []string{cp.opts.ServiceClusterIPRange.String()}}}, metav1.CreateOptions{})
		if apierrors.IsAlreadyExists(err) {
			obj, err = store.Get(ctx, "", defaultServiceCID, metav1.GetOptions{})
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
	_, _, err = store.Update(admission.WithoutAdmission(ctx), "", defaultServiceCID, "status",
		func(context.Context, runtime.Object) (runtime.Object, error) { return ready, nil }, metav1.UpdateOptions{})
	return err
}

// syncIPAddresses makes the managed IPAddress objects what the Services'
// cluster IPs are: one per allocated IP, naming its Service.
func syncIPAddresses(ctx context.Context, services, ips *registry.Store) error {
	cached := metav1.ListOptions{ResourceVersion: "0"}
	list, err := services.List(ctx, "", cached)
	if err != nil {
		return err
	}
	want := map[string]*networkingv1.ParentReference{}
	for _, svc := range list.(*corev1.ServiceList).Items {
		for _, ip := range svc.Spec.ClusterIPs {
			if _, err := netip.ParseAddr(ip); err == nil {
				want[ip] = &networkingv1.ParentReference{Resource: "services", Namespace: svc.Namespace, Name: svc.Name}
			}
		}
	}
	have, err := ips.List(ctx, "", metav1.ListOptions{ResourceVersion: "0", LabelSelector: ipManagedByLabel + "=" + ipManagedByValue})
	if err != nil {
		return err
	}
	for _, ip := range have.(*networkingv1.IPAddressList).Items {
		ref, ok := want[ip.Name]
		if ok && ip.Spec.ParentRef != nil && *ip.Spec.ParentRef == *ref {
			delete(want, ip.Name)
			continue
		}
		// Released, or now another Service's: the old record goes first.
		uid := ip.UID
		if _, _, err := ips.Delete(ctx, "", ip.Name, &metav1.DeleteOptions{Preconditions: &metav1.Preconditions{UID: &uid}}); err != nil && !apierrors.IsNotFound(err) && !apierrors.IsConflict(err) {
			return err
		}
	}
	for ip, ref := range want {
		family := "IPv4"
		if addr, _ := netip.ParseAddr(ip); addr.Is6() {
			family = "IPv6"
		}
		_, err := ips.Create(ctx, "", &networkingv1.IPAddress{
			ObjectMeta: metav1.ObjectMeta{Name: ip, Labels: map[string]string{ipManagedByLabel: ipManagedByValue, ipFamilyLabel: family}},
			Spec:       networkingv1.IPAddressSpec{ParentRef: ref}}, metav1.CreateOptions{})
		if err != nil && !apierrors.IsAlreadyExists(err) {
			return err
		}
	}
	return nil
}
