package aggregator

import (
	"context"
	"fmt"
	"math/rand/v2"
	"net"
	"strconv"

	corev1 "k8s.io/api/core/v1"
	discoveryv1 "k8s.io/api/discovery/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	apiregv1 "k8s.io/kube-aggregator/pkg/apis/apiregistration/v1"
)

// resolveError is why a Service has no usable endpoint; Reason is the
// Available condition reason kube uses.
type resolveError struct {
	Reason  string
	Message string
}

func (e *resolveError) Error() string { return e.Message }

// resolve picks an endpoint ("host:port") of the APIService's Service: a
// ready address from its EndpointSlices or Endpoints, or its externalName.
// Cluster IPs are never used: on a laptop nothing routes them.
func (a *Aggregator) resolve(ctx context.Context, ref *apiregv1.ServiceReference) (string, error) {
	ctx = systemContext(ctx)
	port := int32(443)
	if ref.Port != nil {
		port = *ref.Port
	}
	services := a.lookup("", "v1", "services")
	if services == nil {
		return "", &resolveError{"ServiceAccessError", "services are not served"}
	}
	obj, err := services.Get(ctx, ref.Namespace, ref.Name, metav1.GetOptions{ResourceVersion: "0"})
	if apierrors.IsNotFound(err) {
		return "", &resolveError{"ServiceNotFound", fmt.Sprintf("service/%s in %q is not present", ref.Name, ref.Namespace)}
	}
	if err != nil {
		return "", &resolveError{"ServiceAccessError", fmt.Sprintf("service/%s in %q cannot be checked due to: %v", ref.Name, ref.Namespace, err)}
	}
	svc := obj.(*corev1.Service)
	if svc.Spec.Type == corev1.ServiceTypeExternalName {
		return net.JoinHostPort(svc.Spec.ExternalName, strconv.Itoa(int(port))), nil
	}
	var svcPort *corev1.ServicePort
	for i := range svc.Spec.Ports {
		if svc.Spec.Ports[i].Port == port {
			svcPort = &svc.Spec.Ports[i]
		}
	}
	if svcPort == nil {
		return "", &resolveError{"ServicePortError", fmt.Sprintf("service/%s in %q is not listening on port %d", ref.Name, ref.Namespace, port)}
	}
	addrs, found := a.sliceAddresses(ctx, svc, svcPort.Name)
	if len(addrs) == 0 {
		var eps []string
		var ok bool
		eps, ok = a.endpointsAddresses(ctx, svc, svcPort.Name)
		addrs, found = eps, found || ok
	}
	if len(addrs) == 0 {
		if !found {
			return "", &resolveError{"EndpointsNotFound", fmt.Sprintf("cannot find endpoints for service/%s in %q", ref.Name, ref.Namespace)}
		}
		return "", &resolveError{"MissingEndpoints", fmt.Sprintf("endpoints for service/%s in %q have no addresses with port name %q", ref.Name, ref.Namespace, svcPort.Name)}
	}
	return addrs[rand.IntN(len(addrs))], nil
}

// sliceAddresses returns the ready host:port pairs of the Service's
// EndpointSlices for the named port; found reports whether any slice exists.
func (a *Aggregator) sliceAddresses(ctx context.Context, svc *corev1.Service, portName string) (addrs []string, found bool) {
	slices := a.lookup("discovery.k8s.io", "v1", "endpointslices")
	if slices == nil {
		return nil, false
	}
	obj, err := slices.List(ctx, svc.Namespace, metav1.ListOptions{ResourceVersion: "0",
		LabelSelector: discoveryv1.LabelServiceName + "=" + svc.Name})
	if err != nil {
		return nil, false
	}
	for _, s := range obj.(*discoveryv1.EndpointSliceList).Items {
		found = true
		for _, p := range s.Ports {
			name := ""
			if p.Name != nil {
				name = *p.Name
			}
			if name != portName || p.Port == nil {
				continue
			}
			for _, ep := range s.Endpoints {
				if ep.Conditions.Ready != nil && !*ep.Conditions.Ready {
					continue
				}
				for _, addr := range ep.Addresses {
					addrs = append(addrs, net.JoinHostPort(addr, strconv.Itoa(int(*p.Port))))
				}
			}
		}
	}
	return addrs, found
}

// endpointsAddresses does the same from the Service's Endpoints object.
func (a *Aggregator) endpointsAddresses(ctx context.Context, svc *corev1.Service, portName string) (addrs []string, found bool) {
	store := a.lookup("", "v1", "endpoints")
	if store == nil {
		return nil, false
	}
	obj, err := store.Get(ctx, svc.Namespace, svc.Name, metav1.GetOptions{ResourceVersion: "0"})
	if err != nil {
		return nil, false
	}
	for _, ss := range obj.(*corev1.Endpoints).Subsets {
		for _, p := range ss.Ports {
			if p.Name != portName {
				continue
			}
			for _, addr := range ss.Addresses {
				addrs = append(addrs, net.JoinHostPort(addr.IP, strconv.Itoa(int(p.Port))))
			}
		}
	}
	return addrs, true
}
