package aggregator

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"net/http"
	"sort"
	"strings"
	"sync"
	"time"

	apidiscoveryv2 "k8s.io/api/apidiscovery/v2"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/version"
	apiregv1 "k8s.io/kube-aggregator/pkg/apis/apiregistration/v1"
)

// DiscoveryRefresh is how old a backend's cached resource list may get
// before the discovery controller fetches it again.
var DiscoveryRefresh = 30 * time.Second

// discoveryCache holds each remote APIService's resource list, as last
// fetched from its backend.
type discoveryCache struct {
	mu      sync.RWMutex
	entries map[string]discoveryEntry // by APIService name
}

type discoveryEntry struct {
	list    *metav1.APIResourceList
	fetched time.Time
}

func newDiscoveryCache() *discoveryCache {
	return &discoveryCache{entries: map[string]discoveryEntry{}}
}

func (c *discoveryCache) set(name string, list *metav1.APIResourceList) {
	c.mu.Lock()
	c.entries[name] = discoveryEntry{list: list, fetched: time.Now()}
	c.mu.Unlock()
}

func (c *discoveryCache) get(name string) (discoveryEntry, bool) {
	c.mu.RLock()
	defer c.mu.RUnlock()
	e, ok := c.entries[name]
	return e, ok
}

// retain drops the entries of APIServices that are gone.
func (c *discoveryCache) retain(keep func(name string) bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	for name := range c.entries {
		if !keep(name) {
			delete(c.entries, name)
		}
	}
}

// runDiscoveryController is the apiservice-discovery-controller hook: it
// fetches each available backend's resources (first pass before it
// returns), refreshes them when old or on change, and forgets removed ones.
func (a *Aggregator) runDiscovery(ctx context.Context) error {
	a.start(ctx)
	if err := a.waitSynced(ctx); err != nil {
		return err
	}
	a.refreshDiscovery(ctx)
	go func() {
		for ctx.Err() == nil {
			t := time.NewTimer(DiscoveryRefresh / 3)
			select {
			case <-ctx.Done():
				t.Stop()
				return
			case <-a.kickDiscovery:
			case <-t.C:
			}
			t.Stop()
			a.refreshDiscovery(ctx)
		}
	}()
	return nil
}

func (a *Aggregator) refreshDiscovery(ctx context.Context) {
	services := a.apiServices()
	remote := map[string]bool{}
	var wg sync.WaitGroup
	for _, s := range services {
		if isLocal(s) {
			continue
		}
		remote[s.Name] = true
		if c := availableCondition(s); c == nil || c.Status != apiregv1.ConditionTrue {
			continue // served as Stale from what was last fetched
		}
		if e, ok := a.discovery.get(s.Name); ok && time.Since(e.fetched) < DiscoveryRefresh {
			continue
		}
		wg.Add(1)
		go func(s *apiregv1.APIService) {
			defer wg.Done()
			addr, err := a.resolve(ctx, s.Spec.Service)
			if err == nil {
				var list *metav1.APIResourceList
				if list, err = a.fetchResources(ctx, s, addr); err == nil {
					a.discovery.set(s.Name, list)
				}
			}
			if err != nil && ctx.Err() == nil {
				a.logger.Info("fetching discovery", "apiservice", s.Name, "err", err)
				kick(a.kickAvailability)
			}
		}(s)
	}
	wg.Wait()
	a.discovery.retain(func(name string) bool { return remote[name] })
}

// recorder captures an in-process response from the delegate.
type recorder struct {
	header http.Header
	code   int
	body   bytes.Buffer
}

func (r *recorder) Header() http.Header         { return r.header }
func (r *recorder) Write(b []byte) (int, error) { return r.body.Write(b) }
func (r *recorder) WriteHeader(code int) {
	if r.code == 0 {
		r.code = code
	}
}

