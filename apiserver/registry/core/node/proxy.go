// Package node holds what nodes serve beyond the generic store.
package node

import (
	"fmt"

	corev1 "k8s.io/api/core/v1"

	"github.com/devplane/devplane/apiserver/registry"
)

// InstallProxy serves nodes/proxy: a clear Status, since no kubelet
// listens behind a simulated node.
func InstallProxy(reg *registry.Registry) {
	reg.SetNoRuntimeProxy(corev1.SchemeGroupVersion.WithResource("nodes"), "NodeProxyOptions", func(name string) string {
		return fmt.Sprintf("cannot proxy to node %q", name)
	})
}
