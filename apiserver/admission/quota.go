package admission

import (
	"context"
	"fmt"
	"sort"
	"strings"
	"sync"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/resource"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
)

var resourceQuotasGVR = schema.GroupVersionResource{Version: "v1", Resource: "resourcequotas"}

// quotaCounted are the core resources quota counts by their bare name.
var quotaCounted = map[string]bool{"pods": true, "services": true, "configmaps": true, "secrets": true,
	"persistentvolumeclaims": true, "replicationcontrollers": true, "resourcequotas": true}

// usageOf is what one object adds to a namespace's usage.
func usageOf(gvr schema.GroupVersionResource, obj runtime.Object) corev1.ResourceList {
	out := corev1.ResourceList{}
	count := "count/" + gvr.Resource
	if gvr.Group != "" {
		count += "." + gvr.Group
	}
	one := resource.MustParse("1")
	out[corev1.ResourceName(count)] = one
	if gvr.Group == "" && quotaCounted[gvr.Resource] {
		out[corev1.ResourceName(gvr.Resource)] = one
	}
	switch o := obj.(type) {
	case *corev1.Pod:
		if o.Status.Phase == corev1.PodSucceeded || o.Status.Phase == corev1.PodFailed {
			return corev1.ResourceList{}
		}
		for _, c := range o.Spec.Containers {
			for name, q := range c.Resources.Requests {
				add(out, "requests."+string(name), q)
				if name == corev1.ResourceCPU || name == corev1.ResourceMemory {
					add(out, string(name), q)
				}
			}
			for name, q := range c.Resources.Limits {
				add(out, "limits."+string(name), q)
			}
		}
	case *corev1.PersistentVolumeClaim:
		if q, ok := o.Spec.Resources.Requests[corev1.ResourceStorage]; ok {
			add(out, "requests.storage", q)
		}
	case *corev1.Service:
		switch o.Spec.Type {
		case corev1.ServiceTypeNodePort:
			add(out, "services.nodeports", resource.MustParse(fmt.Sprint(len(o.Spec.Ports))))
		case corev1.ServiceTypeLoadBalancer:
			add(out, "services.loadbalancers", one)
		}
	}
	return out
}

func add(l corev1.ResourceList, name string, q resource.Quantity) {
	cur := l[corev1.ResourceName(name)]
	cur.Add(q)
	l[corev1.ResourceName(name)] = cur
}

// ResourceQuota rejects creations that would exceed a quota of the
// namespace, in kube's words, and keeps the quotas' status.used current.
func ResourceQuota(src Source) Interface {
	lookup := newQuotaLookup(src)
	return Func{ValidateFunc: func(ctx context.Context, a *Attributes) error {
		if a.Operation != Create || a.Subresource != "" || a.Namespace == "" || a.Object == nil {
			return nil
		}
		if a.Resource == resourceQuotasGVR && !a.DryRun {
			lookup.quotaCreating(a.Namespace)
		}
		quotas, err := lookup.quotas(ctx, a.Namespace)
		if err != nil || len(quotas) == 0 {
			return err
		}
		delta := usageOf(a.Resource, a.Object)
		var used corev1.ResourceList // computed on first need
		for _, o := range quotas {
			q := o.(*corev1.ResourceQuota)
			relevant := false
			for name := range q.Spec.Hard {
				if _, ok := delta[name]; ok {
					relevant = true
				}
			}
			if !relevant {
				continue
			}
			if used == nil {
				if used, err = namespaceUsage(ctx, src, a.Resource, a.Namespace); err != nil {
					return err
				}
			}
			var names []string
			for name := range q.Spec.Hard {
				if _, ok := delta[name]; ok {
					names = append(names, string(name))
				}
			}
			sort.Strings(names)
			var req, use, lim []string
			exceeded := false
			for _, n := range names {
				name := corev1.ResourceName(n)
				hard, d, u := q.Spec.Hard[name], delta[name], used[name]
				total := u.DeepCopy()
				total.Add(d)
				if total.Cmp(hard) > 0 {
					exceeded = true
					req = append(req, n+"="+d.String())
					use = append(use, n+"="+u.String())
					lim = append(lim, n+"="+hard.String())
				}
			}
			if exceeded {
				return apierrors.NewForbidden(a.Resource.GroupResource(), a.Name, fmt.Errorf(
					"exceeded quota: %s, requested: %s, used: %s, limited: %s", q.Name,
					strings.Join(req, ","), strings.Join(use, ","), strings.Join(lim, ",")))
			}
			if a.DryRun {
				continue
			}
			recordUsage(ctx, src, q, used, delta)
		}
		return nil
	}}
}