// ask serves a copy of r (without conditional headers) with h.
func ask(h http.Handler, r *http.Request) *recorder {
	req := r.Clone(r.Context())
	req.Header.Del("If-None-Match")
	req.Header.Del("Accept-Encoding")
	rec := &recorder{header: http.Header{}}
	h.ServeHTTP(rec, req)
	if rec.code == 0 {
		rec.code = http.StatusOK
	}
	return rec
}

const aggregatedContentType = "application/json;g=apidiscovery.k8s.io;v=v2;as=APIGroupDiscoveryList"

// serveAPIs answers /apis: the aggregator's own group and the delegate's
// groups (legacy or aggregated, as the delegate chose from Accept) plus the
// remote APIServices' groups.
func (a *Aggregator) serveAPIs(w http.ResponseWriter, r *http.Request, own, next http.Handler) {
	if r.Method != http.MethodGet && r.Method != http.MethodHead {
		next.ServeHTTP(w, r)
		return
	}
	fromNext := ask(next, r)
	if fromNext.code != http.StatusOK {
		copyResponse(w, fromNext)
		return
	}
	fromOwn := ask(own, r)
	ct := fromNext.header.Get("Content-Type")
	var merged any
	if strings.Contains(ct, "apidiscovery.k8s.io") {
		var list, mine apidiscoveryv2.APIGroupDiscoveryList
		if err := json.Unmarshal(fromNext.body.Bytes(), &list); err != nil {
			copyResponse(w, fromNext)
			return
		}
		_ = json.Unmarshal(fromOwn.body.Bytes(), &mine)
		merged = a.mergeAggregated(append(mine.Items, list.Items...), list.TypeMeta)
		ct = aggregatedContentType
	} else {
		var list, mine metav1.APIGroupList
		if err := json.Unmarshal(fromNext.body.Bytes(), &list); err != nil {
			copyResponse(w, fromNext)
			return
		}
		_ = json.Unmarshal(fromOwn.body.Bytes(), &mine)
		merged = a.mergeLegacy(append(mine.Groups, list.Groups...))
		ct = "application/json"
	}
	body, _ := json.Marshal(merged)
	sum := sha256.Sum256(body)
	etag := `"` + hex.EncodeToString(sum[:]) + `"`
	w.Header().Set("ETag", etag)
	w.Header().Set("Vary", "Accept")
	if r.Header.Get("If-None-Match") == etag {
		w.WriteHeader(http.StatusNotModified)
		return
	}
	w.Header().Set("Content-Type", ct)
	w.WriteHeader(http.StatusOK)
	if r.Method == http.MethodGet {
		_, _ = w.Write(body)
	}
}

func copyResponse(w http.ResponseWriter, rec *recorder) {
	for k, v := range rec.header {
		w.Header()[k] = v
	}
	w.WriteHeader(rec.code)
	_, _ = w.Write(rec.body.Bytes())
}

// groupOrder knows, from the APIServices, each group's priority and each
// group/version's: discovery lists groups and versions in that order.
type groupOrder struct {
	group   map[string]int32
	version map[schema.GroupVersion]int32
	remote  map[string][]*apiregv1.APIService // remote APIServices by group
}

func (a *Aggregator) order() groupOrder {
	o := groupOrder{group: map[string]int32{}, version: map[schema.GroupVersion]int32{}, remote: map[string][]*apiregv1.APIService{}}
	for _, s := range a.apiServices() {
		if p := s.Spec.GroupPriorityMinimum; p > o.group[s.Spec.Group] {
			o.group[s.Spec.Group] = p
		}
		o.version[schema.GroupVersion{Group: s.Spec.Group, Version: s.Spec.Version}] = s.Spec.VersionPriority
		if !isLocal(s) {
			o.remote[s.Spec.Group] = append(o.remote[s.Spec.Group], s)
		}
	}
	return o
}

// sortGroups orders by group priority (highest first), then name, as kube.
func (o groupOrder) sortGroups(names []string) {
	sort.SliceStable(names, func(i, j int) bool {
		pi, pj := o.group[names[i]], o.group[names[j]]
		if pi != pj {
			return pi > pj
		}
		return names[i] < names[j]
	})
}

