package controllers

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"slices"
	"sort"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/discovery"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/metadata"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/cache"
)

// NamespaceController empties namespaces being deleted and then removes
// the "kubernetes" finalizer, after which the API server deletes them.
type NamespaceController struct {
	client    kubernetes.Interface
	metadata  metadata.Interface
	reads     reads
	discovery discovery.DiscoveryInterface
	logger    *slog.Logger
	synced    atomic.Bool
	// deletionWorkers bound the group-resources emptied at once.
	deletionWorkers int
}

// NewNamespaceController builds the namespace controller.
func NewNamespaceController(cfg *rest.Config, local Local, logger *slog.Logger) (*NamespaceController, error) {
	c, err := clientsFor(cfg, local, "namespace-controller")
	if err != nil {
		return nil, err
	}
	return &NamespaceController{
		client:          c.client,
		metadata:        c.metadata,
		reads:           c.reads,
		discovery:       c.client.Discovery(),
		logger:          loggerOr(logger, "namespace"),
		deletionWorkers: 8,
	}, nil
}

func (c *NamespaceController) Name() string    { return "namespace-controller" }
func (c *NamespaceController) HasSynced() bool { return c.synced.Load() }

// Run watches namespaces and finalizes the ones being deleted.
func (c *NamespaceController) Run(ctx context.Context) error {
	defer c.synced.Store(false)
	// Retries start at 10ms so an emptied namespace goes quickly, and stop
	// growing at 1s: content held by finalizers is re-checked every second.
	queue := newQueue[string]("namespace", 10*time.Millisecond, time.Second)
	informer := cache.NewSharedIndexInformer(c.reads.typed("namespaces", nil), &corev1.Namespace{}, 5*time.Minute, cache.Indexers{})
	enqueue := func(obj any) {
		if ns, ok := obj.(*corev1.Namespace); ok && ns.DeletionTimestamp != nil {
			queue.Add(ns.Name)
		}
	}
	if _, err := informer.AddEventHandler(cache.ResourceEventHandlerFuncs{
		AddFunc:    enqueue,
		UpdateFunc: func(_, obj any) { enqueue(obj) },
	}); err != nil {
		return err
	}
	synced, stopped := runInformers(ctx, informer)
	defer stopped()
	if !synced {
		queue.ShutDown()
		return ctx.Err()
	}
	c.synced.Store(true)
	runWorkers(ctx, queue, 4, c.logger, c.sync)
	return nil
}

func (c *NamespaceController) sync(ctx context.Context, name string) error {
	ns, err := c.client.CoreV1().Namespaces().Get(ctx, name, metav1.GetOptions{})
	if apierrors.IsNotFound(err) {
		return nil
	}
	if err != nil {
		return err
	}
	if ns.DeletionTimestamp == nil || !slices.Contains(ns.Spec.Finalizers, corev1.FinalizerKubernetes) {
		return nil
	}

	report := c.deleteContent(ctx, ns)
	if ctx.Err() != nil {
		return ctx.Err()
	}
	updated := ns.DeepCopy()
	changed := report.apply(&updated.Status)
	if updated.Status.Phase != corev1.NamespaceTerminating {
		updated.Status.Phase = corev1.NamespaceTerminating
		changed = true
	}
	if changed {
		if ns, err = c.client.CoreV1().Namespaces().UpdateStatus(ctx, updated, metav1.UpdateOptions{}); err != nil {
			return err
		}
	}
	if !report.done() {
		return errRequeue
	}

	ns.Spec.Finalizers = slices.DeleteFunc(slices.Clone(ns.Spec.Finalizers), func(f corev1.FinalizerName) bool {
		return f == corev1.FinalizerKubernetes
	})
	_, err = c.client.CoreV1().Namespaces().Finalize(ctx, ns, metav1.UpdateOptions{})
	if apierrors.IsNotFound(err) {
		return nil
	}
	if err == nil {
		c.logger.Debug("namespace finalized", "namespace", name)
	}
	return err
}

