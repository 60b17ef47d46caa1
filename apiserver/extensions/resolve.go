package extensions

import (
	"context"
	"errors"

	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/devplane/devplane/apiserver/internal/serviceaddr"
	"github.com/devplane/devplane/apiserver/request"
)

// resolveService maps a conversion webhook's Service to a dialable
// address: a ready endpoint of the Service, or its external name.
func (e *Extensions) resolveService(namespace, name string, port int32) (string, error) {
	core := e.core()
	if core == nil {
		return "", errors.New("no service resolution without the core registry")
	}
	stores := serviceaddr.Stores(func(gvr schema.GroupVersionResource) serviceaddr.Store {
		if res, ok := core.Lookup(gvr.Group, gvr.Version, gvr.Resource); ok && res.Store != nil {
			return res.Store
		}
		return nil
	})
	return serviceaddr.Resolve(request.AsAPIServer(context.Background()), stores, namespace, name, port)
}
