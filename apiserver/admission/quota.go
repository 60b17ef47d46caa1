package admission

import (
	"context"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	corev1 "k8s.io/api/core/v1"
	eventsv1 "k8s.io/api/events/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	kadmission "k8s.io/apiserver/pkg/admission"
	"k8s.io/apiserver/pkg/admission/plugin/resourcequota"
	quota "k8s.io/apiserver/pkg/quota/v1"
	"k8s.io/apiserver/pkg/quota/v1/generic"
	"k8s.io/client-go/tools/cache"

	"github.com/devplane/devplane/apiserver/admission/kubeplugin"
)

var resourceQuotasGVR = schema.GroupVersionResource{Version: "v1", Resource: "resourcequotas"}

// quotaIgnored are the kinds kube's quota never counts: requests that
// store nothing, and events.
var quotaIgnored = map[schema.GroupResource]bool{
	{Resource: "bindings"}:                                                 true,
	{Resource: "componentstatuses"}:                                        true,
	{Resource: "events"}:                                                   true,
	{Group: eventsv1.GroupName, Resource: "events"}:                        true,
	{Group: "authentication.k8s.io", Resource: "tokenreviews"}:             true,
	{Group: "authentication.k8s.io", Resource: "selfsubjectreviews"}:       true,
	{Group: "authorization.k8s.io", Resource: "subjectaccessreviews"}:      true,
	{Group: "authorization.k8s.io", Resource: "selfsubjectaccessreviews"}:  true,
	{Group: "authorization.k8s.io", Resource: "localsubjectaccessreviews"}: true,
	{Group: "authorization.k8s.io", Resource: "selfsubjectrulesreviews"}:   true,
}

// quotaRetries is how many times a quota whose status write lost a race
// is read again and the request checked again against it, as kube does.
const quotaRetries = 3

// ResourceQuota is kube's quota admission: a write that a quota of its
// namespace counts (by kube's evaluators, scopes and scope selectors
// included) is refused if it would take usage past the quota's hard
// limits, else charged to the quota's status.used before it is stored.
// Writes in one namespace are checked one at a time, and a charge that
// loses a race (the quota controller, another replica) is checked again
// against the quota read afresh, so no burst of creates gets past a limit.
func ResourceQuota(src Source) Interface {
	q := &quotaAdmission{src: src, lookup: newQuotaLookup(src),
		evaluators: generic.NewRegistry(kubeplugin.QuotaEvaluators(nil)),
		locks:      map[string]*namespaceLock{}, written: map[string]*corev1.ResourceQuota{}}
	return Func{ValidateFunc: q.validate}
}

type quotaAdmission struct {
	src        Source
	lookup     *quotaLookup
	evaluators quota.Registry // kube's, plus object counts added as kinds come

	mu    sync.Mutex
	locks map[string]*namespaceLock // namespace → its writes' turn
	// written are the quotas' statuses admission last wrote: the watch
	// cache may not show them yet, and a stale used would cost a conflict.
	written map[string]*corev1.ResourceQuota // namespace/name → quota
}

type namespaceLock struct {
	sync.Mutex
	users int
}

func (q *quotaAdmission) validate(ctx context.Context, a *Attributes) error {
	if a.Namespace == "" || a.Object == nil || (a.Operation != Create && a.Operation != Update) {
		return nil
	}
	gr := a.Resource.GroupResource()
	if quotaIgnored[gr] {
		return nil
	}
	evaluator := q.evaluators.Get(gr)
	if evaluator == nil {
		// Any other kind is counted as count/<resource>.<group>.
		evaluator = generic.NewObjectCountEvaluator(gr, nil, "")
		q.evaluators.Add(evaluator)
	}
	attrs := kadmission.NewAttributesRecord(a.Object, a.OldObject, a.Kind, a.Namespace, a.Name, a.Resource,
		a.Subresource, kadmission.Operation(a.Operation), a.Options, a.DryRun, nil)
	if !evaluator.Handles(attrs) {
		return nil
	}
	if a.Resource == resourceQuotasGVR && a.Operation == Create && !a.DryRun {
		q.lookup.quotaCreating(a.Namespace)
	}
	found, err := q.lookup.quotas(ctx, a.Namespace)
	if err != nil || len(found) == 0 {
		return err
	}
	defer q.lockNamespace(a.Namespace)()
	quotas := q.latest(a.Namespace, found)
	for retries := quotaRetries; ; retries-- {
		charged, err := resourcequota.CheckRequest(quotas, attrs, evaluator, nil)
		if err != nil || a.DryRun {
			return err
		}
		var lost map[string]bool
		var lastErr error
		for i := range charged {
			if quota.Equals(quotas[i].Status.Used, charged[i].Status.Used) {
				continue
			}
			stored, err := q.src.UpdateStatus(ctx, resourceQuotasGVR, &charged[i])
			if err != nil {
				if lost == nil {
					lost = map[string]bool{}
				}
				lost[charged[i].Name], lastErr = true, err
				continue
			}
			q.remember(stored)
		}
		if lost == nil {
			return nil
		}
		if retries == 0 {
			return lastErr
		}
		fresh, err := q.src.List(ctx, resourceQuotasGVR, a.Namespace, true)
		if err != nil {
			return lastErr
		}
		// Only the quotas not charged yet are checked again; one deleted
		// meanwhile no longer limits.
		quotas = quotas[:0]
		for _, o := range fresh {
			if rq := o.(*corev1.ResourceQuota); lost[rq.Name] {
				quotas = append(quotas, *rq.DeepCopy())
			}
		}
	}
}

