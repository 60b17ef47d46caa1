// Package storage keeps API objects in etcd. resourceVersion is the etcd
// revision: an object's mod revision, a list's read revision. Interface is
// implemented twice: Store talks to etcd directly; Cacher serves reads and
// watches from one etcd watch per resource.
package storage

import (
	"context"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/fields"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/watch"
)

// Interface is what the REST layer needs from storage. Errors are already
// Kubernetes API errors (k8s.io/apimachinery/pkg/api/errors) naming the
// resource, so handlers pass them straight to the client.
type Interface interface {
	// Create stores obj at key if nothing is there (AlreadyExists otherwise)
	// and decodes the stored object, with resourceVersion set, into out.
	// ttl > 0 attaches an etcd lease of that many seconds (events).
	Create(ctx context.Context, key string, obj, out runtime.Object, ttl int64) error

	// Get decodes the object at key into out. NotFound if absent.
	Get(ctx context.Context, key string, opts GetOptions, out runtime.Object) error

	// GetList fills listObj (a *XList) with the objects under key (a prefix
	// when opts.Recursive) that match opts.Predicate, and sets the list's
	// resourceVersion, continue token and remainingItemCount.
	GetList(ctx context.Context, key string, opts ListOptions, listObj runtime.Object) error

	// GuaranteedUpdate reads the object at key, calls tryUpdate with it and
	// writes the result with a compare-and-swap on its mod revision, retrying
	// on a lost race. tryUpdate may return a Conflict error itself (stale
	// resourceVersion in the request) which is returned as is. With
	// ignoreNotFound, tryUpdate gets an empty object (from NewFunc) when key is
	// absent, and the result is created. A tryUpdate result identical to the
	// existing object is not written (resourceVersion unchanged).
	GuaranteedUpdate(ctx context.Context, key string, out runtime.Object, ignoreNotFound bool,
		preconditions *Preconditions, tryUpdate UpdateFunc) error

	// Delete removes the object at key if preconditions hold and
	// validateDeletion (may be nil) accepts the current object; out receives
	// the last state. Retries on a lost race.
	Delete(ctx context.Context, key string, out runtime.Object, preconditions *Preconditions,
		validateDeletion func(ctx context.Context, obj runtime.Object) error) error

	// Watch streams changes under key (a prefix when opts.Recursive) after
	// opts.ResourceVersion. "" or "0" first sends the current objects as
	// ADDED. A revision older than what can be served gives a 410 Gone
	// (reason Expired) error, or an in-band watch.Error event with that
	// Status once the stream is open.
	Watch(ctx context.Context, key string, opts ListOptions) (watch.Interface, error)

	// CurrentRevision is the latest etcd revision (a consistent read).
	CurrentRevision(ctx context.Context) (int64, error)
}

// UpdateFunc computes the new object from the current one. It must not
// modify input; returning an error aborts the update with that error.
type UpdateFunc func(input runtime.Object) (output runtime.Object, err error)

// Preconditions must hold for an update or delete to proceed; a mismatch is
// a Conflict error.
type Preconditions struct {
	UID             *types.UID
	ResourceVersion *string
}

// GetOptions: ResourceVersion "" is a consistent read; "0" may be served from
// the cache; anything else means "at least this fresh".
type GetOptions struct {
	ResourceVersion string
	IgnoreNotFound  bool
}

// ListOptions carries what a list or watch request asked for.
type ListOptions struct {
	ResourceVersion      string
	ResourceVersionMatch metav1.ResourceVersionMatch
	Predicate            SelectionPredicate
	Recursive            bool
	// ProgressNotify: the watch sends BOOKMARK events (allowWatchBookmarks).
	ProgressNotify bool
	// SendInitialEvents: with ResourceVersionMatch NotOlderThan, send the
	// current state as ADDED then a BOOKMARK annotated
	// "k8s.io/initial-events-end": "true".
	SendInitialEvents *bool

	// keys, set by a Cacher handing a paged list to its Store, bounds
	// each etcd read of the pages.
	keys keyIndex
}

