// Package service holds what Services serve beyond the generic store:
// cluster IPs and node ports allocated in etcd, and services/proxy.
package service

import (
	"fmt"

	corev1 "k8s.io/api/core/v1"

	"github.com/devplane/devplane/apiserver/registry"
)

// InstallProxy serves services/proxy: a clear Status, since no pod runs
// behind a Service here.
func InstallProxy(reg *registry.Registry) {
	services, ok := reg.Lookup("", "v1", "services")
	if !ok || services.Store == nil {
		return
	}
	reg.SetConnectSubresources(services.GVR, map[string]*registry.ConnectSubresource{
		"proxy": registry.NewConnect(services.Store, corev1.SchemeGroupVersion.WithKind("ServiceProxyOptions"), registry.ProxyVerbs, func(_, name string) error {
			return registry.NoRuntime(fmt.Sprintf("cannot proxy to service %q: no pod behind it runs", name))
		}),
	})
}