// recordUsage writes the quota's status.used with this create counted.
// On a conflict (the quota controller, or another create, wrote first) it
// retries on the latest quota: dropping the count would leave usage short
// until the controller's next recount.
func recordUsage(ctx context.Context, src Source, q *corev1.ResourceQuota, used, delta corev1.ResourceList) {
	for attempt := 0; attempt < 5; attempt++ {
		updated := q.DeepCopy()
		updated.Status.Hard = q.Spec.Hard.DeepCopy()
		if updated.Status.Used == nil {
			updated.Status.Used = corev1.ResourceList{}
		}
		for name := range q.Spec.Hard {
			if _, ok := delta[name]; ok {
				total := used[name].DeepCopy()
				total.Add(delta[name])
				if attempt > 0 {
					// Another create may have counted itself meanwhile:
					// keep the larger of our count and its tally.
					tally := q.Status.Used[name].DeepCopy()
					tally.Add(delta[name])
					if tally.Cmp(total) > 0 {
						total = tally
					}
				}
				updated.Status.Used[name] = total
			} else if _, ok := updated.Status.Used[name]; !ok {
				updated.Status.Used[name] = resource.MustParse("0")
			}
		}
		err := src.UpdateStatus(ctx, resourceQuotasGVR, updated)
		if !apierrors.IsConflict(err) {
			return // written, or gone: nothing more to do
		}
		latest, err := src.List(ctx, resourceQuotasGVR, q.Namespace, true)
		if err != nil {
			return
		}
		q = nil
		for _, o := range latest {
			if cand := o.(*corev1.ResourceQuota); cand.Name == updated.Name {
				q = cand
			}
		}
		if q == nil {
			return
		}
	}
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
	if err != nil || len(quotas) > 0 {
		return quotas, err
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

// namespaceUsage sums what the namespace's existing objects of gvr use.
func namespaceUsage(ctx context.Context, src Source, gvr schema.GroupVersionResource, namespace string) (corev1.ResourceList, error) {
	objs, err := src.List(ctx, gvr, namespace, true)
	if err != nil {
		return nil, err
	}
	total := corev1.ResourceList{}
	for _, o := range objs {
		for name, q := range usageOf(gvr, o) {
			add(total, string(name), q)
		}
	}
	return total, nil
}

// QuotaUsage is what namespace uses of each resource that hard names,
// counted from the objects (the watch cache's view): the resource quota
// controller's recalculation after deletes, and a new quota's first
// status. resolve finds the served version of a group's resource, for
// count/<resource>.<group> names; names it cannot place count zero.
func QuotaUsage(ctx context.Context, src Source, resolve func(group, resource string) (schema.GroupVersionResource, bool),
	namespace string, hard corev1.ResourceList) (corev1.ResourceList, error) {
	used := corev1.ResourceList{}
	counted := map[schema.GroupVersionResource]bool{}
	for name := range hard {
		used[name] = resource.MustParse("0")
		if gvr, ok := quotaResourceOf(string(name), resolve); ok {
			counted[gvr] = true
		}
	}
	for gvr := range counted {
		objs, err := src.List(ctx, gvr, namespace, false)
		if err != nil {
			return nil, err
		}
		for _, o := range objs {
			for name, q := range usageOf(gvr, o) {
				if _, want := hard[name]; want {
					add(used, string(name), q)
				}
			}
		}
	}
	return used, nil
}

// quotaResourceOf is the resource whose objects a quota name counts.
func quotaResourceOf(name string, resolve func(group, resource string) (schema.GroupVersionResource, bool)) (schema.GroupVersionResource, bool) {
	core := func(r string) (schema.GroupVersionResource, bool) {
		return schema.GroupVersionResource{Version: "v1", Resource: r}, true
	}
	switch {
	case strings.HasPrefix(name, "count/"):
		res, group, _ := strings.Cut(strings.TrimPrefix(name, "count/"), ".")
		return resolve(group, res)
	case name == "persistentvolumeclaims" || name == "requests.storage":
		return core("persistentvolumeclaims")
	case name == "pods" || name == "cpu" || name == "memory" || strings.HasPrefix(name, "requests.") || strings.HasPrefix(name, "limits."):
		return core("pods")
	case name == "services" || strings.HasPrefix(name, "services."):
		return core("services")
	case quotaCounted[name]:
		return core(name)
	}
	return schema.GroupVersionResource{}, false
}
