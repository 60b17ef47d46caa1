package aggregator

import (
	"context"
	"fmt"
	"net/http"
	"time"

	"k8s.io/apimachinery/pkg/api/equality"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	apiregv1 "k8s.io/kube-aggregator/pkg/apis/apiregistration/v1"

	"github.com/devplane/devplane/apiserver/registry"
)

// AutoManagedLabel marks APIServices the aggregator owns, as kube's
// autoregister controller does: "onstart" for what devplane served when it
// started, "true" for group/versions that came later (CRDs).
const AutoManagedLabel = "kube-aggregator.kubernetes.io/automanaged"

type priority struct{ group, version int32 }

// priorities order built-in groups in discovery as kube-apiserver does.
var priorities = map[schema.GroupVersion]priority{
	{Group: "", Version: "v1"}:                             {18000, 1},
	{Group: "apiregistration.k8s.io", Version: "v1"}:       {18000, 15},
	{Group: "apps", Version: "v1"}:                         {17800, 15},
	{Group: "events.k8s.io", Version: "v1"}:                {17750, 15},
	{Group: "authentication.k8s.io", Version: "v1"}:        {17700, 15},
	{Group: "authorization.k8s.io", Version: "v1"}:         {17600, 15},
	{Group: "autoscaling", Version: "v2"}:                  {17500, 30},
	{Group: "autoscaling", Version: "v1"}:                  {17500, 15},
	{Group: "batch", Version: "v1"}:                        {17400, 15},
	{Group: "certificates.k8s.io", Version: "v1"}:          {17300, 15},
	{Group: "networking.k8s.io", Version: "v1"}:            {17200, 15},
	{Group: "policy", Version: "v1"}:                       {17100, 15},
	{Group: "rbac.authorization.k8s.io", Version: "v1"}:    {17000, 15},
	{Group: "storage.k8s.io", Version: "v1"}:               {16800, 15},
	{Group: "apiextensions.k8s.io", Version: "v1"}:         {16700, 15},
	{Group: "admissionregistration.k8s.io", Version: "v1"}: {16700, 15},
	{Group: "scheduling.k8s.io", Version: "v1"}:            {16600, 15},
	{Group: "coordination.k8s.io", Version: "v1"}:          {16500, 15},
	{Group: "node.k8s.io", Version: "v1"}:                  {16300, 15},
	{Group: "discovery.k8s.io", Version: "v1"}:             {16200, 15},
	{Group: "flowcontrol.apiserver.k8s.io", Version: "v1"}: {16100, 21},
}

// priorityOf is kube's priority for gv; other group/versions (CRDs) get
// the CRD default of 1000/100.
func priorityOf(gv schema.GroupVersion) priority {
	if p, ok := priorities[gv]; ok {
		return p
	}
	return priority{1000, 100}
}

// servedGroupVersions is every group/version devplane serves itself.
func (a *Aggregator) servedGroupVersions() map[schema.GroupVersion]bool {
	return groupVersionsOf(a.localRegistries())
}

// builtinGroupVersions is what devplane serves of itself, not from CRDs:
// their APIServices are "onstart" ones.
func (a *Aggregator) builtinGroupVersions() map[schema.GroupVersion]bool {
	var static []*registry.Registry
	for _, r := range a.localRegistries() {
		if r != a.deps.Dynamic {
			static = append(static, r)
		}
	}
	return groupVersionsOf(static)
}

func groupVersionsOf(registries []*registry.Registry) map[schema.GroupVersion]bool {
	out := map[schema.GroupVersion]bool{}
	for _, r := range registries {
		for _, res := range r.Resources() {
			out[res.GVR.GroupVersion()] = true
		}
	}
	return out
}

