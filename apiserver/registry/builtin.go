package registry

import (
	"reflect"
	"time"

	"github.com/devplane/devplane/apiserver/patch"

	corev1 "k8s.io/api/core/v1"
	eventsv1 "k8s.io/api/events/v1"
	"k8s.io/apimachinery/pkg/runtime/serializer/protobuf"

	"github.com/devplane/devplane/apiserver/builtin"
	"github.com/devplane/devplane/apiserver/storage"
)

// DefaultEventTTL is how long events live unless WithEventTTL says
// otherwise, as kube-apiserver's default --event-ttl of one hour.
const DefaultEventTTL = time.Hour

// BuiltinOption adjusts NewResourceFromBuiltin.
type BuiltinOption func(*builtinOptions)

type builtinOptions struct {
	eventTTL time.Duration
	strategy func(*Strategy)
}

// WithStrategy lets adjust make the generic strategy the kind's (see
// apiserver/registry/strategies).
func WithStrategy(adjust func(*Strategy)) BuiltinOption {
	return func(o *builtinOptions) { o.strategy = adjust }
}

// WithEventTTL makes events (core/v1 and events.k8s.io/v1) expire ttl after
// they are created (kube-apiserver's --event-ttl), rounded up to whole
// seconds since etcd leases count seconds. ttl <= 0 keeps DefaultEventTTL.
func WithEventTTL(ttl time.Duration) BuiltinOption {
	return func(o *builtinOptions) {
		if ttl > 0 {
			o.eventTTL = ttl
		}
	}
}

// StorageConfig is the storage configuration of a built-in kind: protobuf
// in etcd under the kind's storage prefix.
func StorageConfig(k builtin.Kind) storage.Config {
	pb := protobuf.NewSerializer(builtin.Scheme, builtin.Scheme)
	return storage.Config{
		Resource:       k.GroupVersion.WithResource(k.Resource).GroupResource(),
		Codec:          builtin.Codecs.CodecForVersions(pb, pb, k.GroupVersion, k.GroupVersion),
		NewFunc:        k.New,
		NewListFunc:    k.NewList,
		ResourcePrefix: k.StoragePrefix,
		GetAttrs:       builtin.GetAttrs(k),
		Decode:         storedProtobufDecoder(k.GroupVersion.WithKind(k.Kind)),
		Encode:         storedProtobufEncoder(k.GroupVersion.WithKind(k.Kind), reflect.TypeOf(k.New())),
		Compact:        shareRepeatedParts,
	}
}

// NewResourceFromBuiltin serves a built-in kind from store (a storage.Store
// or Cacher made with StorageConfig(k)). Table is left nil for the caller
// to fill from the printers package.
func NewResourceFromBuiltin(k builtin.Kind, store storage.Interface, opts ...BuiltinOption) *Resource {
	o := builtinOptions{eventTTL: DefaultEventTTL}
	for _, opt := range opts {
		opt(&o)
	}
	gvr := k.GroupVersion.WithResource(k.Resource)
	var scale *ScaleFuncs
	if k.Scale != nil {
		scale = &ScaleFuncs{Get: k.Scale.Get, Set: k.Scale.Set}
	}
	attrs := storage.AttrFunc(builtin.GetAttrs(k))
	supported := builtin.SupportedFields(k)
	_, isCoreEvent := k.New().(*corev1.Event)
	_, isEvent := k.New().(*eventsv1.Event)
	ttl := int64(0)
	if isCoreEvent || isEvent {
		ttl = int64((o.eventTTL + time.Second - 1) / time.Second)
	}
	strategy := Strategy{
		Default:        k.Default,
		Validate:       k.Validate,
		ValidateUpdate: k.ValidateUpdate,
		Generation:     Generation{OnCreate: k.GenerationOnCreate, Changed: k.GenerationChanged},
	}
	if o.strategy != nil {
		o.strategy(&strategy)
	}
	fieldManager := patch.BuiltinFieldManager(k.GroupVersion.WithKind(k.Kind))
	if k.HasStatus {
		fieldManager.ResetOn("", "status")
		fieldManager.ResetOn("status", append([]string{"spec"}, strategy.StatusResetFields...)...)
	}
	return &Resource{
		GVR:          gvr,
		Kind:         k.Kind,
		ListKind:     k.ListKind,
		Singular:     k.Singular,
		ShortNames:   k.ShortNames,
		Categories:   k.Categories,
		Namespaced:   k.Namespaced,
		Verbs:        builtinVerbs(k),
		HasStatus:    k.HasStatus,
		Scale:        scale,
		New:          k.New,
		NewList:      k.NewList,
		FieldManager: fieldManager,
		Store: &Store{
			Resource:        gvr.GroupResource(),
			Kind:            k.GroupVersion.WithKind(k.Kind),
			Namespaced:      k.Namespaced,
			HasStatus:       k.HasStatus,
			Storage:         store,
			KeyPrefix:       k.StoragePrefix,
			NewFunc:         k.New,
			NewListFunc:     k.NewList,
			Strategy:        strategy,
			GetAttrs:        attrs,
			SupportedFields: supported,
			Scale:           scale,
			TTL:             ttl,
		},
		GetAttrs:        attrs,
		SupportedFields: supported,
	}
}

// builtinVerbs are the verbs kube serves for k: all of the generic store's,
// but deletecollection of namespaces (one request must not be able to wipe
// every namespace).
func builtinVerbs(k builtin.Kind) []string {
	if k.GroupVersion.Group == "" && k.Resource == "namespaces" {
		return []string{"create", "delete", "get", "list", "patch", "update", "watch"}
	}
	return DefaultVerbs
}
