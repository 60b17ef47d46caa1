package controllers

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"slices"
	"strconv"
	"sync/atomic"
	"time"

	coordinationv1 "k8s.io/api/coordination/v1"
	corev1 "k8s.io/api/core/v1"
	discoveryv1 "k8s.io/api/discovery/v1"
	apiequality "k8s.io/apimachinery/pkg/api/equality"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/util/retry"
)

// Labels and annotations of replica leases and the kubernetes Service's
// endpoints.
const (
	APIServerIdentityLabel     = "apiserver.kubernetes.io/identity"
	APIServerIdentityValue     = "kube-apiserver"
	AdvertiseAddressAnnotation = "devplane.io/advertise-address"
	AdvertisePortAnnotation    = "devplane.io/advertise-port"
	KubernetesServiceName      = "kubernetes"
	endpointSliceManagedBy     = "devplane" // as the bootstrap hook writes it
)

// LeaseEndpointReconciler keeps this replica's Lease in kube-system fresh
// and makes the kubernetes Service's Endpoints and EndpointSlice list
// exactly the replicas whose leases have not expired. Every replica runs
// one (no leader election): a stopped replica drops out when its lease
// expires, a cleanly stopped one removes itself at once.
type LeaseEndpointReconciler struct {
	client        kubernetes.Interface
	identity      string
	ip            net.IP
	port          int32
	leaseDuration time.Duration
	logger        *slog.Logger
	synced        atomic.Bool
	now           func() time.Time
}

// NewLeaseEndpointReconciler builds the reconciler for one replica.
func NewLeaseEndpointReconciler(cfg *rest.Config, identity string, advertiseIP net.IP, port int32, leaseDuration time.Duration, logger *slog.Logger) (*LeaseEndpointReconciler, error) {
	if identity == "" || advertiseIP == nil || port <= 0 || leaseDuration < time.Second {
		return nil, errors.New("lease endpoint reconciler needs an identity, an advertise IP, a port and a lease duration of at least 1s")
	}
	client, err := kubernetes.NewForConfig(configFor(cfg, "lease-endpoint-reconciler"))
	if err != nil {
		return nil, err
	}
	return &LeaseEndpointReconciler{
		client: client, identity: identity, ip: advertiseIP, port: port,
		leaseDuration: leaseDuration, logger: loggerOr(logger, "lease-endpoint-reconciler"), now: time.Now,
	}, nil
}

func (r *LeaseEndpointReconciler) Name() string { return "lease-endpoint-reconciler" }

// HasSynced is true once this replica is listed in the endpoints.
func (r *LeaseEndpointReconciler) HasSynced() bool { return r.synced.Load() }

// Run renews the lease and reconciles the endpoints every third of the
// lease duration; when ctx ends it removes this replica.
func (r *LeaseEndpointReconciler) Run(ctx context.Context) error {
	defer r.synced.Store(false)
	period := r.leaseDuration / 3
	ticker := time.NewTicker(period)
	defer ticker.Stop()
	// A failed round is tried again soon, not a period later: at start the
	// kube-system namespace may not exist yet, and readiness waits for
	// this replica's endpoint.
	var backoff time.Duration
	for {
		var retry <-chan time.Time
		if err := r.reconcile(ctx, true); err != nil && ctx.Err() == nil {
			r.logger.Warn("reconciling the kubernetes endpoints", "err", err)
			backoff = min(max(2*backoff, 10*time.Millisecond), period)
			retry = time.After(backoff)
		} else if err == nil {
			r.synced.Store(true)
			backoff = 0
		}
		select {
		case <-ctx.Done():
			return r.removeSelf()
		case <-ticker.C:
		case <-retry:
		}
	}
}

