package workloads

import (
	"context"
	"sync"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/watch"
	"k8s.io/client-go/informers"
	"k8s.io/client-go/informers/apps"
	"k8s.io/client-go/informers/autoscaling"
	"k8s.io/client-go/informers/batch"
	"k8s.io/client-go/informers/coordination"
	"k8s.io/client-go/informers/core"
	"k8s.io/client-go/informers/discovery"
	"k8s.io/client-go/informers/internalinterfaces"
	"k8s.io/client-go/informers/networking"
	"k8s.io/client-go/informers/policy"
	"k8s.io/client-go/informers/resource"
	"k8s.io/client-go/informers/scheduling"
	"k8s.io/client-go/informers/storage"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/kubernetes/scheme"
	"k8s.io/client-go/tools/cache"

	"github.com/devplane/devplane/apiserver/builtin"
	"github.com/devplane/devplane/apiserver/controllers"
)

// localFactory is a client-go SharedInformerFactory whose informers list
// and watch the server's own watch caches in-process (no HTTP, no
// encoding, objects shared with the cache: kube's controllers never mutate
// what an informer hands them). kube's controllers and scheduler take
// typed informers from it exactly as from kube-controller-manager's.
//
// Kinds this process does not serve (an API group not installed) get an
// informer that is synced and empty: there can be no such objects, and a
// list over HTTP would 404 forever and keep the informer from syncing.
// Kinds that are neither (aggregated APIs) are read over HTTP.
type localFactory struct {
	informers.SharedInformerFactory
	local  controllers.Local
	resync time.Duration
	// podFieldSelector narrows the pods informer (the scheduler's skips
	// finished pods, as kube-scheduler's does).
	podFieldSelector string
	// parent, when set, makes every informer but the pods one: a factory
	// that differs only in its pods informer shares the rest.
	parent *localFactory

	mu        sync.Mutex
	notServed []string
	created   []cache.SharedIndexInformer
}

func newLocalFactory(client kubernetes.Interface, local controllers.Local, resync time.Duration, podFieldSelector string, parent *localFactory) *localFactory {
	return &localFactory{
		parent:                parent,
		SharedInformerFactory: informers.NewSharedInformerFactory(client, resync),
		local:                 local,
		resync:                resync,
		podFieldSelector:      podFieldSelector,
	}
}

// InformerFor is where every typed informer of this factory is made: the
// group accessors below hand the factory itself to client-go's typed
// informers, so their Informer() calls land here.
func (f *localFactory) InformerFor(obj runtime.Object, newFunc internalinterfaces.NewInformerFunc) cache.SharedIndexInformer {
	if _, isPod := obj.(*corev1.Pod); f.parent != nil && !isPod {
		return f.parent.InformerFor(obj, newFunc)
	}
	return f.SharedInformerFactory.InformerFor(obj, func(client kubernetes.Interface, resync time.Duration) cache.SharedIndexInformer {
		inf := f.newInformer(obj, newFunc, client, resync)
		f.mu.Lock()
		f.created = append(f.created, inf)
		f.mu.Unlock()
		return inf
	})
}

func (f *localFactory) newInformer(obj runtime.Object, newFunc internalinterfaces.NewInformerFunc, client kubernetes.Interface, resync time.Duration) cache.SharedIndexInformer {
	{
		gvr, ok := resourceOf(obj)
		if !ok {
			return newFunc(client, resync)
		}
		var lw cache.ListerWatcher
		if lr, served := f.local(gvr); served {
			var tweak func(*metav1.ListOptions)
			if gvr.Group == "" && gvr.Resource == "pods" && f.podFieldSelector != "" {
				tweak = func(o *metav1.ListOptions) { o.FieldSelector = f.podFieldSelector }
			}
			lw = controllers.LocalListWatch(lr, tweak)
		} else {
			f.mu.Lock()
			f.notServed = append(f.notServed, gvr.String())
			f.mu.Unlock()
			lw = emptyListWatch(obj)
		}
		return cache.NewSharedIndexInformer(lw, obj, resync, cache.Indexers{cache.NamespaceIndex: cache.MetaNamespaceIndexFunc})
	}
}

