// Package registry holds the set of resources the API serves and the
// generic REST store that gives each of them Kubernetes' semantics on top
// of storage.Interface.
package registry

import (
	"github.com/devplane/devplane/apiserver/patch"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"context"
	"net/http"
	"slices"
	"sort"
	"strings"
	"sync"
	"sync/atomic"

	autoscalingv1 "k8s.io/api/autoscaling/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/devplane/devplane/apiserver/storage"
)

// TableConvertor renders objects as a metav1.Table (kubectl get). The
// printers package provides one per built-in resource.
type TableConvertor interface {
	ConvertToTable(ctx context.Context, obj runtime.Object, opts *metav1.TableOptions) (*metav1.Table, error)
}

// ScaleFuncs expose a kind's replicas as an autoscaling/v1 Scale.
type ScaleFuncs struct {
	Get func(obj runtime.Object) *autoscalingv1.Scale
	Set func(obj runtime.Object, replicas int32)
}

// Resource describes one served group/version/resource. It is immutable
// once added to a Registry; replace it with Add to change it.
type Resource struct {
	GVR        schema.GroupVersionResource
	Kind       string
	ListKind   string
	Singular   string
	ShortNames []string
	Categories []string
	Namespaced bool
	Verbs      []string
	HasStatus  bool
	Scale      *ScaleFuncs // nil: no scale subresource
	New        func() runtime.Object
	NewList    func() runtime.Object

	Store *Store
	// Create serves a create-only (virtual) resource such as the access
	// and token reviews: Store is nil, Verbs are ["create"], and the
	// result is answered without being stored. namespace is the request's.
	Create func(ctx context.Context, namespace string, obj runtime.Object) (runtime.Object, error)
	// Read serves get and list of a resource that is computed, not
	// stored (componentstatuses): Store is nil, Verbs are get and list.
	Read *VirtualRead
	// CreateSubresources are POST-only subresources of a stored resource
	// (serviceaccounts/token), by subresource name.
	CreateSubresources map[string]*SubresourceCreate
	// ConnectSubresources are answered by something behind the API server
	// in kube (a kubelet, a service's endpoints): pods/log, pods/exec,
	// nodes/proxy... by subresource name.
	ConnectSubresources map[string]*ConnectSubresource
	// FieldManager keeps managedFields and serves server-side apply; nil
	// for resources without a schema to type them.
	FieldManager *patch.FieldManager
	// Custom marks custom resources (no strategic merge patch, no protobuf).
	Custom bool
	// UnknownFields lists the fields of a custom resource its schema does
	// not know (without changing it), for patches' field validation.
	UnknownFields   func(*unstructured.Unstructured) []string
	Table           TableConvertor // nil: a default NAME/AGE table
	GetAttrs        storage.AttrFunc
	SupportedFields []string
}

// GroupVersionKind is the kind of the resource's objects.
func (r *Resource) GroupVersionKind() schema.GroupVersionKind {
	return r.GVR.GroupVersion().WithKind(r.Kind)
}

// Subresources lists the served subresources ("status", "scale", then the
// others by name) in discovery order.
func (r *Resource) Subresources() []string {
	var subs []string
	if r.HasStatus {
		subs = append(subs, "status")
	}
	if r.Scale != nil {
		subs = append(subs, "scale")
	}
	extra := make([]string, 0, len(r.CreateSubresources)+len(r.ConnectSubresources))
	for name := range r.CreateSubresources {
		extra = append(extra, name)
	}
	for name := range r.ConnectSubresources {
		extra = append(extra, name)
	}
	if r.Store != nil {
		for name := range r.Store.UpdateSubresources {
			extra = append(extra, name)
		}
	}
	sort.Strings(extra)
	return append(subs, extra...)
}

// SubresourceVerbs are the verbs sub serves: create for a create-only
// subresource, a connect subresource's own, update alone for PutOnly
// ones, and get, patch and update for status, scale and the other stored
// ones.
func (r *Resource) SubresourceVerbs(sub string) []string {
	if r.CreateSubresources[sub] != nil {
		return []string{"create"}
	}
	if c := r.ConnectSubresources[sub]; c != nil {
		return c.Verbs
	}
	switch {
	case r.Store == nil:
		return nil
	case r.Store.UpdateSubresources[sub] != nil && r.Store.PutOnly[sub]:
		return []string{"update"}
	case r.Store.UpdateSubresources[sub] != nil,
		sub == "status" && r.HasStatus, sub == "scale" && r.Scale != nil:
		return []string{"get", "patch", "update"}
	}
	return nil
}

// SubresourceCreate serves POST on <resource>/<name>/<subresource>: the
// body is a Kind object (e.g. authentication.k8s.io/v1 TokenRequest) and
// so is the answer.
type SubresourceCreate struct {
	Kind   schema.GroupVersionKind
	New    func() runtime.Object
	Create func(ctx context.Context, namespace, name string, obj runtime.Object) (runtime.Object, error)
}

// VirtualRead computes the objects of a read-only resource.
type VirtualRead struct {
	Get  func(ctx context.Context, name string) (runtime.Object, error)
	List func(ctx context.Context) (runtime.Object, error)
	// Warning, when set, goes with every answer (kube's deprecation
	// warnings).
	Warning string
}

// ConnectSubresource serves every request to one connect-style
// subresource: Serve's error is the answer (devplane has no kubelet or
// container runtime to connect to).
type ConnectSubresource struct {
	Kind  schema.GroupVersionKind // what discovery names
	Verbs []string
	Serve func(ctx context.Context, namespace, name string) error
	// Stream, when set, answers instead of Serve with the request itself
	// (its options are in its query): a log or an exec session. An error
	// it returns before writing anything is written as a Status.
	Stream func(w http.ResponseWriter, r *http.Request, namespace, name string) error
}