// removeSelf deletes this replica's lease and rewrites the endpoints
// without it, with a fresh context since the run's has ended.
func (r *LeaseEndpointReconciler) removeSelf() error {
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	err := r.client.CoordinationV1().Leases(metav1.NamespaceSystem).Delete(ctx, r.identity, metav1.DeleteOptions{})
	if err != nil && !apierrors.IsNotFound(err) {
		return fmt.Errorf("removing lease %s: %w", r.identity, err)
	}
	return r.reconcile(ctx, false)
}

func (r *LeaseEndpointReconciler) reconcile(ctx context.Context, renew bool) error {
	if renew {
		if err := r.renewLease(ctx); err != nil {
			return err
		}
	}
	leases, err := r.client.CoordinationV1().Leases(metav1.NamespaceSystem).List(ctx, metav1.ListOptions{
		LabelSelector: labels.SelectorFromSet(labels.Set{APIServerIdentityLabel: APIServerIdentityValue}).String(),
	})
	if err != nil {
		return err
	}
	ips := liveReplicaIPs(leases.Items, r.now())
	if err := r.writeEndpoints(ctx, ips); err != nil {
		return err
	}
	return r.writeEndpointSlice(ctx, ips)
}

func (r *LeaseEndpointReconciler) renewLease(ctx context.Context) error {
	leases := r.client.CoordinationV1().Leases(metav1.NamespaceSystem)
	now := metav1.NewMicroTime(r.now())
	seconds := int32(r.leaseDuration / time.Second)
	return retry.RetryOnConflict(retry.DefaultRetry, func() error {
		lease, err := leases.Get(ctx, r.identity, metav1.GetOptions{})
		if apierrors.IsNotFound(err) {
			lease = &coordinationv1.Lease{ObjectMeta: metav1.ObjectMeta{Name: r.identity, Namespace: metav1.NamespaceSystem}}
		} else if err != nil {
			return err
		}
		if lease.Labels == nil {
			lease.Labels = map[string]string{}
		}
		if lease.Annotations == nil {
			lease.Annotations = map[string]string{}
		}
		lease.Labels[APIServerIdentityLabel] = APIServerIdentityValue
		lease.Annotations[AdvertiseAddressAnnotation] = r.ip.String()
		lease.Annotations[AdvertisePortAnnotation] = strconv.Itoa(int(r.port))
		lease.Spec.HolderIdentity = &r.identity
		lease.Spec.LeaseDurationSeconds = &seconds
		lease.Spec.RenewTime = &now
		if lease.Spec.AcquireTime == nil {
			lease.Spec.AcquireTime = &now
		}
		if lease.ResourceVersion == "" {
			_, err = leases.Create(ctx, lease, metav1.CreateOptions{})
		} else {
			_, err = leases.Update(ctx, lease, metav1.UpdateOptions{})
		}
		return err
	})
}

// liveReplicaIPs returns the sorted, distinct advertise addresses of the
// leases not expired at now.
func liveReplicaIPs(leases []coordinationv1.Lease, now time.Time) []string {
	var ips []string
	for _, l := range leases {
		if l.DeletionTimestamp != nil || l.Spec.RenewTime == nil || l.Spec.LeaseDurationSeconds == nil {
			continue
		}
		expiry := l.Spec.RenewTime.Add(time.Duration(*l.Spec.LeaseDurationSeconds) * time.Second)
		ip := net.ParseIP(l.Annotations[AdvertiseAddressAnnotation])
		if ip == nil || !now.Before(expiry) {
			continue
		}
		ips = append(ips, ip.String())
	}
	slices.Sort(ips)
	return slices.Compact(ips)
}

func (r *LeaseEndpointReconciler) httpsPort() corev1.EndpointPort {
	return corev1.EndpointPort{Name: "https", Port: r.port, Protocol: corev1.ProtocolTCP}
}

