// Package controllers holds the control-plane controllers devplane runs
// in-process: namespace deletion, garbage collection, default service
// accounts and their token Secrets, the root CA ConfigMap, resource quota
// status, CSR signing, and the kubernetes Service's endpoints kept by
// every replica. They read the server's watch caches directly (Local) and
// write through its API with client-go and a loopback rest.Config.
package controllers

import (
	"context"
	"errors"
	"log/slog"
	"sync"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/client-go/discovery"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/metadata"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/cache"
	"k8s.io/client-go/util/workqueue"
)

// Controller is one control loop. Run blocks until ctx ends and may be
// called again afterwards (a replica can lose and regain leadership).
type Controller interface {
	Name() string
	Run(ctx context.Context) error
	// HasSynced reports whether the current run's informers have synced.
	HasSynced() bool
}

// userAgent tags each controller's requests so audit logs and
// metrics tell them apart.
func configFor(cfg *rest.Config, name string) *rest.Config {
	c := rest.CopyConfig(cfg)
	c.UserAgent = "devplane/" + name
	// In-process controllers talk to their own server: do not let the
	// client-side limiter throttle namespace deletion or GC.
	if c.QPS == 0 {
		c.QPS = 500
	}
	if c.Burst == 0 {
		c.Burst = 1000
	}
	return c
}

// clients are one controller's API clients: typed and metadata ones for
// writes, and reads for its informers (in-process when local is set).
type clients struct {
	client   kubernetes.Interface
	metadata metadata.Interface
	reads    reads
}

func clientsFor(cfg *rest.Config, local Local, name string) (clients, error) {
	cfg = configFor(cfg, name)
	client, err := kubernetes.NewForConfig(cfg)
	if err != nil {
		return clients{}, err
	}
	md, err := metadata.NewForConfig(cfg)
	if err != nil {
		return clients{}, err
	}
	return clients{client: client, metadata: md,
		reads: reads{local: local, restCore: client.CoreV1().RESTClient(), metadata: md}}, nil
}

func loggerOr(l *slog.Logger, name string) *slog.Logger {
	if l == nil {
		l = slog.Default()
	}
	return l.With("controller", name)
}

// newQueue is a rate-limited queue whose first retries are fast: most
// retries here wait for something that settles in milliseconds.
func newQueue[T comparable](name string, base, max time.Duration) workqueue.TypedRateLimitingInterface[T] {
	return workqueue.NewTypedRateLimitingQueueWithConfig(
		workqueue.NewTypedItemExponentialFailureRateLimiter[T](base, max),
		workqueue.TypedRateLimitingQueueConfig[T]{Name: name},
	)
}

// runWorkers processes queue items with n goroutines until ctx ends, then
// shuts the queue down and waits for the workers.
func runWorkers[T comparable](ctx context.Context, queue workqueue.TypedRateLimitingInterface[T], n int, logger *slog.Logger, handle func(context.Context, T) error) {
	var wg sync.WaitGroup
	for range n {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for processNext(ctx, queue, logger, handle) {
			}
		}()
	}
	<-ctx.Done()
	queue.ShutDown()
	wg.Wait()
}

func processNext[T comparable](ctx context.Context, queue workqueue.TypedRateLimitingInterface[T], logger *slog.Logger, handle func(context.Context, T) error) bool {
	item, shutdown := queue.Get()
	if shutdown {
		return false
	}
	defer queue.Done(item)
	err := handle(ctx, item)
	switch {
	case err == nil:
		queue.Forget(item)
	case errors.Is(err, errRequeue):
		queue.AddRateLimited(item)
	case ctx.Err() != nil:
		// Stopping: the error is a consequence, not news.
	default:
		logger.Debug("sync failed, retrying", "item", item, "err", err)
		queue.AddRateLimited(item)
	}
	return true
}

// runInformers runs informers until ctx ends and waits for them to sync
// (false: ctx ended first); stopped returns once they all have.
func runInformers(ctx context.Context, informers ...cache.SharedIndexInformer) (synced bool, stopped func()) {
	var running sync.WaitGroup
	hasSynced := make([]cache.InformerSynced, len(informers))
	for i, inf := range informers {
		hasSynced[i] = inf.HasSynced
		running.Go(func() { inf.RunWithContext(ctx) })
	}
	return waitForSync(ctx, hasSynced...), running.Wait
}

// waitForSync waits until every informer has synced or ctx ends. It checks
// every few milliseconds, not every 100ms as cache.WaitForCacheSync does:
// the controllers' sync is part of /readyz, and start-up is measured in ms.
func waitForSync(ctx context.Context, synced ...cache.InformerSynced) bool {
	err := wait.PollUntilContextCancel(ctx, 5*time.Millisecond, true, func(context.Context) (bool, error) {
		for _, s := range synced {
			if !s() {
				return false, nil
			}
		}
		return true, nil
	})
	return err == nil
}

// errRequeue asks for a rate-limited retry without logging: the item is
// waiting for something (content deletion, finalizers), not failing.
var errRequeue = errors.New("waiting, requeue")

// discoverResources returns one version per group-resource (the group's
// preferred version first, as kubectl does) of every resource supporting
// all verbs. Discovery failing for some groups still returns the others,
// with the error.
func discoverResources(d discovery.DiscoveryInterface, namespacedOnly bool, verbs ...string) (map[schema.GroupVersionResource]metav1.APIResource, error) {
	var lists []*metav1.APIResourceList
	var err error
	if namespacedOnly {
		lists, err = discovery.ServerPreferredNamespacedResources(d)
	} else {
		lists, err = discovery.ServerPreferredResources(d)
	}
	if err != nil && !discovery.IsGroupDiscoveryFailedError(err) {
		return nil, err
	}
	out := map[schema.GroupVersionResource]metav1.APIResource{}
	var parseErrs []error
	for _, list := range discovery.FilteredBy(discovery.SupportsAllVerbs{Verbs: verbs}, lists) {
		gv, perr := schema.ParseGroupVersion(list.GroupVersion)
		if perr != nil {
			parseErrs = append(parseErrs, &groupVersionParseError{list.GroupVersion, perr})
			continue
		}
		for _, r := range list.APIResources {
			r.Group, r.Version = gv.Group, gv.Version
			out[gv.WithResource(r.Name)] = r
		}
	}
	if len(parseErrs) > 0 {
		return out, errors.Join(append([]error{err}, parseErrs...)...)
	}
	return out, err
}

// groupVersionParseError marks a discovery answer with an unparsable
// group version (NamespaceDeletionGroupVersionParsingFailure).
type groupVersionParseError struct {
	groupVersion string
	err          error
}

func (e *groupVersionParseError) Error() string {
	return "couldn't parse group version " + e.groupVersion + ": " + e.err.Error()
}

func hasVerb(r metav1.APIResource, verb string) bool {
	for _, v := range r.Verbs {
		if v == verb {
			return true
		}
	}
	return false
}
