// Package serviceaddr finds the address to dial for a Service's port, for
// the aggregator's APIServices, admission webhooks and CRD conversion
// webhooks alike. devplane has no service network, so it dials a ready
// endpoint, as kube-apiserver does with --enable-aggregator-routing: from
// the Service's EndpointSlices, else its Endpoints; an ExternalName
// Service by its external name.
package serviceaddr

import (
	"context"
	"fmt"
	"math/rand/v2"
	"net"
	"strconv"

	corev1 "k8s.io/api/core/v1"
	discoveryv1 "k8s.io/api/discovery/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
)

var (
	servicesGVR       = corev1.SchemeGroupVersion.WithResource("services")
	endpointsGVR      = corev1.SchemeGroupVersion.WithResource("endpoints")
	endpointSlicesGVR = discoveryv1.SchemeGroupVersion.WithResource("endpointslices")
)

// Reader reads the objects resolution needs (admission's Source is one).
type Reader interface {
	// Get reads one object; a missing one is a NotFound error.
	Get(ctx context.Context, gvr schema.GroupVersionResource, namespace, name string) (runtime.Object, error)
	// List reads a resource's objects in namespace.
	List(ctx context.Context, gvr schema.GroupVersionResource, namespace string, consistent bool) ([]runtime.Object, error)
}

// Store is the part of a registry store a Reader needs.
type Store interface {
	Get(ctx context.Context, namespace, name string, opts metav1.GetOptions) (runtime.Object, error)
	List(ctx context.Context, namespace string, opts metav1.ListOptions) (runtime.Object, error)
}

// Stores is a Reader over the stores it returns for each resource (nil
// when none serves it). It reads the watch caches, and etcd before it
// believes an object missing that the cache may not have seen yet.
type Stores func(gvr schema.GroupVersionResource) Store

func (s Stores) Get(ctx context.Context, gvr schema.GroupVersionResource, namespace, name string) (runtime.Object, error) {
	store := s(gvr)
	if store == nil {
		return nil, fmt.Errorf("%s are not served", gvr.Resource)
	}
	obj, err := store.Get(ctx, namespace, name, metav1.GetOptions{ResourceVersion: "0"})
	if apierrors.IsNotFound(err) {
		obj, err = store.Get(ctx, namespace, name, metav1.GetOptions{})
	}
	return obj, err
}

func (s Stores) List(ctx context.Context, gvr schema.GroupVersionResource, namespace string, consistent bool) ([]runtime.Object, error) {
	store := s(gvr)
	if store == nil {
		return nil, fmt.Errorf("%s are not served", gvr.Resource)
	}
	opts := metav1.ListOptions{ResourceVersion: "0"}
	if consistent {
		opts.ResourceVersion = ""
	}
	list, err := store.List(ctx, namespace, opts)
	if err != nil {
		return nil, err
	}
	return meta.ExtractList(list)
}

// Error is why a Service has no usable endpoint; Reason is the reason
// kube-aggregator gives an APIService's Available condition for it.
type Error struct {
	Reason  string
	Message string
}

func (e *Error) Error() string { return e.Message }

// Resolve returns "host:port" for port of the Service namespace/name: a
// ready address, picked at random as kube does, whose endpoint port has
// the name of the Service's port.
func Resolve(ctx context.Context, r Reader, namespace, name string, port int32) (string, error) {
	obj, err := r.Get(ctx, servicesGVR, namespace, name)
	if apierrors.IsNotFound(err) {
		return "", &Error{"ServiceNotFound", fmt.Sprintf("service/%s in %q is not present", name, namespace)}
	}
	if err != nil {
		return "", &Error{"ServiceAccessError", fmt.Sprintf("service/%s in %q cannot be checked due to: %v", name, namespace, err)}
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
		return "", &Error{"ServicePortError", fmt.Sprintf("service/%s in %q is not listening on port %d", name, namespace, port)}
	}
	addrs, found := sliceAddresses(ctx, r, svc, svcPort.Name)
	if len(addrs) == 0 {
		var fromEndpoints bool
		addrs, fromEndpoints = endpointsAddresses(ctx, r, svc, svcPort.Name)
		found = found || fromEndpoints
	}
	if len(addrs) == 0 {
		if !found {
			return "", &Error{"EndpointsNotFound", fmt.Sprintf("cannot find endpoints for service/%s in %q", name, namespace)}
		}
		return "", &Error{"MissingEndpoints", fmt.Sprintf("endpoints for service/%s in %q have no addresses with port name %q", name, namespace, svcPort.Name)}
	}
	return addrs[rand.IntN(len(addrs))], nil
}

// sliceAddresses returns the ready host:port pairs of the Service's
// EndpointSlices for the named port; found reports whether any slice exists.
func sliceAddresses(ctx context.Context, r Reader, svc *corev1.Service, portName string) (addrs []string, found bool) {
	objs, err := r.List(ctx, endpointSlicesGVR, svc.Namespace, false)
	if err != nil {
		return nil, false
	}
	for _, obj := range objs {
		slice := obj.(*discoveryv1.EndpointSlice)
		if slice.Labels[discoveryv1.LabelServiceName] != svc.Name {
			continue
		}
		found = true
		for _, p := range slice.Ports {
			name := ""
			if p.Name != nil {
				name = *p.Name
			}
			if name != portName || p.Port == nil {
				continue
			}
			for _, ep := range slice.Endpoints {
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
func endpointsAddresses(ctx context.Context, r Reader, svc *corev1.Service, portName string) (addrs []string, found bool) {
	obj, err := r.Get(ctx, endpointsGVR, svc.Namespace, svc.Name)
	if err != nil {
		return nil, false
	}
	for _, subset := range obj.(*corev1.Endpoints).Subsets {
		for _, p := range subset.Ports {
			if p.Name != portName {
				continue
			}
			for _, addr := range subset.Addresses {
				addrs = append(addrs, net.JoinHostPort(addr.IP, strconv.Itoa(int(p.Port))))
			}
		}
	}
	return addrs, true
}