// sortVersions orders by version priority, then kube's version order.
func (o groupOrder) sortVersions(group string, versions []string) {
	sort.SliceStable(versions, func(i, j int) bool {
		pi := o.version[schema.GroupVersion{Group: group, Version: versions[i]}]
		pj := o.version[schema.GroupVersion{Group: group, Version: versions[j]}]
		if pi != pj {
			return pi > pj
		}
		return version.CompareKubeAwareVersionStrings(versions[i], versions[j]) > 0
	})
}

func (a *Aggregator) mergeLegacy(groups []metav1.APIGroup) *metav1.APIGroupList {
	o := a.order()
	byName := map[string]*metav1.APIGroup{}
	var names []string
	add := func(g metav1.APIGroup) {
		have := byName[g.Name]
		if have == nil {
			g := g
			byName[g.Name], names = &g, append(names, g.Name)
			return
		}
		for _, v := range g.Versions {
			if !hasVersion(have.Versions, v.Version) {
				have.Versions = append(have.Versions, v)
			}
		}
	}
	for _, g := range groups {
		add(g)
	}
	for group, services := range o.remote {
		g := metav1.APIGroup{Name: group}
		for _, s := range services {
			g.Versions = append(g.Versions, metav1.GroupVersionForDiscovery{GroupVersion: group + "/" + s.Spec.Version, Version: s.Spec.Version})
		}
		add(g)
	}
	o.sortGroups(names)
	out := &metav1.APIGroupList{TypeMeta: metav1.TypeMeta{Kind: "APIGroupList", APIVersion: "v1"}, Groups: []metav1.APIGroup{}}
	for _, n := range names {
		g := byName[n]
		if len(o.remote[n]) > 0 {
			sortGroupVersions(o, g)
		}
		out.Groups = append(out.Groups, *g)
	}
	return out
}

func sortGroupVersions(o groupOrder, g *metav1.APIGroup) {
	if len(g.Versions) == 0 {
		return
	}
	vs := make([]string, len(g.Versions))
	for i, v := range g.Versions {
		vs[i] = v.Version
	}
	o.sortVersions(g.Name, vs)
	g.Versions = g.Versions[:0]
	for _, v := range vs {
		g.Versions = append(g.Versions, metav1.GroupVersionForDiscovery{GroupVersion: g.Name + "/" + v, Version: v})
	}
	g.PreferredVersion = g.Versions[0]
}

func hasVersion(vs []metav1.GroupVersionForDiscovery, v string) bool {
	for _, have := range vs {
		if have.Version == v {
			return true
		}
	}
	return false
}

func (a *Aggregator) mergeAggregated(groups []apidiscoveryv2.APIGroupDiscovery, tm metav1.TypeMeta) *apidiscoveryv2.APIGroupDiscoveryList {
	o := a.order()
	byName := map[string]*apidiscoveryv2.APIGroupDiscovery{}
	var names []string
	for _, g := range groups {
		if byName[g.Name] == nil {
			g := g
			byName[g.Name], names = &g, append(names, g.Name)
		}
	}
	for group, services := range o.remote {
		g := byName[group]
		if g == nil {
			g = &apidiscoveryv2.APIGroupDiscovery{ObjectMeta: metav1.ObjectMeta{Name: group}}
			byName[group], names = g, append(names, group)
		}
		for _, s := range services {
			v := a.remoteVersion(s)
			replaced := false
			for i := range g.Versions {
				if g.Versions[i].Version == v.Version {
					g.Versions[i], replaced = v, true
				}
			}
			if !replaced {
				g.Versions = append(g.Versions, v)
			}
		}
		vs := make([]string, len(g.Versions))
		byVer := map[string]apidiscoveryv2.APIVersionDiscovery{}
		for i, v := range g.Versions {
			vs[i], byVer[v.Version] = v.Version, v
		}
		o.sortVersions(group, vs)
		for i, v := range vs {
			g.Versions[i] = byVer[v]
		}
	}
	o.sortGroups(names)
	if tm.Kind == "" {
		tm = metav1.TypeMeta{Kind: "APIGroupDiscoveryList", APIVersion: "apidiscovery.k8s.io/v2"}
	}
	out := &apidiscoveryv2.APIGroupDiscoveryList{TypeMeta: tm, Items: []apidiscoveryv2.APIGroupDiscovery{}}
	for _, n := range names {
		out.Items = append(out.Items, *byName[n])
	}
	return out
}

