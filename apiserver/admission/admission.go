// Package admission is devplane's admission chain: the built-in plugins
// kube-apiserver enables by default, then mutating webhooks, then (in the
// validation phase) ValidatingAdmissionPolicies and validating webhooks.
// The generic REST store calls Mutate after defaulting and Validate after
// the kind's validation, just before storage.
package admission

import (
	"context"
	"sync"

	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/devplane/devplane/apiserver/request"
)

// Operation is what a request does to an object.
type Operation string

// The operations admission sees, as admission.k8s.io names them.
const (
	Create  Operation = "CREATE"
	Update  Operation = "UPDATE"
	Delete  Operation = "DELETE"
	Connect Operation = "CONNECT"
)

// Attributes describe one admission request.
type Attributes struct {
	Operation   Operation
	Resource    schema.GroupVersionResource
	Subresource string
	Kind        schema.GroupVersionKind
	Namespace   string
	Name        string
	// Object is the new object (nil on DELETE); mutating plugins change it
	// in place or replace it.
	Object    runtime.Object
	OldObject runtime.Object
	DryRun    bool
	// Options are the request's Create/Update/DeleteOptions.
	Options runtime.Object
	User    *request.User
}

// Interface is one admission plugin, or the whole chain.
type Interface interface {
	// Mutate may change a.Object. It runs on CREATE and UPDATE only.
	Mutate(ctx context.Context, a *Attributes) error
	// Validate may only accept or reject.
	Validate(ctx context.Context, a *Attributes) error
}

// Chain runs plugins in order; the first error stops it.
type Chain []Interface

// Mutate runs every plugin's Mutate.
func (c Chain) Mutate(ctx context.Context, a *Attributes) error {
	for _, p := range c {
		if err := p.Mutate(ctx, a); err != nil {
			return err
		}
	}
	return nil
}

// Validate runs every plugin's Validate.
func (c Chain) Validate(ctx context.Context, a *Attributes) error {
	for _, p := range c {
		if err := p.Validate(ctx, a); err != nil {
			return err
		}
	}
	return nil
}

// Warnings collects the warnings admission adds to one request; the HTTP
// handler turns them into Warning headers.
type Warnings struct {
	mu   sync.Mutex
	add  func(string)
	msgs []string
}

type warningsKey struct{}

// WithWarnings returns ctx whose admission warnings are passed to add.
func WithWarnings(ctx context.Context, add func(string)) context.Context {
	return context.WithValue(ctx, warningsKey{}, &Warnings{add: add})
}

// AddWarning records a warning for the request in ctx (dropped when the
// request collects none).
func AddWarning(ctx context.Context, msg string) {
	w, ok := ctx.Value(warningsKey{}).(*Warnings)
	if !ok || msg == "" {
		return
	}
	w.mu.Lock()
	defer w.mu.Unlock()
	for _, m := range w.msgs {
		if m == msg {
			return
		}
	}
	w.msgs = append(w.msgs, msg)
	if w.add != nil {
		w.add(msg)
	}
}

// ResetWarnings forgets the warnings recorded so far for deduplication
// (the request is being retried from scratch).
func ResetWarnings(ctx context.Context) {
	if w, ok := ctx.Value(warningsKey{}).(*Warnings); ok {
		w.mu.Lock()
		w.msgs = nil
		w.mu.Unlock()
	}
}

// Func adapts plain functions to Interface.
type Func struct {
	MutateFunc   func(ctx context.Context, a *Attributes) error
	ValidateFunc func(ctx context.Context, a *Attributes) error
}

// Mutate calls MutateFunc when set.
func (f Func) Mutate(ctx context.Context, a *Attributes) error {
	if f.MutateFunc == nil {
		return nil
	}
	return f.MutateFunc(ctx, a)
}

// Validate calls ValidateFunc when set.
func (f Func) Validate(ctx context.Context, a *Attributes) error {
	if f.ValidateFunc == nil {
		return nil
	}
	return f.ValidateFunc(ctx, a)
}

// ListedOnWrites are the resources the chain lists from the watch cache as
// it admits writes: its own configurations and quotas on every write,
// limit ranges, priority and storage classes on creates of pods and
// claims. They are small and rarely change; a Source may keep them at hand.
func ListedOnWrites() []schema.GroupVersionResource {
	return []schema.GroupVersionResource{
		mutatingConfigsGVR, validatingConfigsGVR, mutatingPoliciesGVR, mutatingBindingsGVR,
		policiesGVR, bindingsGVR, resourceQuotasGVR, limitRangesGVR, priorityClassesGVR, storageClassesGVR,
	}
}

// Source reads the objects admission needs (configurations, namespaces,
// quotas); controlplane provides it from the core registry.
type Source interface {
	// Get reads one object; a missing one is a NotFound error.
	Get(ctx context.Context, gvr schema.GroupVersionResource, namespace, name string) (runtime.Object, error)
	// List reads a resource's objects in namespace ("" for all), from the
	// watch cache unless consistent.
	List(ctx context.Context, gvr schema.GroupVersionResource, namespace string, consistent bool) ([]runtime.Object, error)
	// UpdateStatus writes obj's status (ResourceQuota usage), failing on a
	// resourceVersion conflict, and returns the object stored.
	UpdateStatus(ctx context.Context, gvr schema.GroupVersionResource, obj runtime.Object) (runtime.Object, error)
	// Resource finds the stored resource of a kind and whether it is
	// namespaced (a policy's paramKind); false when nothing serves it.
	Resource(gvk schema.GroupVersionKind) (gvr schema.GroupVersionResource, namespaced, ok bool)
}

type skipKey struct{}

// WithoutAdmission marks ctx for writes admission itself makes (quota
// usage), which must not be admitted again.
func WithoutAdmission(ctx context.Context) context.Context {
	return context.WithValue(ctx, skipKey{}, true)
}

// Skipped reports whether ctx was marked by WithoutAdmission.
func Skipped(ctx context.Context) bool {
	v, _ := ctx.Value(skipKey{}).(bool)
	return v
}
