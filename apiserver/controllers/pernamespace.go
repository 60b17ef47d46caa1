package controllers

import (
	"context"
	"log/slog"
	"sync/atomic"

	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/fields"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/tools/cache"
)

// perNamespaceObject keeps one named object in every Active namespace:
// it is the common part of the service account and root CA controllers.
type perNamespaceObject struct {
	controllerName string
	objectName     string
	client         kubernetes.Interface
	reads          reads
	logger         *slog.Logger
	synced         atomic.Bool
	// resource and newObject are the objects' core/v1 resource and type.
	resource  string
	newObject func() runtime.Object
	// reconcile makes the object in namespace right; cached is what the
	// informer holds (nil when absent).
	reconcile func(ctx context.Context, namespace string, cached any) error
}

func (c *perNamespaceObject) Name() string    { return c.controllerName }
func (c *perNamespaceObject) HasSynced() bool { return c.synced.Load() }

func (c *perNamespaceObject) Run(ctx context.Context) error {
	defer c.synced.Store(false)
	queue := newQueue[string](c.controllerName, 10*time.Millisecond, 10*time.Second)
	nsInformer := cache.NewSharedIndexInformer(c.reads.typed("namespaces", nil), &corev1.Namespace{}, 0, cache.Indexers{})
	onlyNamed := func(o *metav1.ListOptions) {
		o.FieldSelector = fields.OneTermEqualSelector("metadata.name", c.objectName).String()
	}
	objInformer := cache.NewSharedIndexInformer(c.reads.typed(c.resource, onlyNamed), c.newObject(), 0,
		cache.Indexers{})
	enqueueNamespace := func(obj any) {
		if ns, ok := obj.(*corev1.Namespace); ok && ns.Status.Phase != corev1.NamespaceTerminating {
			queue.Add(ns.Name)
		}
	}
	enqueueObject := func(obj any) {
		if tomb, ok := obj.(cache.DeletedFinalStateUnknown); ok {
			obj = tomb.Obj
		}
		if m, ok := obj.(metav1.Object); ok && m.GetName() == c.objectName {
			queue.Add(m.GetNamespace())
		}
	}
	if _, err := nsInformer.AddEventHandler(cache.ResourceEventHandlerFuncs{
		AddFunc:    enqueueNamespace,
		UpdateFunc: func(_, obj any) { enqueueNamespace(obj) },
	}); err != nil {
		return err
	}
	if _, err := objInformer.AddEventHandler(cache.ResourceEventHandlerFuncs{
		UpdateFunc: func(_, obj any) { enqueueObject(obj) },
		DeleteFunc: enqueueObject,
	}); err != nil {
		return err
	}
	synced, stopped := runInformers(ctx, nsInformer, objInformer)
	defer stopped()
	if !synced {
		queue.ShutDown()
		return nil
	}
	c.synced.Store(true)
	runWorkers(ctx, queue, 2, c.logger, func(ctx context.Context, namespace string) error {
		obj, exists, err := nsInformer.GetIndexer().GetByKey(namespace)
		if err != nil || !exists {
			return err
		}
		if ns := obj.(*corev1.Namespace); ns.Status.Phase == corev1.NamespaceTerminating || ns.DeletionTimestamp != nil {
			return nil
		}
		cached, exists, err := objInformer.GetIndexer().GetByKey(namespace + "/" + c.objectName)
		if err != nil {
			return err
		}
		if !exists {
			cached = nil
		}
		err = c.reconcile(ctx, namespace, cached)
		if apierrors.IsAlreadyExists(err) || apierrors.IsNotFound(err) {
			return nil // raced with another writer; the informer brings it back
		}
		if apierrors.IsForbidden(err) {
			c.logger.Debug("cannot write object (namespace terminating?)", "namespace", namespace, "err", err)
			return nil
		}
		return err
	})
	return nil
}