// podsGVR: a namespace's pods go first, as kube's namespace controller
// deletes them, so that what they use (ConfigMaps, Secrets, claims...)
// stays until they stopped.
var podsGVR = schema.GroupVersionResource{Version: "v1", Resource: "pods"}

// deleteContent deletes every object in the namespace: its pods first, and
// once they are gone the other group-resources, one per worker. It reports
// what is left.
func (c *NamespaceController) deleteContent(ctx context.Context, ns *corev1.Namespace) *deletionReport {
	report := newDeletionReport()
	resources, err := discoverResources(c.discovery, true, "list", "delete")
	if err != nil {
		report.discoveryFailed(err)
	}
	if verbs, ok := resources[podsGVR]; ok {
		delete(resources, podsGVR)
		remaining, finalizers, err := c.deleteAllOf(ctx, ns.Name, podsGVR, hasVerb(verbs, "deletecollection"))
		if err == nil {
			err = c.checkRemaining(ctx, ns, podsGVR, remaining, finalizers)
		}
		if err != nil {
			err = fmt.Errorf("failed to delete pods for namespace: %s, err: %w", ns.Name, err)
		}
		report.add(podsGVR, remaining, finalizers, err)
		if remaining > 0 {
			return report
		}
	}
	var mu sync.Mutex
	var wg sync.WaitGroup
	work := make(chan schema.GroupVersionResource)
	for range c.deletionWorkers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for gvr := range work {
				remaining, finalizers, err := c.deleteAllOf(ctx, ns.Name, gvr, hasVerb(resources[gvr], "deletecollection"))
				if err == nil {
					err = c.checkRemaining(ctx, ns, gvr, remaining, finalizers)
				}
				mu.Lock()
				report.add(gvr, remaining, finalizers, err)
				mu.Unlock()
			}
		}()
	}
	for gvr := range resources {
		work <- gvr
	}
	close(work)
	wg.Wait()
	return report
}

// checkRemaining: objects left after their deletion are expected while
// finalizers hold them or, for pods, while their grace may still run (kube's
// estimate: the longest terminationGracePeriodSeconds of the pods not
// finished, counted from the namespace's deletion). Others are an error,
// worded as kube's.
func (c *NamespaceController) checkRemaining(ctx context.Context, ns *corev1.Namespace, gvr schema.GroupVersionResource, remaining int, finalizers map[string]int) error {
	if remaining == 0 || len(finalizers) > 0 {
		return nil
	}
	if gvr == podsGVR {
		pods, err := c.client.CoreV1().Pods(ns.Name).List(ctx, metav1.ListOptions{})
		if err != nil {
			return err
		}
		var estimate int64
		for _, pod := range pods.Items {
			if pod.Status.Phase == corev1.PodSucceeded || pod.Status.Phase == corev1.PodFailed {
				continue
			}
			if g := pod.Spec.TerminationGracePeriodSeconds; g != nil && *g > estimate {
				estimate = *g
			}
		}
		if time.Since(ns.DeletionTimestamp.Time) < time.Duration(estimate)*time.Second {
			return nil
		}
	}
	return fmt.Errorf("unexpected items still remain in namespace: %s for gvr: %v", ns.Name, gvr)
}

