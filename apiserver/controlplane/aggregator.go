package controlplane

import (
	"context"
	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/devplane/devplane/apiserver/aggregator"
	"github.com/devplane/devplane/apiserver/controllers"
	"github.com/devplane/devplane/apiserver/registry"
)

// installAggregator makes the head of the chain serve APIServices, proxy
// remote ones to their endpoints and merge their discovery.
func (cp *ControlPlane) installAggregator() error {
	agg, err := aggregator.Install(aggregator.Deps{
		Server:     cp.Aggregator,
		Client:     cp.Etcd.Client(),
		Certs:      cp.Certs,
		Registries: cp.localRegistries(),
		Dynamic:    cp.extState().reg,
		DynamicSynced: func(ctx context.Context) error {
			if api := cp.ExtensionsAPI(); api != nil {
				return api.WaitSynced(ctx)
			}
			return nil
		},
		Logger:  cp.logger.With("component", "aggregator"),
		OpenAPI: cp.openAPI,
	})
	if err == nil {
		cp.aggregatorRegistry.Store(agg.Registry())
	}
	return err
}

// LocalReader finds the store serving gvr in this process (built-in,
// custom or apiregistration resources), for the in-process controllers to
// list and watch the watch caches directly; false for aggregated APIs.
func (cp *ControlPlane) LocalReader(gvr schema.GroupVersionResource) (controllers.LocalReader, bool) {
	regs := cp.localRegistries()
	if agg := cp.aggregatorRegistry.Load(); agg != nil {
		regs = append(regs, agg)
	}
	for _, reg := range regs {
		if r, ok := reg.Lookup(gvr.Group, gvr.Version, gvr.Resource); ok && r.Store != nil {
			return r.Store, true
		}
	}
	return nil, false
}

// localRegistries are the registries of the servers below the aggregator:
// every group/version they serve gets a local APIService.
func (cp *ControlPlane) localRegistries() []*registry.Registry {
	return append([]*registry.Registry{cp.CoreRegistry}, cp.extensionRegistries()...)
}