// keyIndex is a cache's sorted keys: close to those at the revision a
// paged list reads, exactly those once it has caught up with it. etcd
// counts every key of a range it reads, limit or not, so a page of 500
// read to the end of a prefix of 100,000 keys visits them all; bounded
// where the cache says the page ends, it visits about 500.
type keyIndex interface {
	// pageEnd is the key n keys after start (an exclusive range end), or
	// "" when fewer than n keys follow start before end.
	pageEnd(start, end string, n int64) string
	// keysIn counts the keys in [start, end) at rev, from the cache once
	// it has reached rev; -1 when it cannot tell.
	keysIn(ctx context.Context, rev int64, start, end string) int64
}

// SelectionPredicate selects objects by labels and fields, and pages.
type SelectionPredicate struct {
	Label    labels.Selector // nil = everything
	Field    fields.Selector // nil = everything
	GetAttrs AttrFunc
	Limit    int64
	Continue string
}

// AttrFunc returns the labels and the selectable fields of an object
// (always metadata.name and metadata.namespace, plus per-kind fields).
type AttrFunc func(obj runtime.Object) (labels.Set, fields.Set, error)

// Empty reports whether the predicate selects everything (no filtering).
func (p SelectionPredicate) Empty() bool {
	return (p.Label == nil || p.Label.Empty()) && (p.Field == nil || p.Field.Empty())
}

// Matches reports whether obj passes the label and field selectors.
func (p SelectionPredicate) Matches(obj runtime.Object) (bool, error) {
	if p.Empty() {
		return true, nil
	}
	l, f, err := p.GetAttrs(obj)
	if err != nil {
		return false, err
	}
	if p.Label != nil && !p.Label.Matches(l) {
		return false, nil
	}
	if p.Field != nil && !p.Field.Matches(f) {
		return false, nil
	}
	return true, nil
}

// Config describes one resource's storage.
type Config struct {
	// Resource names the resource in errors ("configmaps" in group "").
	Resource schema.GroupResource
	// Codec encodes objects for etcd and decodes them back (protobuf for
	// built-in kinds, JSON for custom resources).
	Codec runtime.Codec
	// NewFunc and NewListFunc make empty objects of the resource's kind.
	NewFunc     func() runtime.Object
	NewListFunc func() runtime.Object
	// ResourcePrefix is the key prefix of the resource, e.g.
	// "/registry/configmaps" or "/registry/apps/deployments"; an object's key
	// is ResourcePrefix/<namespace>/<name> or ResourcePrefix/<name>.
	ResourcePrefix string
	// GetAttrs returns labels and selectable fields of an object.
	GetAttrs AttrFunc
	// ShareUnchanged, when set, lets the watch cache make a new revision
	// of an object (cur, not yet shared) reuse what did not change since
	// prev, so the cache holds one copy of the large parts that rarely
	// change (a CRD's schemas across its status updates). Both objects
	// must stay read-only afterwards, as every cached object is. It
	// reports whether cur now shares all the parts Compact would compact.
	ShareUnchanged func(prev, cur runtime.Object) bool
	// Compact, when set, is called on each object the watch cache decodes,
	// before anyone sees it, to make it smaller in memory (a CRD's schema
	// subtrees shared). The object stays read-only afterwards.
	Compact func(obj runtime.Object)
	// Decode, when set, is tried before Codec.Decode on an empty object: a
	// faster decoder for the resource's stored bytes. When it reports
	// handled, into must be exactly what Codec.Decode would have made of
	// data; when not, into must still be empty and the codec decodes.
	// like, when not nil, is an object data likely revises (the cached one
	// at its key, read-only): what provably did not change since (a CRD's
	// spec while its generation holds) may be taken from it rather than
	// decoded again, sharing only what is read-only everywhere.
	Decode func(data []byte, like, into runtime.Object) (handled bool, err error)
	// Encode, when set, is tried before Codec.Encode: a faster encoder
	// whose bytes, when it reports handled, are exactly Codec.Encode's.
	Encode func(obj runtime.Object) (data []byte, handled bool, err error)
	// Copy, when set, replaces DeepCopyObject where the watch cache hands
	// a cached object out for its caller to own (a CRD's copy shares the
	// read-only schemas).
	Copy func(runtime.Object) runtime.Object
}

func (c Config) copyObject(obj runtime.Object) runtime.Object {
	if c.Copy != nil {
		return c.Copy(obj)
	}
	return obj.DeepCopyObject()
}
