package endpoints

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"mime"
	"net/http"
	"sort"
	"strings"
	"sync"
	"sync/atomic"

	apidiscoveryv2 "k8s.io/api/apidiscovery/v2"
	autoscalingv1 "k8s.io/api/autoscaling/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/version"

	"github.com/devplane/devplane/apiserver/registry"
	"github.com/devplane/devplane/apiserver/request"
)

// aggregatedContentType is what clients ask for, and get back, for
// aggregated discovery.
const aggregatedContentType = "application/json;g=apidiscovery.k8s.io;v=v2;as=APIGroupDiscoveryList"

// DiscoveryHandler serves /api, /apis, /apis/<group> and the per-version
// resource lists, in the legacy and the aggregated (v2) form. Both come
// from one registry snapshot, rebuilt lazily after the registry changes.
type DiscoveryHandler struct {
	reg      *registry.Registry
	extra    []*registry.Registry
	changes  atomic.Int64 // registry changes seen, so a rebuild racing one is not cached
	docs     atomic.Pointer[discoveryDocs]
	mu       sync.Mutex // serializes rebuilds
	notFound func(http.ResponseWriter, *http.Request)
}

// document is one pre-encoded discovery response.
type document struct {
	body []byte
	etag string
}

type discoveryDocs struct {
	groupList      document            // /apis (legacy)
	groups         map[string]document // /apis/<group>
	resourceLists  map[string]document // /api/v1, /apis/<group>/<version>
	aggregatedCore document            // /api (aggregated)
	aggregatedAPIs document            // /apis (aggregated)
	coreVersions   []string
}

// NewDiscoveryHandler serves discovery for reg and the extra registries
// (listed after reg's resources); unknown groups and versions get 404.
func NewDiscoveryHandler(reg *registry.Registry, extra ...*registry.Registry) *DiscoveryHandler {
	d := &DiscoveryHandler{reg: reg, extra: extra}
	invalidate := func() { d.changes.Add(1); d.docs.Store(nil) }
	reg.OnChange(invalidate)
	for _, r := range extra {
		r.OnChange(invalidate)
	}
	return d
}

// ServeHTTP serves the discovery path of r.
func (d *DiscoveryHandler) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	info, ok := request.RequestInfoFrom(r.Context())
	if !ok {
		var err error
		if info, err = request.Parse(r); err != nil {
			http.NotFound(w, r)
			return
		}
	}
	d.serve(w, r, info)
}

func (d *DiscoveryHandler) serve(w http.ResponseWriter, r *http.Request, info *request.RequestInfo) {
	if r.Method != http.MethodGet && r.Method != http.MethodHead {
		d.fail(w, r)
		return
	}
	docs := d.current()
	parts := strings.Split(strings.Trim(r.URL.Path, "/"), "/")
	switch {
	case len(parts) == 1 && parts[0] == "api":
		if wantsAggregated(r) {
			writeDocument(w, r, aggregatedContentType, docs.aggregatedCore)
			return
		}
		versions := &metav1.APIVersions{
			TypeMeta: metav1.TypeMeta{Kind: "APIVersions"},
			Versions: docs.coreVersions,
			ServerAddressByClientCIDRs: []metav1.ServerAddressByClientCIDR{
				{ClientCIDR: "0.0.0.0/0", ServerAddress: r.Host}},
		}
		writeDocument(w, r, "application/json", encodeDocument(versions))
	case len(parts) == 1 && parts[0] == "apis":
		if wantsAggregated(r) {
			writeDocument(w, r, aggregatedContentType, docs.aggregatedAPIs)
			return
		}
		writeDocument(w, r, "application/json", docs.groupList)
	case len(parts) == 2 && parts[0] == "apis":
		doc, ok := docs.groups[parts[1]]
		if !ok {
			d.fail(w, r)
			return
		}
		writeDocument(w, r, "application/json", doc)
	case len(parts) == 2 && parts[0] == "api", len(parts) == 3 && parts[0] == "apis":
		doc, ok := docs.resourceLists[strings.Join(parts[1:], "/")]
		if !ok || (parts[0] == "api") != (len(parts) == 2) {
			d.fail(w, r)
			return
		}
		writeDocument(w, r, "application/json", doc)
	default:
		d.fail(w, r)
	}
}