// lockNamespace waits for namespace's turn and returns its release.
func (q *quotaAdmission) lockNamespace(namespace string) func() {
	q.mu.Lock()
	l := q.locks[namespace]
	if l == nil {
		l = &namespaceLock{}
		q.locks[namespace] = l
	}
	l.users++
	q.mu.Unlock()
	l.Lock()
	return func() {
		l.Unlock()
		q.mu.Lock()
		if l.users--; l.users == 0 {
			delete(q.locks, namespace)
		}
		q.mu.Unlock()
	}
}

// latest copies the namespace's quotas, each as admission last wrote it
// where the cache has not caught up with that write yet.
func (q *quotaAdmission) latest(namespace string, found []runtime.Object) []corev1.ResourceQuota {
	q.mu.Lock()
	defer q.mu.Unlock()
	out := make([]corev1.ResourceQuota, 0, len(found))
	for _, o := range found {
		rq := o.(*corev1.ResourceQuota)
		key := namespace + "/" + rq.Name
		if w, ok := q.written[key]; ok {
			if revision(w) > revision(rq) {
				rq = w
			} else {
				delete(q.written, key) // the cache has it, or newer
			}
		}
		out = append(out, *rq.DeepCopy())
	}
	return out
}

// remember keeps the quota status admission just wrote.
func (q *quotaAdmission) remember(obj runtime.Object) {
	rq, ok := obj.(*corev1.ResourceQuota)
	if !ok {
		return
	}
	q.mu.Lock()
	defer q.mu.Unlock()
	if len(q.written) > 4096 {
		clear(q.written) // quotas deleted before the cache caught up
	}
	q.written[rq.Namespace+"/"+rq.Name] = rq
}

// revision is an object's resourceVersion as the etcd revision it is.
func revision(rq *corev1.ResourceQuota) uint64 {
	n, _ := strconv.ParseUint(rq.ResourceVersion, 10, 64)
	return n
}

// quotaLookupTTL is how long a namespace found without quotas by a live
// (consistent) read is trusted to have none while the watch cache shows
// none either: kube's quota admission keeps such live lookups 30s too.
const quotaLookupTTL = 30 * time.Second

// quotaLookup finds a namespace's quotas as kube's quota admission does:
// from the watch cache, and only when it has none, from a consistent read,
// whose "none" is remembered for quotaLookupTTL. A quota just created
// reaches the cache within milliseconds, so a create in a namespace
// without quotas costs no etcd read. A quota created through this server
// voids its namespace's "none" at once (kube's does not, and admits
// creates past a new quota until its live lookup expires).
type quotaLookup struct {
	src      Source
	mu       sync.Mutex
	absent   map[string]time.Time // namespace → "none" trusted until
	creating map[string]time.Time // namespace → "none" neither trusted nor stored until
}

func newQuotaLookup(src Source) *quotaLookup {
	return &quotaLookup{src: src, absent: map[string]time.Time{}, creating: map[string]time.Time{}}
}

// quotaCreatingWindow is how long after a quota create's admission a
// namespace's "none" is neither trusted nor stored: the create commits,
// and reaches the watch cache, well within it.
const quotaCreatingWindow = 10 * time.Second

func (l *quotaLookup) quotaCreating(namespace string) {
	now := time.Now()
	l.mu.Lock()
	defer l.mu.Unlock()
	delete(l.absent, namespace)
	rememberUntil(l.creating, namespace, now, now.Add(quotaCreatingWindow))
}

// rememberUntil records namespace in m until until; namespaces come and
// go, so a large m first drops what expired.
func rememberUntil(m map[string]time.Time, namespace string, now, until time.Time) {
	if len(m) > 4096 {
		for ns, t := range m {
			if now.After(t) {
				delete(m, ns)
			}
		}
	}
	m[namespace] = until
}

