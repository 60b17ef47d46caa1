package controllers

import (
	"context"
	"log/slog"
	"sync"
	"sync/atomic"
	"time"

	corev1 "k8s.io/api/core/v1"
	apiequality "k8s.io/apimachinery/pkg/api/equality"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/cache"
)

// QuotaUsageFunc counts what a quota's namespace uses of each resource its
// hard names, among the objects its scopes take in; a name nothing counts
// is left out.
type QuotaUsageFunc func(ctx context.Context, rq *corev1.ResourceQuota) (corev1.ResourceList, error)

// quotaResync is how often namespaces with quotas are recounted, so usage
// falls soon after deletes (kube replenishes on delete events, within
// seconds too); admission keeps it current on creates.
const quotaResync = 2 * time.Second

// QuotaController keeps every ResourceQuota's status (hard and used), as
// kube-controller-manager's resource quota controller: a new quota shows
// its usage at once, and usage drops after deletes.
type QuotaController struct {
	client kubernetes.Interface
	reads  reads
	usage  QuotaUsageFunc
	logger *slog.Logger
	synced atomic.Bool
	// Resync is how often namespaces with quotas are recounted.
	Resync time.Duration

	// usedSeen is each quota's status.used as the worker last saw it, and
	// since when. A usage someone else wrote (admission charges a create
	// before the object is stored) is not recounted until it has been
	// seen for settle: a recount right then could miss that object. The
	// worker itself notices the change, so it does not matter whether the
	// informer's handlers have run yet.
	mu       sync.Mutex
	usedSeen map[string]seenUsage
}

type seenUsage struct {
	used  corev1.ResourceList
	since time.Time // zero: written by this controller, or first seen
}

// settle is how long after admission's count a recount waits, so the
// object admission counted has reached the cache.
const settle = time.Second

// NewQuotaController builds the controller; usage counts a quota's
// objects (admission.QuotaUsage over the watch caches, in devplane).
func NewQuotaController(cfg *rest.Config, local Local, usage QuotaUsageFunc, logger *slog.Logger) (*QuotaController, error) {
	c, err := clientsFor(cfg, local, "resourcequota-controller")
	if err != nil {
		return nil, err
	}
	return &QuotaController{client: c.client, reads: c.reads, usage: usage,
		logger: loggerOr(logger, "resourcequota"), Resync: quotaResync}, nil
}

func (c *QuotaController) Name() string    { return "resourcequota-controller" }
func (c *QuotaController) HasSynced() bool { return c.synced.Load() }

// Run recounts a namespace when one of its quotas changes, and every
// namespace with quotas each Resync.
func (c *QuotaController) Run(ctx context.Context) error {
	defer c.synced.Store(false)
	queue := newQueue[string]("resourcequota", 10*time.Millisecond, 5*time.Second)
	informer := cache.NewSharedIndexInformer(c.reads.typed("resourcequotas", nil), &corev1.ResourceQuota{}, 0,
		cache.Indexers{cache.NamespaceIndex: cache.MetaNamespaceIndexFunc})
	c.usedSeen = map[string]seenUsage{}
	if _, err := informer.AddEventHandler(cache.ResourceEventHandlerFuncs{
		AddFunc: func(obj any) { queue.Add(obj.(*corev1.ResourceQuota).Namespace) },
		UpdateFunc: func(_, obj any) {
			// As kube: a changed spec (or a status that does not show it)
			// is recounted now; usage changes wait for the resync.
			if cur := obj.(*corev1.ResourceQuota); !apiequality.Semantic.DeepEqual(cur.Spec.Hard, cur.Status.Hard) {
				queue.Add(cur.Namespace)
			}
		},
		DeleteFunc: func(obj any) {
			if q, ok := obj.(*corev1.ResourceQuota); ok {
				c.mu.Lock()
				delete(c.usedSeen, q.Namespace+"/"+q.Name)
				c.mu.Unlock()
			}
		},
	}); err != nil {
		return err
	}
	synced, stopped := runInformers(ctx, informer)
	defer stopped()
	if !synced {
		queue.ShutDown()
		return nil
	}
	c.synced.Store(true)
	go func() {
		tick := time.NewTicker(c.Resync)
		defer tick.Stop()
		for {
			select {
			case <-ctx.Done():
				return
			case <-tick.C:
				for _, ns := range informer.GetIndexer().ListIndexFuncValues(cache.NamespaceIndex) {
					queue.Add(ns)
				}
			}
		}
	}()
	runWorkers(ctx, queue, 2, c.logger, func(ctx context.Context, namespace string) error {
		objs, err := informer.GetIndexer().ByIndex(cache.NamespaceIndex, namespace)
		if err != nil || len(objs) == 0 {
			return err
		}
		if wait := c.sinceAdmission(objs); wait > 0 {
			queue.AddAfter(namespace, wait)
			return nil
		}
		return c.sync(ctx, namespace, objs)
	})
	return nil
}

// sinceAdmission is how long to wait before recounting, if someone else
// (admission) changed one of the quotas' usage less than settle ago, as
// far as the worker has seen.
func (c *QuotaController) sinceAdmission(objs []any) time.Duration {
	now := time.Now()
	c.mu.Lock()
	defer c.mu.Unlock()
	var wait time.Duration
	for _, o := range objs {
		q := o.(*corev1.ResourceQuota)
		key := q.Namespace + "/" + q.Name
		seen, ok := c.usedSeen[key]
		if !ok {
			c.usedSeen[key] = seenUsage{used: q.Status.Used}
			continue
		}
		if !apiequality.Semantic.DeepEqual(seen.used, q.Status.Used) {
			seen = seenUsage{used: q.Status.Used, since: now}
			c.usedSeen[key] = seen
		}
		if !seen.since.IsZero() {
			wait = max(wait, settle-now.Sub(seen.since))
		}
	}
	return wait
}

// wrote records a usage this controller wrote, which needs no settling.
func (c *QuotaController) wrote(q *corev1.ResourceQuota) {
	c.mu.Lock()
	c.usedSeen[q.Namespace+"/"+q.Name] = seenUsage{used: q.Status.Used}
	c.mu.Unlock()
}

// sync writes each quota's status from a count of what it takes in. As
// kube's controller does, a resource nothing counts keeps the usage last
// written for it (none, at first).
func (c *QuotaController) sync(ctx context.Context, namespace string, objs []any) error {
	for _, o := range objs {
		q := o.(*corev1.ResourceQuota)
		counted, err := c.usage(ctx, q)
		if err != nil {
			return err
		}
		want := corev1.ResourceQuotaStatus{Hard: q.Spec.Hard.DeepCopy(), Used: corev1.ResourceList{}}
		for name := range q.Spec.Hard {
			if used, ok := counted[name]; ok {
				want.Used[name] = used
			} else if used, ok := q.Status.Used[name]; ok {
				want.Used[name] = used
			}
		}
		if (q.Status.Hard != nil || len(q.Spec.Hard) == 0) && apiequality.Semantic.DeepEqual(q.Status, want) {
			continue
		}
		updated := q.DeepCopy()
		updated.Status = want
		stored, err := c.client.CoreV1().ResourceQuotas(namespace).UpdateStatus(ctx, updated, metav1.UpdateOptions{})
		switch {
		case apierrors.IsNotFound(err):
		case apierrors.IsConflict(err):
			return errRequeue // admission or a user wrote it meanwhile: recount
		case err != nil:
			return err
		default:
			c.wrote(stored)
		}
	}
	return nil
}