func (d *DiscoveryHandler) fail(w http.ResponseWriter, r *http.Request) {
	if d.notFound != nil {
		d.notFound(w, r)
		return
	}
	http.NotFound(w, r)
}

// wantsAggregated: the client lists aggregated discovery v2 (JSON) among
// what it accepts, as kubectl and client-go do first.
func wantsAggregated(r *http.Request) bool {
	for _, clause := range strings.Split(r.Header.Get("Accept"), ",") {
		mt, params, err := mime.ParseMediaType(strings.TrimSpace(clause))
		if err != nil {
			continue
		}
		if mt == "application/json" && params["g"] == "apidiscovery.k8s.io" && params["v"] == "v2" &&
			params["as"] == "APIGroupDiscoveryList" {
			return true
		}
	}
	return false
}

func writeDocument(w http.ResponseWriter, r *http.Request, contentType string, doc document) {
	w.Header().Set("ETag", doc.etag)
	w.Header().Set("Vary", "Accept")
	if match := r.Header.Get("If-None-Match"); match != "" && match == doc.etag {
		w.WriteHeader(http.StatusNotModified)
		return
	}
	writeBody(w, r, http.StatusOK, contentType, doc.body)
}

func encodeDocument(v any) document {
	body, _ := json.Marshal(v)
	sum := sha256.Sum256(body)
	return document{body: body, etag: `"` + hex.EncodeToString(sum[:]) + `"`}
}

func (d *DiscoveryHandler) current() *discoveryDocs {
	if docs := d.docs.Load(); docs != nil {
		return docs
	}
	d.mu.Lock()
	defer d.mu.Unlock()
	if docs := d.docs.Load(); docs != nil {
		return docs
	}
	seen := d.changes.Load()
	resources := d.reg.Resources()
	if len(d.extra) > 0 {
		resources = append([]*registry.Resource(nil), resources...)
		for _, r := range d.extra {
			resources = append(resources, r.Resources()...)
		}
	}
	docs := buildDiscovery(resources)
	if d.changes.Load() == seen {
		d.docs.Store(docs)
	}
	return docs
}

type groupVersions struct {
	name     string
	versions []string // preferred first
	byVer    map[string][]*registry.Resource
}

func buildDiscovery(resources []*registry.Resource) *discoveryDocs {
	var groups []*groupVersions
	byName := map[string]*groupVersions{}
	for _, res := range resources {
		g := byName[res.GVR.Group]
		if g == nil {
			g = &groupVersions{name: res.GVR.Group, byVer: map[string][]*registry.Resource{}}
			byName[g.name] = g
			groups = append(groups, g)
		}
		if _, seen := g.byVer[res.GVR.Version]; !seen {
			g.versions = append(g.versions, res.GVR.Version)
		}
		g.byVer[res.GVR.Version] = append(g.byVer[res.GVR.Version], res)
	}
	for _, g := range groups {
		sort.Slice(g.versions, func(i, j int) bool {
			return version.CompareKubeAwareVersionStrings(g.versions[i], g.versions[j]) > 0
		})
	}

	docs := &discoveryDocs{groups: map[string]document{}, resourceLists: map[string]document{}}
	groupList := &metav1.APIGroupList{TypeMeta: metav1.TypeMeta{Kind: "APIGroupList", APIVersion: "v1"}, Groups: []metav1.APIGroup{}}
	core := &apidiscoveryv2.APIGroupDiscoveryList{TypeMeta: aggregatedTypeMeta(), Items: []apidiscoveryv2.APIGroupDiscovery{}}
	apis := &apidiscoveryv2.APIGroupDiscoveryList{TypeMeta: aggregatedTypeMeta(), Items: []apidiscoveryv2.APIGroupDiscovery{}}
	for _, g := range groups {
		agg := apidiscoveryv2.APIGroupDiscovery{ObjectMeta: metav1.ObjectMeta{Name: g.name}}
		var legacy metav1.APIGroup
		legacy.Name = g.name
		for _, v := range g.versions {
			gv := schema.GroupVersion{Group: g.name, Version: v}
			legacy.Versions = append(legacy.Versions, metav1.GroupVersionForDiscovery{GroupVersion: gv.String(), Version: v})
			docs.resourceLists[strings.TrimPrefix(gv.String(), "/")] = encodeDocument(resourceList(gv, g.byVer[v]))
			agg.Versions = append(agg.Versions, versionDiscovery(v, g.byVer[v]))
		}
		legacy.PreferredVersion = legacy.Versions[0]
		if g.name == "" {
			docs.coreVersions = g.versions
			core.Items = append(core.Items, agg)
			continue
		}
		apis.Items = append(apis.Items, agg)
		groupList.Groups = append(groupList.Groups, legacy)
		group := legacy
		group.TypeMeta = metav1.TypeMeta{Kind: "APIGroup", APIVersion: "v1"}
		docs.groups[g.name] = encodeDocument(&group)
	}
	if docs.coreVersions == nil {
		docs.coreVersions = []string{}
	}
	docs.groupList = encodeDocument(groupList)
	docs.aggregatedCore = encodeDocument(core)
	docs.aggregatedAPIs = encodeDocument(apis)
	return docs
}