// deleteAllOf deletes one group-resource's objects in the namespace and
// counts the ones still there (held by finalizers) and their finalizers.
func (c *NamespaceController) deleteAllOf(ctx context.Context, namespace string, gvr schema.GroupVersionResource, collection bool) (int, map[string]int, error) {
	client := c.metadata.Resource(gvr).Namespace(namespace)
	background := metav1.DeletePropagationBackground
	opts := metav1.DeleteOptions{PropagationPolicy: &background}
	if collection {
		err := client.DeleteCollection(ctx, opts, metav1.ListOptions{})
		switch {
		case err == nil, apierrors.IsMethodNotSupported(err), apierrors.IsNotFound(err):
			// Not supported after all: fall back to one by one below.
		default:
			return 0, nil, fmt.Errorf("%s: %w", gvr.GroupResource(), err)
		}
	}
	list, err := client.List(ctx, metav1.ListOptions{})
	if apierrors.IsNotFound(err) || apierrors.IsMethodNotSupported(err) {
		return 0, nil, nil
	}
	if err != nil {
		return 0, nil, fmt.Errorf("%s: %w", gvr.GroupResource(), err)
	}
	remaining := 0
	finalizers := map[string]int{}
	var errs []error
	for i := range list.Items {
		item := &list.Items[i]
		if item.DeletionTimestamp == nil {
			uid := item.UID
			opts := opts
			opts.Preconditions = &metav1.Preconditions{UID: &uid}
			err := client.Delete(ctx, item.Name, opts)
			if apierrors.IsNotFound(err) || apierrors.IsConflict(err) {
				continue // gone, or replaced: the next pass sees the new one
			}
			if err != nil {
				errs = append(errs, err)
			} else if len(item.Finalizers) == 0 {
				continue // deleted outright
			}
		}
		remaining++
		for _, f := range item.Finalizers {
			finalizers[f]++
		}
	}
	if len(errs) > 0 {
		return remaining, finalizers, fmt.Errorf("%s: %w", gvr.GroupResource(), errors.Join(errs...))
	}
	return remaining, finalizers, nil
}

// deletionReport collects one pass over a namespace's content and turns
// it into the namespace conditions kube's namespace controller sets.
type deletionReport struct {
	discoveryErr    error
	parseErrs       []error
	contentErrs     []error
	remaining       map[schema.GroupVersionResource]int
	finalizersCount map[string]int
}

func newDeletionReport() *deletionReport {
	return &deletionReport{remaining: map[schema.GroupVersionResource]int{}, finalizersCount: map[string]int{}}
}

func (r *deletionReport) discoveryFailed(err error) {
	// discoverResources joins group-version parse errors with the
	// (possibly nil) discovery error; they are two conditions.
	var parseErr *groupVersionParseError
	for _, e := range flattenErrors(err) {
		if errors.As(e, &parseErr) {
			r.parseErrs = append(r.parseErrs, e)
		} else if r.discoveryErr == nil {
			r.discoveryErr = e
		}
	}
}

func flattenErrors(err error) []error {
	if err == nil {
		return nil
	}
	if joined, ok := err.(interface{ Unwrap() []error }); ok {
		var out []error
		for _, e := range joined.Unwrap() {
			out = append(out, flattenErrors(e)...)
		}
		return out
	}
	return []error{err}
}

func (r *deletionReport) add(gvr schema.GroupVersionResource, remaining int, finalizers map[string]int, err error) {
	if err != nil {
		r.contentErrs = append(r.contentErrs, err)
	}
	if remaining > 0 {
		r.remaining[gvr] += remaining
	}
	for f, n := range finalizers {
		r.finalizersCount[f] += n
	}
}

// done is true when the namespace may be finalized: everything was
// discovered and deleted and nothing is left.
func (r *deletionReport) done() bool {
	return r.discoveryErr == nil && len(r.parseErrs) == 0 && len(r.contentErrs) == 0 && len(r.remaining) == 0
}

// The condition reasons and messages are kube's, so tools that explain
// stuck namespaces (kubectl describe, dashboards) read ours the same way.
var (
	namespaceConditionTypes = []corev1.NamespaceConditionType{
		corev1.NamespaceDeletionDiscoveryFailure,
		corev1.NamespaceDeletionGVParsingFailure,
		corev1.NamespaceDeletionContentFailure,
		corev1.NamespaceContentRemaining,
		corev1.NamespaceFinalizersRemaining,
	}
	namespaceOKReasons = map[corev1.NamespaceConditionType][2]string{
		corev1.NamespaceDeletionDiscoveryFailure: {"ResourcesDiscovered", "All resources successfully discovered"},
		corev1.NamespaceDeletionGVParsingFailure: {"ParsedGroupVersions", "All legacy kube types successfully parsed"},
		corev1.NamespaceDeletionContentFailure:   {"ContentDeleted", "All content successfully deleted, may be waiting on finalization"},
		corev1.NamespaceContentRemaining:         {"ContentRemoved", "All content successfully removed"},
		corev1.NamespaceFinalizersRemaining:      {"ContentHasNoFinalizers", "All content-preserving finalizers finished"},
	}
)

