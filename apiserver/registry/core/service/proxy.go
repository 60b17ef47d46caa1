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
	reg.SetNoRuntimeProxy(corev1.SchemeGroupVersion.WithResource("services"), "ServiceProxyOptions", func(name string) string {
		return fmt.Sprintf("cannot proxy to service %q: no pod behind it runs", name)
	})
}
