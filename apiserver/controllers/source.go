package controllers

import (
	"context"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/watch"
	"k8s.io/client-go/metadata"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/cache"
)

// LocalReader lists and watches one resource inside the server process:
// the server's own watch cache, with no HTTP, TLS or encoding in between.
// Objects it returns are shared with the cache and must not be mutated.
type LocalReader interface {
	List(ctx context.Context, namespace string, opts metav1.ListOptions) (runtime.Object, error)
	Watch(ctx context.Context, namespace string, opts metav1.ListOptions) (watch.Interface, error)
}

// Local finds the in-process reader of a resource; false when this
// process does not serve it (an aggregated API), which is then read over
// HTTP like any client would.
type Local func(gvr schema.GroupVersionResource) (LocalReader, bool)

// reads is where a controller's informers get their lists and watches:
// in-process when the resource is local, else over the API.
type reads struct {
	local    Local
	restCore rest.Interface // core/v1, for typed informers over HTTP
	metadata metadata.Interface
}

// typed lists and watches a core/v1 resource as typed objects, narrowed
// by tweak (e.g. a field selector).
func (r reads) typed(resource string, tweak func(*metav1.ListOptions)) cache.ListerWatcher {
	return r.typedIn(schema.GroupVersionResource{Version: "v1", Resource: resource}, r.restCore, tweak)
}

// typedIn is typed for a resource of any group, read over HTTP through
// that group version's REST client when it is not local.
func (r reads) typedIn(gvr schema.GroupVersionResource, client rest.Interface, tweak func(*metav1.ListOptions)) cache.ListerWatcher {
	if lr, ok := r.lookup(gvr); ok {
		return LocalListWatch(lr, tweak)
	}
	if tweak == nil {
		tweak = func(*metav1.ListOptions) {}
	}
	return cache.NewFilteredListWatchFromClient(client, gvr.Resource, metav1.NamespaceAll, tweak)
}

// metadataOnly lists and watches any resource as PartialObjectMetadata over
// the API (the garbage collector reads local resources in place instead).
func (r reads) metadataOnly(gvr schema.GroupVersionResource) cache.ListerWatcher {
	client := r.metadata.Resource(gvr)
	return &cache.ListWatch{
		ListWithContextFunc: func(ctx context.Context, opts metav1.ListOptions) (runtime.Object, error) {
			return client.List(ctx, opts)
		},
		WatchFuncWithContext: func(ctx context.Context, opts metav1.ListOptions) (watch.Interface, error) {
			return client.Watch(ctx, opts)
		},
	}
}

func (r reads) lookup(gvr schema.GroupVersionResource) (LocalReader, bool) {
	if r.local == nil {
		return nil, false
	}
	return r.local(gvr)
}

// LocalListWatch adapts a LocalReader to an informer's ListerWatcher.
func LocalListWatch(lr LocalReader, tweak func(*metav1.ListOptions)) cache.ListerWatcher {
	return &cache.ListWatch{
		ListWithContextFunc: func(ctx context.Context, opts metav1.ListOptions) (runtime.Object, error) {
			if tweak != nil {
				tweak(&opts)
			}
			return lr.List(ctx, metav1.NamespaceAll, opts)
		},
		WatchFuncWithContext: func(ctx context.Context, opts metav1.ListOptions) (watch.Interface, error) {
			if tweak != nil {
				tweak(&opts)
			}
			return lr.Watch(ctx, metav1.NamespaceAll, opts)
		},
	}
}
