package controlplane

import (
	"github.com/devplane/devplane/apiserver/extensions"
	"github.com/devplane/devplane/apiserver/openapi"
	"github.com/devplane/devplane/apiserver/registry"
)

// extensionsState is the extensions server's API: its registry exists from
// the first use (the core server's discovery lists it) and is filled by
// installExtensions once the core registry exists.
type extensionsState struct {
	reg *registry.Registry
	api *extensions.Extensions
}

func (cp *ControlPlane) extState() *extensionsState {
	cp.extOnce.Do(func() { cp.ext = &extensionsState{reg: registry.New()} })
	return cp.ext
}

// installExtensions serves CustomResourceDefinitions and custom resources
// on the extensions server. It runs before the core server is built, which
// takes over the extensions' hooks and checks when it is created.
func (cp *ControlPlane) installExtensions() error {
	st := cp.extState()
	api, err := extensions.Install(extensions.Deps{
		Server:       cp.Extensions,
		Client:       cp.Etcd.Client(),
		Logger:       cp.logger,
		CoreRegistry: func() *registry.Registry { return cp.CoreRegistry },
		Registry:     st.reg,
	})
	if err != nil {
		return err
	}
	st.api = api
	return nil
}

// ExtensionsAPI is the extensions server's API (nil before New returns).
func (cp *ControlPlane) ExtensionsAPI() *extensions.Extensions {
	return cp.extState().api
}

// extensionRegistries are listed by the core server's discovery too.
func (cp *ControlPlane) extensionRegistries() []*registry.Registry {
	return []*registry.Registry{cp.extState().reg}
}

// openAPIState is every served resource (built-in and custom) and the
// custom resources' schemas.
func (cp *ControlPlane) openAPIState() ([]openapi.Resource, openapi.SuppliedDefinitions) {
	resources := openAPIResources(cp.CoreRegistry)
	if cp.ExtensionsAPI() == nil {
		return resources, nil
	}
	custom, extra := cp.ExtensionsAPI().OpenAPI()
	return append(resources, custom...), extra
}

// onExtensionsChange runs f when the served custom resources change.
func (cp *ControlPlane) onExtensionsChange(f func()) {
	if api := cp.ExtensionsAPI(); api != nil {
		api.OnChange(f)
	}
}