// SubresourceUpdate makes the object stored by an update of one
// get/patch/update subresource (pods/resize, csr/approval, ...) from the
// requested and the current object; it validates what it takes, since the
// kind's own update validation is the main resource's.
type SubresourceUpdate func(ctx context.Context, requested, current runtime.Object) (runtime.Object, error)

// DefaultVerbs are the verbs of a resource served by the generic store.
var DefaultVerbs = []string{"create", "delete", "deletecollection", "get", "list", "patch", "update", "watch"}

// Registry is the set of served resources. Reads are lock-free: they load
// an immutable snapshot; writers copy it, change the copy and swap it in.
type Registry struct {
	mu        sync.Mutex // serializes writers
	snapshot  atomic.Pointer[snapshot]
	listeners []func()
	// admission runs every store's writes through the admission chain
	// (nil: none); set once at start-up with SetAdmission.
	admission atomic.Pointer[admissionHolder]
	// writes learns of every store's writes (nil: nobody); set once at
	// start-up with SetWriteRecorder.
	writes atomic.Pointer[writeRecorderHolder]
}

type snapshot struct {
	byGVR   map[schema.GroupVersionResource]*Resource
	ordered []*Resource
}

// New returns an empty Registry.
func New() *Registry {
	r := &Registry{}
	r.snapshot.Store(&snapshot{byGVR: map[schema.GroupVersionResource]*Resource{}})
	return r
}

// Add serves res, replacing any resource with the same GVR, and tells the
// OnChange listeners.
// AddCreateSubresource gives the served resource gvr one more POST-only
// subresource (a copy of the resource replaces it: resources are immutable
// once added); false when gvr is not served from a store.
func (r *Registry) AddCreateSubresource(gvr schema.GroupVersionResource, name string, sub *SubresourceCreate) bool {
	res, ok := r.Lookup(gvr.Group, gvr.Version, gvr.Resource)
	if !ok || res.Store == nil {
		return false
	}
	copied := *res
	copied.CreateSubresources = make(map[string]*SubresourceCreate, len(res.CreateSubresources)+1)
	for k, v := range res.CreateSubresources {
		copied.CreateSubresources[k] = v
	}
	copied.CreateSubresources[name] = sub
	r.Add(&copied)
	return true
}

func (r *Registry) Add(res ...*Resource) {
	changes := make(map[schema.GroupVersionResource]*Resource, len(res))
	for _, one := range res {
		if one.Store != nil {
			one.Store.registry = r
		}
		changes[one.GVR] = one
	}
	r.update(changes)
}

// Remove stops serving gvr.
func (r *Registry) Remove(gvr schema.GroupVersionResource) {
	r.update(map[schema.GroupVersionResource]*Resource{gvr: nil})
}

// update applies changes (a nil resource: stop serving it) in one new
// snapshot. The ordered slice is merged with the sorted changes, not
// re-sorted: a restart adds hundreds of CRD versions a few at a time.
func (r *Registry) update(changes map[schema.GroupVersionResource]*Resource) {
	keys := make([]schema.GroupVersionResource, 0, len(changes))
	for gvr := range changes {
		keys = append(keys, gvr)
	}
	slices.SortFunc(keys, compareGVR)

	r.mu.Lock()
	old := r.snapshot.Load()
	next := make(map[schema.GroupVersionResource]*Resource, len(old.byGVR)+len(changes))
	for k, v := range old.byGVR {
		next[k] = v
	}
	ordered := make([]*Resource, 0, len(old.ordered)+len(changes))
	rest := old.ordered
	for _, gvr := range keys {
		i, found := slices.BinarySearchFunc(rest, gvr, func(r *Resource, gvr schema.GroupVersionResource) int { return compareGVR(r.GVR, gvr) })
		ordered = append(ordered, rest[:i]...)
		if found {
			i++
		}
		rest = rest[i:]
		if res := changes[gvr]; res != nil {
			next[gvr] = res
			ordered = append(ordered, res)
		} else {
			delete(next, gvr)
		}
	}
	ordered = append(ordered, rest...)
	r.snapshot.Store(&snapshot{byGVR: next, ordered: ordered})
	listeners := append([]func(){}, r.listeners...)
	r.mu.Unlock()
	for _, l := range listeners {
		l()
	}
}

// compareGVR orders the core group first, then groups, versions and
// resources alphabetically.
func compareGVR(a, b schema.GroupVersionResource) int {
	if c := strings.Compare(a.Group, b.Group); c != 0 {
		return c
	}
	if c := strings.Compare(a.Version, b.Version); c != 0 {
		return c
	}
	return strings.Compare(a.Resource, b.Resource)
}

// Lookup finds the resource served at group/version/resource.
func (r *Registry) Lookup(group, version, resource string) (*Resource, bool) {
	res, ok := r.snapshot.Load().byGVR[schema.GroupVersionResource{Group: group, Version: version, Resource: resource}]
	return res, ok
}

// Resources returns every served resource, ordered by group, version and
// resource. The slice is shared: do not modify it.
func (r *Registry) Resources() []*Resource {
	return r.snapshot.Load().ordered
}

// ServesGroupVersion reports whether any resource is served in gv.
func (r *Registry) ServesGroupVersion(gv schema.GroupVersion) bool {
	for _, res := range r.Resources() {
		if res.GVR.GroupVersion() == gv {
			return true
		}
	}
	return false
}

// OnChange registers f to run after every Add or Remove (outside locks).
func (r *Registry) OnChange(f func()) {
	r.mu.Lock()
	r.listeners = append(r.listeners, f)
	r.mu.Unlock()
}
