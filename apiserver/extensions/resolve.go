package extensions

import (
	"context"
	"fmt"
	"net"
	"strconv"

	"github.com/devplane/devplane/apiserver/request"
	corev1 "k8s.io/api/core/v1"
	discoveryv1 "k8s.io/api/discovery/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// resolveService maps a conversion webhook's Service to a dialable address:
// devplane has no service network, so it dials a ready endpoint of the
// Service (EndpointSlices first, then Endpoints); an ExternalName Service is
// dialled by its external name.
func (e *Extensions) resolveService(namespace, name string, port int32) (string, error) {
	if e.core() == nil {
		return "", fmt.Errorf("no service resolution without the core registry")
	}
	ctx := request.AsAPIServer(context.Background())
	svcRes, ok := e.core().Lookup("", "v1", "services")
	if !ok {
		return "", fmt.Errorf("services are not served")
	}
	obj, err := svcRes.Store.Get(ctx, namespace, name, metav1.GetOptions{})
	if err != nil {
		return "", err
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
		return "", fmt.Errorf("service %s/%s has no port %d", namespace, name, port)
	}
	if res, ok := e.core().Lookup("discovery.k8s.io", "v1", "endpointslices"); ok {
		list, err := res.Store.List(ctx, namespace, metav1.ListOptions{LabelSelector: discoveryv1.LabelServiceName + "=" + name})
		if err == nil {
			for _, slice := range list.(*discoveryv1.EndpointSliceList).Items {
				var target int32
				for _, p := range slice.Ports {
					if p.Port != nil && (p.Name == nil && svcPort.Name == "" || p.Name != nil && *p.Name == svcPort.Name) {
						target = *p.Port
					}
				}
				if target == 0 {
					continue
				}
				for _, ep := range slice.Endpoints {
					if (ep.Conditions.Ready == nil || *ep.Conditions.Ready) && len(ep.Addresses) > 0 {
						return net.JoinHostPort(ep.Addresses[0], strconv.Itoa(int(target))), nil
					}
				}
			}
		}
	}
	if res, ok := e.core().Lookup("", "v1", "endpoints"); ok {
		obj, err := res.Store.Get(ctx, namespace, name, metav1.GetOptions{})
		if err == nil {
			for _, subset := range obj.(*corev1.Endpoints).Subsets {
				for _, p := range subset.Ports {
					if p.Name == svcPort.Name && len(subset.Addresses) > 0 {
						return net.JoinHostPort(subset.Addresses[0].IP, strconv.Itoa(int(p.Port))), nil
					}
				}
			}
		}
	}
	return "", fmt.Errorf("service %s/%s has no ready endpoints for port %d", namespace, name, port)
}