// conditions returns the failing conditions of this pass (the others are
// set to their "ok" form by apply).
func (r *deletionReport) conditions() map[corev1.NamespaceConditionType]corev1.NamespaceCondition {
	out := map[corev1.NamespaceConditionType]corev1.NamespaceCondition{}
	set := func(t corev1.NamespaceConditionType, reason, message string) {
		out[t] = corev1.NamespaceCondition{Type: t, Status: corev1.ConditionTrue, Reason: reason, Message: message}
	}
	if r.discoveryErr != nil {
		msg := r.discoveryErr.Error()
		var failed *discovery.ErrGroupDiscoveryFailed
		if errors.As(r.discoveryErr, &failed) {
			msg = fmt.Sprintf("Discovery failed for some groups, %d failing: %v", len(failed.Groups), r.discoveryErr)
		}
		set(corev1.NamespaceDeletionDiscoveryFailure, "DiscoveryFailed", msg)
	}
	if len(r.parseErrs) > 0 {
		set(corev1.NamespaceDeletionGVParsingFailure, "GroupVersionParsingFailed", joinSorted(r.parseErrs))
	}
	if len(r.contentErrs) > 0 {
		set(corev1.NamespaceDeletionContentFailure, "ContentDeletionFailed",
			fmt.Sprintf("Failed to delete all resource types, %d remaining: %v", len(r.contentErrs), joinSorted(r.contentErrs)))
	}
	if len(r.remaining) > 0 {
		var parts []string
		for gvr, n := range r.remaining {
			parts = append(parts, fmt.Sprintf("%s.%s has %d resource instances", gvr.Resource, gvr.Group, n))
		}
		sort.Strings(parts)
		set(corev1.NamespaceContentRemaining, "SomeResourcesRemain", "Some resources are remaining: "+strings.Join(parts, ", "))
	}
	if len(r.finalizersCount) > 0 {
		var parts []string
		for f, n := range r.finalizersCount {
			parts = append(parts, fmt.Sprintf("%s in %d resource instances", f, n))
		}
		sort.Strings(parts)
		set(corev1.NamespaceFinalizersRemaining, "SomeFinalizersRemain", "Some content in the namespace has finalizers remaining: "+strings.Join(parts, ", "))
	}
	return out
}

func joinSorted(errs []error) string {
	msgs := make([]string, 0, len(errs))
	for _, e := range errs {
		msgs = append(msgs, e.Error())
	}
	sort.Strings(msgs)
	return strings.Join(msgs, ", ")
}

// apply writes this pass's conditions into status, keeping transition
// times of conditions whose status did not change; it reports a change.
func (r *deletionReport) apply(status *corev1.NamespaceStatus) bool {
	failing := r.conditions()
	now := metav1.Now()
	changed := false
	for _, t := range namespaceConditionTypes {
		want, ok := failing[t]
		if !ok {
			want = corev1.NamespaceCondition{Type: t, Status: corev1.ConditionFalse, Reason: namespaceOKReasons[t][0], Message: namespaceOKReasons[t][1]}
		}
		i := slices.IndexFunc(status.Conditions, func(c corev1.NamespaceCondition) bool { return c.Type == t })
		if i < 0 {
			want.LastTransitionTime = now
			status.Conditions = append(status.Conditions, want)
			changed = true
			continue
		}
		have := &status.Conditions[i]
		if have.Status == want.Status && have.Reason == want.Reason && have.Message == want.Message {
			continue
		}
		if have.Status != want.Status {
			have.LastTransitionTime = now
		}
		have.Status, have.Reason, have.Message = want.Status, want.Reason, want.Message
		changed = true
	}
	return changed
}