// trustNone reports whether a "none" for namespace may be trusted (read
// is true) or stored (read is false) at now. Called with l.mu held.
func (l *quotaLookup) trustNone(namespace string, now time.Time, read bool) bool {
	if until, ok := l.creating[namespace]; ok && !now.After(until) {
		return false
	}
	if !read {
		return true
	}
	until, known := l.absent[namespace]
	return known && now.Before(until)
}

func (l *quotaLookup) quotas(ctx context.Context, namespace string) ([]runtime.Object, error) {
	quotas, err := l.src.List(ctx, resourceQuotasGVR, namespace, false)
	if err != nil {
		return nil, err
	}
	if len(quotas) > 0 {
		if slices.ContainsFunc(quotas, statusBehind) {
			// kube's CheckRequest limits by status.hard: a cached quota
			// whose status does not show its spec yet would limit nothing,
			// though the quota controller may have written it already.
			return l.src.List(ctx, resourceQuotasGVR, namespace, true)
		}
		return quotas, nil
	}
	now := time.Now()
	l.mu.Lock()
	trusted := l.trustNone(namespace, now, true)
	l.mu.Unlock()
	if trusted {
		return nil, nil
	}
	if quotas, err = l.src.List(ctx, resourceQuotasGVR, namespace, true); err != nil || len(quotas) > 0 {
		return quotas, err
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	if !l.trustNone(namespace, now, false) {
		return nil, nil
	}
	rememberUntil(l.absent, namespace, now, now.Add(quotaLookupTTL))
	return nil, nil
}

// statusBehind reports whether a quota's status does not show its spec's
// hard limits yet: the quota controller writes them (with the usage)
// soon after each create or spec change.
func statusBehind(o runtime.Object) bool {
	rq := o.(*corev1.ResourceQuota)
	return !quota.Equals(rq.Spec.Hard, rq.Status.Hard)
}

// QuotaUsage is what quota's namespace uses of each resource its hard
// names, among the objects its scopes and scope selector take in, by
// kube's evaluators over the watch caches: the resource quota
// controller's count. resolve finds the served version of a group's
// resource, for count/<resource>.<group> names; names nothing counts are
// left out, as kube leaves them.
func QuotaUsage(ctx context.Context, src Source, resolve func(group, resource string) (schema.GroupVersionResource, bool),
	rq *corev1.ResourceQuota) (corev1.ResourceList, error) {
	lister := func(gvr schema.GroupVersionResource) (cache.GenericLister, error) {
		return sourceLister{ctx: ctx, src: src, gvr: gvr}, nil
	}
	evaluators := kubeplugin.QuotaEvaluators(lister)
	known := map[schema.GroupResource]bool{}
	for _, e := range evaluators {
		known[e.GroupResource()] = true
	}
	for name := range rq.Spec.Hard {
		counted, ok := strings.CutPrefix(string(name), "count/")
		if !ok {
			continue
		}
		res, group, _ := strings.Cut(counted, ".")
		gvr, ok := resolve(group, res)
		if !ok || known[gvr.GroupResource()] || quotaIgnored[gvr.GroupResource()] {
			continue
		}
		known[gvr.GroupResource()] = true
		evaluators = append(evaluators, generic.NewObjectCountEvaluator(gvr.GroupResource(),
			generic.ListResourceUsingListerFunc(lister, gvr), ""))
	}
	return quota.CalculateUsage(rq.Namespace, rq.Spec.Scopes, rq.Spec.Hard, generic.NewRegistry(evaluators), rq.Spec.ScopeSelector)
}

// sourceLister lists one resource from the watch cache for kube's
// evaluators.
type sourceLister struct {
	ctx       context.Context
	src       Source
	gvr       schema.GroupVersionResource
	namespace string
}

func (l sourceLister) List(selector labels.Selector) ([]runtime.Object, error) {
	objs, err := l.src.List(l.ctx, l.gvr, l.namespace, false)
	if err != nil || selector.Empty() {
		return objs, err
	}
	var out []runtime.Object
	for _, o := range objs {
		if m, ok := o.(interface{ GetLabels() map[string]string }); ok && selector.Matches(labels.Set(m.GetLabels())) {
			out = append(out, o)
		}
	}
	return out, nil
}

func (l sourceLister) Get(name string) (runtime.Object, error) {
	return l.src.Get(l.ctx, l.gvr, l.namespace, name)
}

func (l sourceLister) ByNamespace(namespace string) cache.GenericNamespaceLister {
	l.namespace = namespace
	return l
}
