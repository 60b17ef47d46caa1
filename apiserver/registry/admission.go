package registry

import (
	"context"

	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/runtime"

	"github.com/devplane/devplane/apiserver/admission"
	"github.com/devplane/devplane/apiserver/request"
)

// admissionHolder boxes an admission.Interface for the atomic pointer.
type admissionHolder struct{ chain admission.Interface }

// SetAdmission makes every store of the registry, including resources
// added later, run requests through a (nil: no admission).
func (r *Registry) SetAdmission(a admission.Interface) {
	if a == nil {
		r.admission.Store(nil)
		return
	}
	r.admission.Store(&admissionHolder{chain: a})
}

func (s *Store) admissionChain(ctx context.Context) admission.Interface {
	if s.registry == nil || admission.Skipped(ctx) {
		return nil
	}
	h := s.registry.admission.Load()
	if h == nil {
		return nil
	}
	return h.chain
}

type dryRunKey struct{}

// withAdmissionDryRun records the request's dry-run flag for admission
// where the store reuses dry-run paths internally (create on update).
func withAdmissionDryRun(ctx context.Context, dryRun []string) context.Context {
	return context.WithValue(ctx, dryRunKey{}, isDryRun(dryRun))
}

func admissionDryRun(ctx context.Context, dryRun []string) bool {
	if v, ok := ctx.Value(dryRunKey{}).(bool); ok {
		return v
	}
	return isDryRun(dryRun)
}

func (s *Store) admissionAttributes(ctx context.Context, op admission.Operation, obj, old runtime.Object,
	subresource string, dryRun bool, opts runtime.Object) *admission.Attributes {
	a := &admission.Attributes{
		Operation:   op,
		Resource:    s.Kind.GroupVersion().WithResource(s.Resource.Resource),
		Subresource: subresource,
		Kind:        s.Kind,
		Object:      obj,
		OldObject:   old,
		DryRun:      dryRun,
		Options:     opts,
	}
	for _, o := range []runtime.Object{obj, old} {
		if o == nil {
			continue
		}
		if acc, err := meta.Accessor(o); err == nil {
			a.Namespace, a.Name = acc.GetNamespace(), acc.GetName()
			break
		}
	}
	if u, ok := request.UserFrom(ctx); ok {
		a.User = u
	}
	return a
}

// admitMutate runs the mutating phase and returns the (possibly replaced)
// object, defaulted again when admission changed it.
func (s *Store) admitMutate(ctx context.Context, op admission.Operation, obj, old runtime.Object,
	subresource string, dryRun bool, opts runtime.Object) (runtime.Object, error) {
	chain := s.admissionChain(ctx)
	if chain == nil {
		return obj, nil
	}
	a := s.admissionAttributes(ctx, op, obj, old, subresource, dryRun, opts)
	if err := chain.Mutate(ctx, a); err != nil {
		return nil, err
	}
	if s.Default != nil && a.Object != nil {
		s.Default(a.Object)
	}
	return a.Object, nil
}

// admitValidate runs the validating phase.
func (s *Store) admitValidate(ctx context.Context, op admission.Operation, obj, old runtime.Object,
	subresource string, dryRun bool, opts runtime.Object) error {
	chain := s.admissionChain(ctx)
	if chain == nil {
		return nil
	}
	return chain.Validate(ctx, s.admissionAttributes(ctx, op, obj, old, subresource, dryRun, opts))
}
