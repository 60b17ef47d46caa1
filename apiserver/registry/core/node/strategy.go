// Package node is kube's node strategy where it differs from the generic
// store's: a kubelet registers its node with a status.
package node

import "github.com/devplane/devplane/apiserver/registry"

// Configure gives the generic strategy the node's differences.
func Configure(s *registry.Strategy) {
	s.CreateKeepsStatus = true
}