// syncedFuncs are the HasSynced of every informer made so far.
func (f *localFactory) syncedFuncs() []func() bool {
	f.mu.Lock()
	defer f.mu.Unlock()
	out := make([]func() bool, len(f.created))
	for i, inf := range f.created {
		out[i] = inf.HasSynced
	}
	return out
}

// NotServed lists the resources informers were asked for that this
// process does not serve.
func (f *localFactory) NotServed() []string {
	f.mu.Lock()
	defer f.mu.Unlock()
	return append([]string(nil), f.notServed...)
}

// The groups kube's scheduler and workload controllers read.
func (f *localFactory) Apps() apps.Interface { return apps.New(f, metav1.NamespaceAll, nil) }
func (f *localFactory) Autoscaling() autoscaling.Interface {
	return autoscaling.New(f, metav1.NamespaceAll, nil)
}
func (f *localFactory) Batch() batch.Interface     { return batch.New(f, metav1.NamespaceAll, nil) }
func (f *localFactory) Core() core.Interface       { return core.New(f, metav1.NamespaceAll, nil) }
func (f *localFactory) Policy() policy.Interface   { return policy.New(f, metav1.NamespaceAll, nil) }
func (f *localFactory) Storage() storage.Interface { return storage.New(f, metav1.NamespaceAll, nil) }
func (f *localFactory) Resource() resource.Interface {
	return resource.New(f, metav1.NamespaceAll, nil)
}
func (f *localFactory) Scheduling() scheduling.Interface {
	return scheduling.New(f, metav1.NamespaceAll, nil)
}
func (f *localFactory) Discovery() discovery.Interface {
	return discovery.New(f, metav1.NamespaceAll, nil)
}
func (f *localFactory) Networking() networking.Interface {
	return networking.New(f, metav1.NamespaceAll, nil)
}
func (f *localFactory) Coordination() coordination.Interface {
	return coordination.New(f, metav1.NamespaceAll, nil)
}

// resourceOf names the resource of a built-in kind's Go type, as the
// catalogue serves it.
func resourceOf(obj runtime.Object) (schema.GroupVersionResource, bool) {
	gvks, _, err := scheme.Scheme.ObjectKinds(obj)
	if err != nil || len(gvks) == 0 {
		return schema.GroupVersionResource{}, false
	}
	gvr, ok := resourcesByKind()[gvks[0]]
	return gvr, ok
}

var resourcesByKind = sync.OnceValue(func() map[schema.GroupVersionKind]schema.GroupVersionResource {
	out := map[schema.GroupVersionKind]schema.GroupVersionResource{}
	for _, k := range builtin.Kinds() {
		out[k.GroupVersion.WithKind(k.Kind)] = k.GroupVersion.WithResource(k.Resource)
	}
	return out
})

// emptyListWatch lists nothing and watches until the informer stops.
func emptyListWatch(obj runtime.Object) cache.ListerWatcher {
	return listThenWatch{&cache.ListWatch{
		ListWithContextFunc: func(context.Context, metav1.ListOptions) (runtime.Object, error) {
			list, err := listOf(obj)
			if err != nil {
				return nil, err
			}
			return list, nil
		},
		WatchFuncWithContext: func(ctx context.Context, _ metav1.ListOptions) (watch.Interface, error) {
			w := watch.NewFake()
			go func() {
				<-ctx.Done()
				w.Stop()
			}()
			return w, nil
		},
	}}
}

// listThenWatch tells the reflector to list, then watch: a watch that
// sends the initial objects (watch-list) would wait for a bookmark the
// empty watch never sends.
type listThenWatch struct{ *cache.ListWatch }

func (listThenWatch) IsWatchListSemanticsUnSupported() bool { return true }

// listOf makes an empty list of obj's kind (FooList), resourceVersion "1".
func listOf(obj runtime.Object) (runtime.Object, error) {
	gvks, _, err := scheme.Scheme.ObjectKinds(obj)
	if err != nil {
		return nil, err
	}
	list, err := scheme.Scheme.New(gvks[0].GroupVersion().WithKind(gvks[0].Kind + "List"))
	if err != nil {
		return nil, err
	}
	if l, ok := list.(metav1.ListInterface); ok {
		l.SetResourceVersion("1")
	}
	return list, nil
}
