package controllers

import (
	"context"

	"k8s.io/apimachinery/pkg/api/meta"
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
	gvr := schema.GroupVersionResource{Version: "v1", Resource: resource}
	if lr, ok := r.lookup(gvr); ok {
		return localListWatch(lr, tweak, nil)
	}
	if tweak == nil {
		tweak = func(*metav1.ListOptions) {}
	}
	return cache.NewFilteredListWatchFromClient(r.restCore, resource, metav1.NamespaceAll, tweak)
}

// metadataOnly lists and watches any resource as PartialObjectMetadata
// (what the garbage collector needs of every object).
func (r reads) metadataOnly(gvr schema.GroupVersionResource) cache.ListerWatcher {
	if lr, ok := r.lookup(gvr); ok {
		return localListWatch(lr, nil, toPartialMetadata)
	}
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

// localListWatch adapts a LocalReader to an informer's ListerWatcher,
// converting every object with convert when set.
func localListWatch(lr LocalReader, tweak func(*metav1.ListOptions), convert func(runtime.Object) (runtime.Object, error)) cache.ListerWatcher {
	return &cache.ListWatch{
		ListWithContextFunc: func(ctx context.Context, opts metav1.ListOptions) (runtime.Object, error) {
			if tweak != nil {
				tweak(&opts)
			}
			list, err := lr.List(ctx, metav1.NamespaceAll, opts)
			if err != nil || convert == nil {
				return list, err
			}
			return convertList(list, convert)
		},
		WatchFuncWithContext: func(ctx context.Context, opts metav1.ListOptions) (watch.Interface, error) {
			if tweak != nil {
				tweak(&opts)
			}
			w, err := lr.Watch(ctx, metav1.NamespaceAll, opts)
			if err != nil || convert == nil {
				return w, err
			}
			return watch.Filter(w, func(ev watch.Event) (watch.Event, bool) {
				if ev.Type == watch.Error {
					return ev, true
				}
				obj, err := convert(ev.Object)
				if err != nil {
					return watch.Event{Type: watch.Error, Object: &metav1.Status{Status: metav1.StatusFailure, Message: err.Error()}}, true
				}
				ev.Object = obj
				return ev, true
			}), nil
		},
	}
}

func convertList(list runtime.Object, convert func(runtime.Object) (runtime.Object, error)) (runtime.Object, error) {
	listMeta, err := meta.ListAccessor(list)
	if err != nil {
		return nil, err
	}
	out := &metav1.PartialObjectMetadataList{}
	out.ResourceVersion = listMeta.GetResourceVersion()
	out.Continue = listMeta.GetContinue()
	out.RemainingItemCount = listMeta.GetRemainingItemCount()
	err = meta.EachListItem(list, func(item runtime.Object) error {
		obj, err := convert(item)
		if err != nil {
			return err
		}
		out.Items = append(out.Items, *obj.(*metav1.PartialObjectMetadata))
		return nil
	})
	return out, err
}

// toPartialMetadata keeps an object's type and metadata. For typed objects
// the ObjectMeta struct is copied; its maps and slices stay shared with the
// cache (read-only here).
func toPartialMetadata(obj runtime.Object) (runtime.Object, error) {
	if p, ok := obj.(*metav1.PartialObjectMetadata); ok {
		return p, nil
	}
	acc, err := meta.Accessor(obj)
	if err != nil {
		return nil, err
	}
	out := &metav1.PartialObjectMetadata{}
	out.APIVersion, out.Kind = obj.GetObjectKind().GroupVersionKind().ToAPIVersionAndKind()
	if om, ok := acc.(*metav1.ObjectMeta); ok {
		out.ObjectMeta = *om
		return out, nil
	}
	out.Name, out.GenerateName, out.Namespace = acc.GetName(), acc.GetGenerateName(), acc.GetNamespace()
	out.UID, out.ResourceVersion, out.Generation = acc.GetUID(), acc.GetResourceVersion(), acc.GetGeneration()
	out.CreationTimestamp, out.DeletionTimestamp = acc.GetCreationTimestamp(), acc.GetDeletionTimestamp()
	out.DeletionGracePeriodSeconds = acc.GetDeletionGracePeriodSeconds()
	out.Labels, out.Annotations = acc.GetLabels(), acc.GetAnnotations()
	out.OwnerReferences, out.Finalizers = acc.GetOwnerReferences(), acc.GetFinalizers()
	return out, nil
}