// remoteVersion is a remote APIService's entry in aggregated discovery:
// its cached resources, Stale while it is unavailable or never fetched.
func (a *Aggregator) remoteVersion(s *apiregv1.APIService) apidiscoveryv2.APIVersionDiscovery {
	v := apidiscoveryv2.APIVersionDiscovery{Version: s.Spec.Version, Freshness: apidiscoveryv2.DiscoveryFreshnessStale,
		Resources: []apidiscoveryv2.APIResourceDiscovery{}}
	e, ok := a.discovery.get(s.Name)
	if ok {
		v.Resources = toDiscovery(schema.GroupVersion{Group: s.Spec.Group, Version: s.Spec.Version}, e.list)
	}
	if c := availableCondition(s); ok && c != nil && c.Status == apiregv1.ConditionTrue {
		v.Freshness = apidiscoveryv2.DiscoveryFreshnessCurrent
	}
	return v
}

// toDiscovery converts a legacy resource list to aggregated form, with
// subresources ("pods/status") under their parents.
func toDiscovery(gv schema.GroupVersion, list *metav1.APIResourceList) []apidiscoveryv2.APIResourceDiscovery {
	out := []apidiscoveryv2.APIResourceDiscovery{}
	index := map[string]int{}
	kind := func(r metav1.APIResource) *metav1.GroupVersionKind {
		k := &metav1.GroupVersionKind{Group: gv.Group, Version: gv.Version, Kind: r.Kind}
		if r.Group != "" || r.Version != "" {
			k.Group, k.Version = r.Group, r.Version
		}
		return k
	}
	for _, r := range list.APIResources {
		if strings.Contains(r.Name, "/") {
			continue
		}
		scope := apidiscoveryv2.ScopeCluster
		if r.Namespaced {
			scope = apidiscoveryv2.ScopeNamespace
		}
		index[r.Name] = len(out)
		out = append(out, apidiscoveryv2.APIResourceDiscovery{Resource: r.Name, SingularResource: r.SingularName,
			Scope: scope, Verbs: r.Verbs, ShortNames: r.ShortNames, Categories: r.Categories, ResponseKind: kind(r)})
	}
	for _, r := range list.APIResources {
		parent, sub, ok := strings.Cut(r.Name, "/")
		if !ok {
			continue
		}
		i, found := index[parent]
		if !found {
			continue
		}
		out[i].Subresources = append(out[i].Subresources, apidiscoveryv2.APISubresourceDiscovery{
			Subresource: sub, ResponseKind: kind(r), Verbs: r.Verbs})
	}
	return out
}

// serveGroup answers /apis/<group> for a group with remote versions.
func (a *Aggregator) serveGroup(w http.ResponseWriter, r *http.Request, group string) {
	o := a.order()
	g := &metav1.APIGroup{TypeMeta: metav1.TypeMeta{Kind: "APIGroup", APIVersion: "v1"}, Name: group}
	for _, s := range a.apiServices() {
		if s.Spec.Group == group {
			g.Versions = append(g.Versions, metav1.GroupVersionForDiscovery{GroupVersion: group + "/" + s.Spec.Version, Version: s.Spec.Version})
		}
	}
	sortGroupVersions(o, g)
	body, _ := json.Marshal(g)
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(http.StatusOK)
	_, _ = w.Write(body)
}
