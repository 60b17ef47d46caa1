package aggregator

import (
	"context"

	"k8s.io/apimachinery/pkg/runtime/schema"
	apiregv1 "k8s.io/kube-aggregator/pkg/apis/apiregistration/v1"

	"github.com/devplane/devplane/apiserver/internal/serviceaddr"
)

// resolve picks an endpoint ("host:port") of the APIService's Service.
// Cluster IPs are never used: on a laptop nothing routes them.
func (a *Aggregator) resolve(ctx context.Context, ref *apiregv1.ServiceReference) (string, error) {
	port := int32(443)
	if ref.Port != nil {
		port = *ref.Port
	}
	return serviceaddr.Resolve(systemContext(ctx), serviceaddr.Stores(a.delegateStore), ref.Namespace, ref.Name, port)
}

// delegateStore is the delegates' store of gvr, or nil.
func (a *Aggregator) delegateStore(gvr schema.GroupVersionResource) serviceaddr.Store {
	if s := a.lookup(gvr.Group, gvr.Version, gvr.Resource); s != nil {
		return s
	}
	return nil
}