func (r *LeaseEndpointReconciler) writeEndpoints(ctx context.Context, ips []string) error {
	var subsets []corev1.EndpointSubset
	if len(ips) > 0 {
		subset := corev1.EndpointSubset{Ports: []corev1.EndpointPort{r.httpsPort()}}
		for _, ip := range ips {
			subset.Addresses = append(subset.Addresses, corev1.EndpointAddress{IP: ip})
		}
		subsets = []corev1.EndpointSubset{subset}
	}
	client := r.client.CoreV1().Endpoints(metav1.NamespaceDefault) //nolint:staticcheck // kube still serves and reads them
	return retry.RetryOnConflict(retry.DefaultRetry, func() error {
		ep, err := client.Get(ctx, KubernetesServiceName, metav1.GetOptions{})
		if apierrors.IsNotFound(err) {
			ep = &corev1.Endpoints{ObjectMeta: metav1.ObjectMeta{
				Name: KubernetesServiceName, Namespace: metav1.NamespaceDefault,
				// The slice is ours too: the mirroring controller must not copy it.
				Labels: map[string]string{discoveryv1.LabelSkipMirror: "true"},
			}, Subsets: subsets}
			_, err = client.Create(ctx, ep, metav1.CreateOptions{})
			return err
		}
		if err != nil {
			return err
		}
		if apiequality.Semantic.DeepEqual(ep.Subsets, subsets) && ep.Labels[discoveryv1.LabelSkipMirror] == "true" {
			return nil
		}
		ep.Subsets = subsets
		if ep.Labels == nil {
			ep.Labels = map[string]string{}
		}
		ep.Labels[discoveryv1.LabelSkipMirror] = "true"
		_, err = client.Update(ctx, ep, metav1.UpdateOptions{})
		return err
	})
}

func (r *LeaseEndpointReconciler) writeEndpointSlice(ctx context.Context, ips []string) error {
	addressType := discoveryv1.AddressTypeIPv4
	if r.ip.To4() == nil {
		addressType = discoveryv1.AddressTypeIPv6
	}
	port := r.httpsPort()
	want := &discoveryv1.EndpointSlice{
		ObjectMeta: metav1.ObjectMeta{
			Name: KubernetesServiceName, Namespace: metav1.NamespaceDefault,
			Labels: map[string]string{
				discoveryv1.LabelServiceName: KubernetesServiceName,
				discoveryv1.LabelManagedBy:   endpointSliceManagedBy,
			},
		},
		AddressType: addressType,
		Ports:       []discoveryv1.EndpointPort{{Name: &port.Name, Port: &port.Port, Protocol: &port.Protocol}},
	}
	ready := true
	for _, ip := range ips {
		want.Endpoints = append(want.Endpoints, discoveryv1.Endpoint{
			Addresses:  []string{ip},
			Conditions: discoveryv1.EndpointConditions{Ready: &ready},
		})
	}
	client := r.client.DiscoveryV1().EndpointSlices(metav1.NamespaceDefault)
	return retry.RetryOnConflict(retry.DefaultRetry, func() error {
		have, err := client.Get(ctx, KubernetesServiceName, metav1.GetOptions{})
		if apierrors.IsNotFound(err) {
			_, err = client.Create(ctx, want, metav1.CreateOptions{})
			return err
		}
		if err != nil {
			return err
		}
		if have.AddressType != want.AddressType {
			// The address type is immutable: replace the slice.
			if err := client.Delete(ctx, KubernetesServiceName, metav1.DeleteOptions{}); err != nil && !apierrors.IsNotFound(err) {
				return err
			}
			_, err = client.Create(ctx, want, metav1.CreateOptions{})
			return err
		}
		if apiequality.Semantic.DeepEqual(have.Endpoints, want.Endpoints) &&
			apiequality.Semantic.DeepEqual(have.Ports, want.Ports) &&
			apiequality.Semantic.DeepEqual(have.Labels, want.Labels) {
			return nil
		}
		updated := have.DeepCopy()
		updated.Labels, updated.Endpoints, updated.Ports = want.Labels, want.Endpoints, want.Ports
		_, err = client.Update(ctx, updated, metav1.UpdateOptions{})
		return err
	})
}
