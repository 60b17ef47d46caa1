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
	nodes, ok := reg.Lookup("", "v1", "nodes")
	if !ok || nodes.Store == nil {
		return
	}
	reg.SetConnectSubresources(nodes.GVR, map[string]*registry.ConnectSubresource{
		"proxy": registry.NewConnect(nodes.Store, corev1.SchemeGroupVersion.WithKind("NodeProxyOptions"), registry.ProxyVerbs, func(_, name string) error {
			return registry.NoRuntime(fmt.Sprintf("cannot proxy to node %q", name))
		}),
	})
}
