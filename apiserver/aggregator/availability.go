package aggregator

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"sync"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/watch"
	apiregv1 "k8s.io/kube-aggregator/pkg/apis/apiregistration/v1"

	"github.com/devplane/devplane/apiserver/internal/serviceaddr"
)

// Availability timing: a full pass every CheckInterval, sooner after a
// change (APIService, Service, Endpoints, EndpointSlice) or a failure.
var (
	CheckInterval = 5 * time.Second
	RetryInterval = time.Second
	probeTimeout  = 5 * time.Second
)

// runAvailability is the apiservice-status-available-controller hook: it
// returns after the first pass and keeps checking until shutdown.
func (a *Aggregator) runAvailability(ctx context.Context) error {
	a.start(ctx)
	if err := a.waitSynced(ctx); err != nil {
		return err
	}
	for _, res := range [][3]string{{"", "v1", "services"}, {"", "v1", "endpoints"}, {"discovery.k8s.io", "v1", "endpointslices"}} {
		go a.kickOnChange(ctx, res)
	}
	failing := a.checkAll(ctx)
	go func() {
		for ctx.Err() == nil {
			wait := CheckInterval
			if failing {
				wait = RetryInterval
			}
			t := time.NewTimer(wait)
			select {
			case <-ctx.Done():
				t.Stop()
				return
			case <-a.kickAvailability:
			case <-t.C:
			}
			t.Stop()
			failing = a.checkAll(ctx)
		}
	}()
	return nil
}

// kickOnChange re-checks availability whenever a resource the checks
// depend on changes (its watch cache makes this cheap).
func (a *Aggregator) kickOnChange(ctx context.Context, gvr [3]string) {
	store := a.lookup(gvr[0], gvr[1], gvr[2])
	if store == nil {
		return
	}
	sctx := systemContext(ctx)
	for ctx.Err() == nil {
		w, err := store.Watch(sctx, "", metav1.ListOptions{})
		if err != nil {
			sleep(ctx, time.Second)
			continue
		}
		drain(ctx, w, func(watch.Event) { kick(a.kickAvailability) })
		w.Stop()
		sleep(ctx, 100*time.Millisecond)
	}
}

func drain(ctx context.Context, w watch.Interface, f func(watch.Event)) {
	for {
		select {
		case <-ctx.Done():
			return
		case ev, ok := <-w.ResultChan():
			if !ok || ev.Type == watch.Error {
				return
			}
			f(ev)
		}
	}
}

// checkAll checks every APIService in parallel and writes what changed;
// it reports whether any remote one is failing.
func (a *Aggregator) checkAll(ctx context.Context) (failing bool) {
	var wg sync.WaitGroup
	var mu sync.Mutex
	for _, s := range a.apiServices() {
		wg.Add(1)
		go func(s *apiregv1.APIService) {
			defer wg.Done()
			cond := a.check(ctx, s)
			if cond.Status != apiregv1.ConditionTrue {
				mu.Lock()
				failing = true
				mu.Unlock()
			}
			if err := a.setAvailable(ctx, s.Name, cond); err != nil && ctx.Err() == nil {
				a.logger.Warn("updating APIService status", "apiservice", s.Name, "err", err)
			}
		}(s)
	}
	wg.Wait()
	return failing
}

// check computes the Available condition of s.
func (a *Aggregator) check(ctx context.Context, s *apiregv1.APIService) apiregv1.APIServiceCondition {
	cond := apiregv1.APIServiceCondition{Type: apiregv1.Available, Status: apiregv1.ConditionFalse}
	if isLocal(s) {
		cond.Status, cond.Reason, cond.Message = apiregv1.ConditionTrue, "Local", "Local APIServices are always available"
		return cond
	}
	addr, err := a.resolve(ctx, s.Spec.Service)
	if err != nil {
		cond.Reason, cond.Message = "ServiceAccessError", err.Error()
		if re, ok := err.(*serviceaddr.Error); ok {
			cond.Reason = re.Reason
		}
		return cond
	}
	list, err := a.fetchResources(ctx, s, addr)
	if err != nil {
		cond.Reason = "FailedDiscoveryCheck"
		cond.Message = fmt.Sprintf("failing or missing response from https://%s/apis/%s/%s: %v", addr, s.Spec.Group, s.Spec.Version, err)
		return cond
	}
	// The probe is a discovery fetch: keep what it returned.
	a.discovery.set(s.Name, list)
	cond.Status, cond.Reason, cond.Message = apiregv1.ConditionTrue, "Passed", "all checks passed"
	return cond
}

// fetchResources GETs /apis/<group>/<version> from the backend at addr as
// the aggregator, through the same transport requests are proxied with.
func (a *Aggregator) fetchResources(ctx context.Context, s *apiregv1.APIService, addr string) (*metav1.APIResourceList, error) {
	b, err := a.backendFor(s)
	if err != nil {
		return nil, err
	}
	ctx, cancel := context.WithTimeout(ctx, probeTimeout)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodGet,
		"https://"+addr+"/apis/"+s.Spec.Group+"/"+s.Spec.Version, nil)
	if err != nil {
		return nil, err
	}
	req.Header.Set("Accept", "application/json")
	setIdentity(req.Header, User)
	resp, err := b.transport.RoundTrip(req)
	if err != nil {
		return nil, err
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(io.LimitReader(resp.Body, 16<<20))
	if err != nil {
		return nil, err
	}
	if resp.StatusCode < 200 || resp.StatusCode > 299 {
		return nil, fmt.Errorf("bad status from https://%s/apis/%s/%s: %d", addr, s.Spec.Group, s.Spec.Version, resp.StatusCode)
	}
	list := &metav1.APIResourceList{}
	if err := json.Unmarshal(body, list); err != nil {
		return nil, fmt.Errorf("decoding discovery: %w", err)
	}
	return list, nil
}

// setAvailable writes cond into s's status when it differs, moving the
// transition time only when the status flips.
func (a *Aggregator) setAvailable(ctx context.Context, name string, cond apiregv1.APIServiceCondition) error {
	a.mu.RLock()
	cur := a.services[name]
	a.mu.RUnlock()
	if cur != nil {
		if old := availableCondition(cur); old != nil && old.Status == cond.Status && old.Reason == cond.Reason && old.Message == cond.Message {
			return nil
		}
	}
	_, _, err := a.store.Update(systemContext(ctx), "", name, "status", func(_ context.Context, obj runtime.Object) (runtime.Object, error) {
		s := obj.(*apiregv1.APIService)
		now := metav1.Now()
		if old := availableCondition(s); old != nil {
			if old.Status == cond.Status {
				cond.LastTransitionTime = old.LastTransitionTime
			} else {
				cond.LastTransitionTime = now
			}
			*old = cond
			return s, nil
		}
		cond.LastTransitionTime = now
		s.Status.Conditions = append(s.Status.Conditions, cond)
		return s, nil
	}, metav1.UpdateOptions{})
	if err == nil && cond.Status != apiregv1.ConditionTrue {
		kick(a.kickDiscovery) // its groups are now stale
	}
	return ignoreNotFound(err)
}
