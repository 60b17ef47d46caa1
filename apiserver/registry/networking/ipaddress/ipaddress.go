// Package ipaddress keeps the IPAddress records of Service cluster IPs, as
// kube's allocator writes them. Allocation itself stays in ipalloc's etcd
// bitmaps (one truth for replicas and restarts); the records follow it.
package ipaddress

import (
	"context"
	"log/slog"
	"net/netip"
	"time"

	corev1 "k8s.io/api/core/v1"
	networkingv1 "k8s.io/api/networking/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/devplane/devplane/apiserver/registry"
)

// What kube's IP allocator puts on the IPAddress objects it manages.
const (
	managedByLabel = "ipaddress.kubernetes.io/managed-by"
	managedByValue = "ipallocator.k8s.io"
	ipFamilyLabel  = "ipaddress.kubernetes.io/ip-family"
	// syncInterval is how soon a Service's cluster IP shows as an
	// IPAddress (and a released one goes).
	syncInterval = 500 * time.Millisecond
)

// KeepRecords records every allocated Service cluster IP as an IPAddress
// naming its Service until ctx ends.
func KeepRecords(ctx context.Context, services, ips *registry.Store, logger *slog.Logger) {
	for {
		if err := syncIPAddresses(ctx, services, ips); err != nil && ctx.Err() == nil {
			logger.Debug("recording service IPs as IPAddresses", "err", err)
		}
		select {
		case <-ctx.Done():
			return
		case <-time.After(syncInterval):
		}
	}
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
	have, err := ips.List(ctx, "", metav1.ListOptions{ResourceVersion: "0", LabelSelector: managedByLabel + "=" + managedByValue})
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
			ObjectMeta: metav1.ObjectMeta{Name: ip, Labels: map[string]string{managedByLabel: managedByValue, ipFamilyLabel: family}},
			Spec:       networkingv1.IPAddressSpec{ParentRef: ref}}, metav1.CreateOptions{})
		if err != nil && !apierrors.IsAlreadyExists(err) {
			return err
		}
	}
	return nil
}
