package serviceaddr

import (
	"context"
	"errors"
	"testing"

	corev1 "k8s.io/api/core/v1"
	discoveryv1 "k8s.io/api/discovery/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/utils/ptr"
)

// objects is a Reader over a fixed set of objects in namespace "ns".
type objects struct {
	service   *corev1.Service
	endpoints *corev1.Endpoints
	slices    []*discoveryv1.EndpointSlice
}

func (o objects) Get(_ context.Context, gvr schema.GroupVersionResource, _, name string) (runtime.Object, error) {
	switch {
	case gvr == servicesGVR && o.service != nil && o.service.Name == name:
		return o.service, nil
	case gvr == endpointsGVR && o.endpoints != nil && o.endpoints.Name == name:
		return o.endpoints, nil
	}
	return nil, apierrors.NewNotFound(gvr.GroupResource(), name)
}

func (o objects) List(_ context.Context, gvr schema.GroupVersionResource, _ string, _ bool) ([]runtime.Object, error) {
	if gvr != endpointSlicesGVR {
		return nil, errors.New("unexpected list")
	}
	var out []runtime.Object
	for _, s := range o.slices {
		out = append(out, s)
	}
	return out, nil
}

func service(ports ...corev1.ServicePort) *corev1.Service {
	return &corev1.Service{ObjectMeta: metav1.ObjectMeta{Name: "svc", Namespace: "ns"}, Spec: corev1.ServiceSpec{Ports: ports}}
}

func slice(name, portName string, port int32, ready *bool, addrs ...string) *discoveryv1.EndpointSlice {
	return &discoveryv1.EndpointSlice{
		ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: "ns", Labels: map[string]string{discoveryv1.LabelServiceName: "svc"}},
		Ports:      []discoveryv1.EndpointPort{{Name: &portName, Port: &port}},
		Endpoints:  []discoveryv1.Endpoint{{Addresses: addrs, Conditions: discoveryv1.EndpointConditions{Ready: ready}}},
	}
}

func TestResolve(t *testing.T) {
	https := corev1.ServicePort{Name: "https", Port: 443}
	endpoints := &corev1.Endpoints{ObjectMeta: metav1.ObjectMeta{Name: "svc", Namespace: "ns"},
		Subsets: []corev1.EndpointSubset{{Addresses: []corev1.EndpointAddress{{IP: "127.0.0.3"}},
			Ports: []corev1.EndpointPort{{Name: "https", Port: 9445}}}}}
	for name, tc := range map[string]struct {
		objects objects
		want    string // the address, or the Error's reason
	}{
		"no service":       {objects{}, "ServiceNotFound"},
		"external name":    {objects{service: &corev1.Service{ObjectMeta: metav1.ObjectMeta{Name: "svc"}, Spec: corev1.ServiceSpec{Type: corev1.ServiceTypeExternalName, ExternalName: "example.com"}}}, "example.com:443"},
		"no such port":     {objects{service: service(corev1.ServicePort{Name: "http", Port: 80})}, "ServicePortError"},
		"nothing to dial":  {objects{service: service(https)}, "EndpointsNotFound"},
		"slice":            {objects{service: service(https), slices: []*discoveryv1.EndpointSlice{slice("a", "https", 9443, nil, "127.0.0.2")}}, "127.0.0.2:9443"},
		"slice not ready":  {objects{service: service(https), slices: []*discoveryv1.EndpointSlice{slice("a", "https", 9443, ptr.To(false), "127.0.0.2")}}, "MissingEndpoints"},
		"other port name":  {objects{service: service(https), slices: []*discoveryv1.EndpointSlice{slice("a", "metrics", 9443, nil, "127.0.0.2")}}, "MissingEndpoints"},
		"endpoints":        {objects{service: service(https), endpoints: endpoints}, "127.0.0.3:9445"},
		"slice before eps": {objects{service: service(https), endpoints: endpoints, slices: []*discoveryv1.EndpointSlice{slice("a", "https", 9443, ptr.To(true), "127.0.0.2")}}, "127.0.0.2:9443"},
		"eps when no slice is ready": {objects{service: service(https), endpoints: endpoints,
			slices: []*discoveryv1.EndpointSlice{slice("a", "https", 9443, ptr.To(false), "127.0.0.2")}}, "127.0.0.3:9445"},
	} {
		t.Run(name, func(t *testing.T) {
			got, err := Resolve(context.Background(), tc.objects, "ns", "svc", 443)
			var resolveErr *Error
			if errors.As(err, &resolveErr) {
				got = resolveErr.Reason
			} else if err != nil {
				t.Fatal(err)
			}
			if got != tc.want {
				t.Errorf("got %q, want %q", got, tc.want)
			}
		})
	}
}