// runRegistration is the apiservice-registration-controller hook: it
// creates the local APIServices, returns once they exist, and keeps them
// in step with the registries from then on.
func (a *Aggregator) runRegistration(ctx context.Context) error {
	a.start(ctx)
	if err := a.waitSynced(ctx); err != nil {
		return err
	}
	onStart := a.builtinGroupVersions()
	if a.deps.DynamicSynced != nil {
		// The CRDs in storage first: until they are served, their
		// APIServices would look stale, be deleted and made again.
		if err := a.deps.DynamicSynced(ctx); err != nil {
			return err
		}
	}
	sctx := systemContext(ctx)
	deadline := time.Now().Add(30 * time.Second)
	for {
		err := a.syncLocal(sctx, onStart)
		if err == nil {
			break
		}
		if time.Now().After(deadline) || ctx.Err() != nil {
			return err
		}
		sleep(ctx, 200*time.Millisecond)
	}
	go func() {
		tick := time.NewTicker(time.Minute)
		defer tick.Stop()
		for ctx.Err() == nil {
			select {
			case <-ctx.Done():
				return
			case <-a.kickRegistration:
			case <-tick.C:
			}
			if err := a.syncLocal(sctx, onStart); err != nil && ctx.Err() == nil {
				a.logger.Warn("syncing local APIServices", "err", err)
				sleep(ctx, time.Second)
				kick(a.kickRegistration)
			}
		}
	}()
	return nil
}

// desiredLocal is the APIService devplane keeps for a served gv.
func desiredLocal(gv schema.GroupVersion, managed string) *apiregv1.APIService {
	p := priorityOf(gv)
	return &apiregv1.APIService{
		ObjectMeta: metav1.ObjectMeta{Name: apiServiceName(gv.Group, gv.Version),
			Labels: map[string]string{AutoManagedLabel: managed}},
		Spec: apiregv1.APIServiceSpec{Group: gv.Group, Version: gv.Version,
			GroupPriorityMinimum: p.group, VersionPriority: p.version},
	}
}

// syncLocal creates missing local APIServices, fixes drifted ones and
// deletes automanaged ones whose group/version is no longer served. A
// user's APIService (no automanaged label) is never touched.
func (a *Aggregator) syncLocal(ctx context.Context, onStart map[schema.GroupVersion]bool) error {
	served := a.servedGroupVersions()
	a.mu.RLock()
	existing := make(map[string]*apiregv1.APIService, len(a.services))
	for k, v := range a.services {
		existing[k] = v
	}
	a.mu.RUnlock()
	var firstErr error
	note := func(err error) {
		if err != nil && firstErr == nil {
			firstErr = err
		}
	}
	for gv := range served {
		managed := "true"
		if onStart[gv] {
			managed = "onstart"
		}
		want := desiredLocal(gv, managed)
		have := existing[want.Name]
		switch {
		case have == nil:
			_, err := a.store.Create(ctx, "", want, metav1.CreateOptions{})
			if !apierrors.IsAlreadyExists(err) {
				note(err)
			}
		case have.Labels[AutoManagedLabel] == "":
			// The user's: it may point this group/version elsewhere.
		case !equality.Semantic.DeepEqual(have.Spec, want.Spec) || have.Labels[AutoManagedLabel] != managed:
			_, _, err := a.store.Update(ctx, "", want.Name, "", func(_ context.Context, cur runtime.Object) (runtime.Object, error) {
				s := cur.(*apiregv1.APIService)
				if s.Labels == nil {
					s.Labels = map[string]string{}
				}
				s.Labels[AutoManagedLabel] = managed
				s.Spec = want.Spec
				return s, nil
			}, metav1.UpdateOptions{})
			note(ignoreNotFound(err))
		}
	}
	for name, have := range existing {
		group, version := splitName(name)
		if have.Labels[AutoManagedLabel] == "" || served[schema.GroupVersion{Group: group, Version: version}] {
			continue
		}
		_, _, err := a.store.Delete(ctx, "", name, &metav1.DeleteOptions{})
		note(ignoreNotFound(err))
	}
	a.forgetBackends()
	return firstErr
}

func ignoreNotFound(err error) error {
	if apierrors.IsNotFound(err) {
		return nil
	}
	return err
}

// checkAutoregistered is the autoregister-completion readyz check: every
// served group/version has its APIService.
func (a *Aggregator) checkAutoregistered(*http.Request) error {
	a.mu.RLock()
	defer a.mu.RUnlock()
	var missing []string
	for gv := range a.servedGroupVersions() {
		if a.services[apiServiceName(gv.Group, gv.Version)] == nil {
			missing = append(missing, apiServiceName(gv.Group, gv.Version))
		}
	}
	if len(missing) > 0 {
		return fmt.Errorf("missing APIService: %v", missing)
	}
	return nil
}
