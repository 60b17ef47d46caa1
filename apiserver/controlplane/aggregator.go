package controlplane

import (
	"github.com/devplane/devplane/apiserver/aggregator"
	"github.com/devplane/devplane/apiserver/registry"
)

// installAggregator makes the head of the chain serve APIServices, proxy
// remote ones to their endpoints and merge their discovery.
func (cp *ControlPlane) installAggregator() error {
	_, err := aggregator.Install(aggregator.Deps{
		Server:     cp.Aggregator,
		Client:     cp.Etcd.Client(),
		Certs:      cp.Certs,
		Registries: cp.localRegistries(),
		Logger:     cp.logger.With("component", "aggregator"),
		OpenAPI:    cp.openAPI,
	})
	return err
}

// localRegistries are the registries of the servers below the aggregator:
// every group/version they serve gets a local APIService.
func (cp *ControlPlane) localRegistries() []*registry.Registry {
	return append([]*registry.Registry{cp.CoreRegistry}, cp.extensionRegistries()...)
}