func aggregatedTypeMeta() metav1.TypeMeta {
	return metav1.TypeMeta{Kind: "APIGroupDiscoveryList", APIVersion: "apidiscovery.k8s.io/v2"}
}

func subresourceKind(res *registry.Resource, sub string) schema.GroupVersionKind {
	if c := res.CreateSubresources[sub]; c != nil {
		return c.Kind
	}
	if c := res.ConnectSubresources[sub]; c != nil {
		return c.Kind
	}
	if sub == "scale" {
		return autoscalingv1.SchemeGroupVersion.WithKind("Scale")
	}
	return res.GroupVersionKind()
}

func resourceList(gv schema.GroupVersion, resources []*registry.Resource) *metav1.APIResourceList {
	list := &metav1.APIResourceList{TypeMeta: metav1.TypeMeta{Kind: "APIResourceList", APIVersion: "v1"},
		GroupVersion: gv.String(), APIResources: []metav1.APIResource{}}
	for _, res := range resources {
		list.APIResources = append(list.APIResources, metav1.APIResource{
			Name: res.GVR.Resource, SingularName: res.Singular, Namespaced: res.Namespaced, Kind: res.Kind,
			Verbs: res.Verbs, ShortNames: res.ShortNames, Categories: res.Categories,
		})
		for _, sub := range res.Subresources() {
			kind := subresourceKind(res, sub)
			r := metav1.APIResource{Name: res.GVR.Resource + "/" + sub, Namespaced: res.Namespaced,
				Kind: kind.Kind, Verbs: res.SubresourceVerbs(sub)}
			// Named only when not the resource's own, as kube does.
			if kind.GroupVersion() != res.GVR.GroupVersion() {
				r.Group, r.Version = kind.Group, kind.Version
			}
			list.APIResources = append(list.APIResources, r)
		}
	}
	return list
}

func versionDiscovery(v string, resources []*registry.Resource) apidiscoveryv2.APIVersionDiscovery {
	out := apidiscoveryv2.APIVersionDiscovery{Version: v, Freshness: apidiscoveryv2.DiscoveryFreshnessCurrent,
		Resources: []apidiscoveryv2.APIResourceDiscovery{}}
	for _, res := range resources {
		scope := apidiscoveryv2.ScopeCluster
		if res.Namespaced {
			scope = apidiscoveryv2.ScopeNamespace
		}
		kind := res.GroupVersionKind()
		d := apidiscoveryv2.APIResourceDiscovery{
			Resource: res.GVR.Resource, SingularResource: res.Singular, Scope: scope, Verbs: res.Verbs,
			ShortNames: res.ShortNames, Categories: res.Categories,
			ResponseKind: &metav1.GroupVersionKind{Group: kind.Group, Version: kind.Version, Kind: kind.Kind},
		}
		for _, sub := range res.Subresources() {
			sk := subresourceKind(res, sub)
			// kube names the group and version only when they are not the
			// resource's own (autoscaling/v1 Scale, policy/v1 Eviction).
			if sk.GroupVersion() == kind.GroupVersion() {
				sk.Group, sk.Version = "", ""
			}
			d.Subresources = append(d.Subresources, apidiscoveryv2.APISubresourceDiscovery{
				Subresource:  sub,
				ResponseKind: &metav1.GroupVersionKind{Group: sk.Group, Version: sk.Version, Kind: sk.Kind},
				Verbs:        res.SubresourceVerbs(sub),
			})
		}
		out.Resources = append(out.Resources, d)
	}
	return out
}
