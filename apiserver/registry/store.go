package registry

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"time"

	"github.com/google/uuid"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/fields"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/validation/field"
	"k8s.io/apimachinery/pkg/watch"
	"k8s.io/utils/ptr"

	"github.com/devplane/devplane/apiserver/admission"
	"github.com/devplane/devplane/apiserver/storage"
)

// Generation is how a kind keeps metadata.generation (kube's strategies
// set and bump it in PrepareForCreate and PrepareForUpdate).
type Generation struct {
	// OnCreate sets it to 1 on create.
	OnCreate bool
	// Changed reports whether an update of old to obj bumps it; nil never
	// does.
	Changed func(obj, old runtime.Object) bool
}

// Store is the generic REST store: it turns API requests on one resource
// into storage operations with kube-apiserver's semantics (system metadata,
// defaulting, validation, finalizers, dry run, subresources).
type Store struct {
	Resource   schema.GroupResource
	Kind       schema.GroupVersionKind
	Namespaced bool
	HasStatus  bool
	// UpdateSubresources are the get/patch/update subresources beyond
	// status (pods/resize, csr/approval...), by name.
	UpdateSubresources map[string]SubresourceUpdate
	// PutOnly names those of UpdateSubresources that serve update alone
	// (namespaces/finalize, whose kube REST object has no getter).
	PutOnly map[string]bool
	Storage storage.Interface
	// KeyPrefix is the resource's etcd prefix, without trailing slash.
	KeyPrefix   string
	NewFunc     func() runtime.Object
	NewListFunc func() runtime.Object

	// Strategy is the kind's behaviour where it differs from the generic
	// store's (defaulting, validation, generation, status writes,
	// graceful deletion...).
	Strategy

	// Copy, when set, is the kind's DeepCopyObject for a write to change:
	// a CRD's copy shares its read-only schemas (crdschema.CopySharingSchemas).
	Copy func(runtime.Object) runtime.Object

	GetAttrs        storage.AttrFunc
	SupportedFields []string
	Scale           *ScaleFuncs
	// TTL > 0 makes objects expire after that many seconds (events).
	TTL int64
	// AllowCreateOnUpdate lets PUT create a missing object.
	AllowCreateOnUpdate bool
	// Hooks add a kind's side effects around storage (Services allocate
	// cluster IPs and node ports).
	Hooks Hooks

	// registry finds the namespaces store for the namespace checks on
	// create; set by Registry.Add.
	registry *Registry
}

// metaOf is obj's metadata, or nil for an object without any.
func metaOf(obj runtime.Object) metav1.Object {
	acc, err := meta.Accessor(obj)
	if err != nil {
		return nil
	}
	return acc
}

func (s *Store) copyObject(obj runtime.Object) runtime.Object {
	if s.Copy != nil {
		return s.Copy(obj)
	}
	return obj.DeepCopyObject()
}

// Key is the etcd key of an object.
func (s *Store) Key(namespace, name string) string {
	if s.Namespaced {
		return s.KeyPrefix + "/" + namespace + "/" + name
	}
	return s.KeyPrefix + "/" + name
}

func (s *Store) listKey(namespace string) string {
	if s.Namespaced && namespace != "" {
		return s.KeyPrefix + "/" + namespace + "/"
	}
	return s.KeyPrefix + "/"
}

func (s *Store) isNamespaces() bool {
	return s.Resource.Group == "" && s.Resource.Resource == "namespaces"
}

// Get returns one object.
func (s *Store) Get(ctx context.Context, namespace, name string, opts metav1.GetOptions) (runtime.Object, error) {
	if err := s.checkScope(namespace); err != nil {
		return nil, err
	}
	out := s.NewFunc()
	if err := s.Storage.Get(ctx, s.Key(namespace, name), storage.GetOptions{ResourceVersion: opts.ResourceVersion}, out); err != nil {
		return nil, err
	}
	return out, nil
}

// checkScope rejects a namespace on cluster-scoped resources; namespaced
// ones accept "" (all namespaces) for reads.
func (s *Store) checkScope(namespace string) error {
	if !s.Namespaced && namespace != "" && !s.isNamespaces() {
		return apierrors.NewNotFound(s.Resource, "")
	}
	return nil
}

// Predicate turns list options into a storage selection predicate,
// rejecting field selectors on fields the resource cannot select by.
func (s *Store) Predicate(opts metav1.ListOptions) (storage.SelectionPredicate, error) {
	pred := storage.SelectionPredicate{GetAttrs: s.GetAttrs, Limit: opts.Limit, Continue: opts.Continue}
	if opts.LabelSelector != "" {
		sel, err := labels.Parse(opts.LabelSelector)
		if err != nil {
			return pred, apierrors.NewBadRequest(fmt.Sprintf("unable to parse requirement: %v", err))
		}
		pred.Label = sel
	}
	if opts.FieldSelector != "" {
		sel, err := fields.ParseSelector(opts.FieldSelector)
		if err != nil {
			return pred, apierrors.NewBadRequest(err.Error())
		}
		for _, r := range sel.Requirements() {
			if !s.supportsField(r.Field) {
				return pred, apierrors.NewBadRequest(fmt.Sprintf("field label not supported: %s", r.Field))
			}
		}
		pred.Field = sel
	}
	return pred, nil
}

func (s *Store) supportsField(f string) bool {
	if f == "metadata.name" || f == "metadata.namespace" {
		return true
	}
	for _, sf := range s.SupportedFields {
		if sf == f {
			return true
		}
	}
	return false
}

func (s *Store) storageListOptions(namespace string, opts metav1.ListOptions) (storage.ListOptions, string, error) {
	pred, err := s.Predicate(opts)
	if err != nil {
		return storage.ListOptions{}, "", err
	}
	lo := storage.ListOptions{
		ResourceVersion:      opts.ResourceVersion,
		ResourceVersionMatch: opts.ResourceVersionMatch,
		Predicate:            pred,
		Recursive:            true,
		ProgressNotify:       opts.AllowWatchBookmarks,
		SendInitialEvents:    opts.SendInitialEvents,
	}
	key := s.listKey(namespace)
	// A selector on one name reads one key, as kube does.
	if pred.Field != nil && (namespace != "" || !s.Namespaced) {
		if name, ok := pred.Field.RequiresExactMatch("metadata.name"); ok && name != "" {
			lo.Recursive = false
			key = s.Key(namespace, name)
		}
	}
	return lo, key, nil
}

// List returns the objects in namespace ("" for all) that match opts.
func (s *Store) List(ctx context.Context, namespace string, opts metav1.ListOptions) (runtime.Object, error) {
	if err := s.checkScope(namespace); err != nil {
		return nil, err
	}
	lo, key, err := s.storageListOptions(namespace, opts)
	if err != nil {
		return nil, err
	}
	out := s.NewListFunc()
	if err := s.Storage.GetList(ctx, key, lo, out); err != nil {
		return nil, err
	}
	return out, nil
}

// Observe follows every object of the store in process when its storage
// is a watch cache (storage.Observable); false otherwise.
func (s *Store) Observe(o *storage.Observer) (stop func(), ok bool) {
	if obs, isObservable := s.Storage.(storage.Observable); isObservable {
		return obs.Observe(o)
	}
	return nil, false
}

// Watch streams changes to the objects in namespace that match opts.
func (s *Store) Watch(ctx context.Context, namespace string, opts metav1.ListOptions) (watch.Interface, error) {
	if err := s.checkScope(namespace); err != nil {
		return nil, err
	}
	lo, key, err := s.storageListOptions(namespace, opts)
	if err != nil {
		return nil, err
	}
	return s.Storage.Watch(ctx, key, lo)
}

const generateNameChars = "bcdfghjklmnpqrstvwxz2456789"

// generatedNameAttempts bounds retries when a generated name is taken.
const generatedNameAttempts = 5

func generateName(base string) string {
	const maxBase = 63 - 5
	if len(base) > maxBase {
		base = base[:maxBase]
	}
	b := make([]byte, 5)
	for i := range b {
		b[i] = generateNameChars[rand.IntN(len(generateNameChars))]
	}
	return base + string(b)
}

// Create stores a new object in namespace, filling system metadata.
func (s *Store) Create(ctx context.Context, namespace string, obj runtime.Object, opts metav1.CreateOptions) (runtime.Object, error) {
	acc, err := meta.Accessor(obj)
	if err != nil {
		return nil, apierrors.NewBadRequest(err.Error())
	}
	if err := s.setNamespace(acc, namespace); err != nil {
		return nil, err
	}
	if acc.GetName() == "" && acc.GetGenerateName() == "" {
		return nil, apierrors.NewInvalid(s.Kind.GroupKind(), "", field.ErrorList{
			field.Required(field.NewPath("metadata", "name"), "name or generateName is required")})
	}
	if acc.GetResourceVersion() != "" {
		return nil, apierrors.NewBadRequest("resourceVersion should not be set on objects to be created")
	}
	if s.Namespaced {
		if err := s.checkNamespaceAcceptsContent(ctx, acc.GetNamespace()); err != nil {
			return nil, err
		}
	}
	generated := acc.GetName() == ""
	for attempt := 0; ; attempt++ {
		if generated {
			acc.SetName(generateName(acc.GetGenerateName()))
		}
		out, err := s.createOnce(ctx, obj, acc, opts)
		if generated && apierrors.IsAlreadyExists(err) && attempt < generatedNameAttempts {
			continue
		}
		return out, err
	}
}

func (s *Store) createOnce(ctx context.Context, obj runtime.Object, acc metav1.Object, opts metav1.CreateOptions) (runtime.Object, error) {
	acc.SetUID(types.UID(uuid.NewString()))
	acc.SetCreationTimestamp(metav1.Now())
	acc.SetDeletionTimestamp(nil)
	acc.SetDeletionGracePeriodSeconds(nil)
	acc.SetSelfLink("")
	if s.Default != nil {
		s.Default(obj)
	}
	// Admission: the mutating phase may replace the object.
	mutated, err := s.admitMutate(ctx, admission.Create, obj, nil, "", admissionDryRun(ctx, opts.DryRun), &opts)
	if err != nil {
		return nil, err
	}
	obj = mutated
	if acc, err = meta.Accessor(obj); err != nil {
		return nil, apierrors.NewBadRequest(err.Error())
	}
	// After mutating admission, as kube's PrepareForCreate: what the status
	// subresource writes is not the creator's to set (a Deployment sent
	// back with the status it was read with, a pre-approved CSR), and the
	// defaults give the initial status (a Pod's Pending, a Namespace's
	// Active).
	if s.HasStatus && !s.CreateKeepsStatus {
		clearStatus(obj)
		if s.Default != nil {
			s.Default(obj)
		}
	}
	if s.PrepareForCreate != nil {
		s.PrepareForCreate(obj)
	}
	if s.Generation.OnCreate {
		acc.SetGeneration(1)
	}
	if s.Hooks.BeforeCreate != nil {
		rollback, err := s.Hooks.BeforeCreate(ctx, obj)
		if err != nil {
			return nil, err
		}
		if rollback != nil {
			persisted := false
			defer func() {
				if !persisted {
					rollback()
				}
			}()
			out, err := s.validateAndCreate(ctx, obj, acc, opts)
			persisted = err == nil && !isDryRun(opts.DryRun)
			return out, err
		}
	}
	return s.validateAndCreate(ctx, obj, acc, opts)
}

func (s *Store) validateAndCreate(ctx context.Context, obj runtime.Object, acc metav1.Object, opts metav1.CreateOptions) (runtime.Object, error) {
	if s.Validate != nil {
		if errs := s.Validate(obj); len(errs) > 0 {
			return nil, apierrors.NewInvalid(s.Kind.GroupKind(), acc.GetName(), errs)
		}
	}
	if err := s.admitValidate(ctx, admission.Create, obj, nil, "", admissionDryRun(ctx, opts.DryRun), &opts); err != nil {
		return nil, err
	}
	if isDryRun(opts.DryRun) {
		// Nothing is written, but the answer is the one a write would get.
		if err := s.Storage.Get(ctx, s.Key(acc.GetNamespace(), acc.GetName()), storage.GetOptions{}, s.NewFunc()); err == nil {
			return nil, apierrors.NewAlreadyExists(s.Resource, acc.GetName())
		} else if !apierrors.IsNotFound(err) {
			return nil, err
		}
		return obj, nil
	}
	out := s.NewFunc()
	if err := s.storageCreate(ctx, s.Key(acc.GetNamespace(), acc.GetName()), obj, out); err != nil {
		return nil, err
	}
	return out, nil
}

// setNamespace makes the object's namespace agree with the request's.
func (s *Store) setNamespace(acc metav1.Object, namespace string) error {
	if !s.Namespaced {
		acc.SetNamespace("")
		return nil
	}
	if namespace == "" {
		return apierrors.NewBadRequest("the namespace of the object is required for " + s.Resource.String())
	}
	switch acc.GetNamespace() {
	case "":
		acc.SetNamespace(namespace)
	case namespace:
	default:
		return apierrors.NewBadRequest("the namespace of the provided object does not match the namespace sent on the request")
	}
	return nil
}

// checkNamespaceAcceptsContent: new objects need an existing namespace that
// is not being deleted. The cache-served read is tried first; a miss is
// confirmed with a consistent read (a namespace created a moment ago).
func (s *Store) checkNamespaceAcceptsContent(ctx context.Context, namespace string) error {
	if s.registry == nil {
		return nil
	}
	nsRes, ok := s.registry.Lookup("", "v1", "namespaces")
	if !ok || nsRes.Store == nil {
		return nil
	}
	ns := &corev1.Namespace{}
	err := nsRes.Store.Storage.Get(ctx, nsRes.Store.Key("", namespace), storage.GetOptions{ResourceVersion: "0"}, ns)
	if apierrors.IsNotFound(err) {
		err = nsRes.Store.Storage.Get(ctx, nsRes.Store.Key("", namespace), storage.GetOptions{}, ns)
	}
	if apierrors.IsNotFound(err) {
		return apierrors.NewNotFound(schema.GroupResource{Resource: "namespaces"}, namespace)
	}
	if err != nil {
		return err
	}
	if ns.DeletionTimestamp != nil || ns.Status.Phase == corev1.NamespaceTerminating {
		return apierrors.NewForbidden(s.Resource, "", fmt.Errorf(
			"unable to create new content in namespace %s because it is being terminated", namespace))
	}
	return nil
}

func isDryRun(dryRun []string) bool {
	for _, d := range dryRun {
		if d == metav1.DryRunAll {
			return true
		}
	}
	return false
}

// TransformFunc computes the requested object from the current one (PUT
// returns the body, PATCH applies the patch). It must not modify current.
type TransformFunc func(ctx context.Context, current runtime.Object) (runtime.Object, error)

// Update replaces an object (subresource "" ), its status ("status") or
// what one of UpdateSubresources takes. It returns the stored object and
// whether it was created.
func (s *Store) Update(ctx context.Context, namespace, name, subresource string, transform TransformFunc,
	opts metav1.UpdateOptions) (runtime.Object, bool, error) {
	if err := s.checkScope(namespace); err != nil {
		return nil, false, err
	}
	key := s.Key(namespace, name)
	ctx = withAdmissionDryRun(ctx, opts.DryRun)
	wasCreated := false
	// A lost compare-and-swap reruns tryUpdate: each run's side effects are
	// undone before the next, and the last run's kept only if it is stored.
	var pending pendingHook
	tryUpdate := func(current runtime.Object) (runtime.Object, error) {
		pending.discard()
		curAcc, err := meta.Accessor(current)
		if err != nil {
			return nil, apierrors.NewInternalError(err)
		}
		created := curAcc.GetCreationTimestamp()
		missing := created.IsZero() && curAcc.GetUID() == ""
		if missing && (subresource != "" || !s.AllowCreateOnUpdate) {
			return nil, apierrors.NewNotFound(s.Resource, name)
		}
		requested, err := transform(ctx, s.copyObject(current))
		if err != nil {
			return nil, err
		}
		acc, err := meta.Accessor(requested)
		if err != nil {
			return nil, apierrors.NewBadRequest(err.Error())
		}
		if acc.GetName() != name {
			return nil, apierrors.NewBadRequest(fmt.Sprintf(
				"the name of the object (%s) does not match the name on the URL (%s)", acc.GetName(), name))
		}
		if s.Namespaced {
			if err := s.setNamespace(acc, namespace); err != nil {
				return nil, err
			}
		} else {
			acc.SetNamespace("")
		}
		if missing {
			wasCreated = true
			acc.SetResourceVersion("")
			if s.Namespaced {
				if err := s.checkNamespaceAcceptsContent(ctx, namespace); err != nil {
					return nil, err
				}
			}
			if _, err := s.createOnce(ctx, requested, acc, metav1.CreateOptions{DryRun: []string{metav1.DryRunAll}}); err != nil {
				return nil, err
			}
			return requested, nil
		}
		if rv := acc.GetResourceVersion(); rv != "" && rv != curAcc.GetResourceVersion() {
			return nil, conflict(s.Resource, name)
		}
		return s.prepareUpdate(ctx, requested, current, subresource, &pending)
	}

	if isDryRun(opts.DryRun) {
		current := s.NewFunc()
		err := s.Storage.Get(ctx, key, storage.GetOptions{}, current)
		if apierrors.IsNotFound(err) && s.AllowCreateOnUpdate && subresource == "" {
			err = nil
		}
		if err != nil {
			return nil, false, err
		}
		out, err := tryUpdate(current)
		pending.discard()
		return out, wasCreated, err
	}

	out := s.NewFunc()
	if err := s.storageUpdate(ctx, key, out, s.AllowCreateOnUpdate && subresource == "", nil, subresource, tryUpdate); err != nil {
		pending.discard()
		return nil, false, err
	}
	pending.done()
	deleted, err := s.deleteIfFinalized(ctx, key, out)
	if err != nil {
		return nil, false, err
	}
	if deleted != nil {
		return deleted, false, nil
	}
	return out, wasCreated, nil
}

func conflict(gr schema.GroupResource, name string) error {
	return apierrors.NewConflict(gr, name,
		fmt.Errorf("the object has been modified; please apply your changes to the latest version and try again"))
}

// prepareUpdate merges the requested object with the current one as kube's
// strategies do, then defaults and validates it.
func (s *Store) prepareUpdate(ctx context.Context, requested, current runtime.Object, subresource string, pending *pendingHook) (runtime.Object, error) {
	ownValidation := false // a SubresourceUpdate validated what it took
	switch subresource {
	case "status":
		// The request's object, but for what a status write may not
		// change, as kube's status strategies: its metadata stays (the
		// deployment controller writes the revision annotation this way)
		// unless the kind says otherwise. What is taken from the stored
		// object is taken from a copy: the stored one may be the cache's.
		stored := s.copyObject(current)
		KeepStoredSpec(requested, stored)
		if s.PrepareStatusUpdate != nil {
			s.PrepareStatusUpdate(requested, stored)
		}
	case "":
		if s.HasStatus {
			copyStatus(requested, current)
		}
		if s.PrepareForUpdate != nil {
			s.PrepareForUpdate(requested, current)
		}
	default:
		merge := s.UpdateSubresources[subresource]
		if merge == nil {
			return nil, apierrors.NewNotFound(s.Resource, subresource)
		}
		merged, err := merge(ctx, requested, s.copyObject(current))
		if err != nil {
			return nil, err
		}
		setResourceVersionFrom(merged, requested)
		requested = merged
		ownValidation = true
	}
	acc, _ := meta.Accessor(requested)
	old, _ := meta.Accessor(current)
	// System fields are the server's: restore them from the stored object.
	if acc.GetUID() == "" {
		acc.SetUID(old.GetUID())
	}
	acc.SetCreationTimestamp(old.GetCreationTimestamp())
	if old.GetDeletionTimestamp() != nil {
		acc.SetDeletionTimestamp(old.GetDeletionTimestamp())
		acc.SetDeletionGracePeriodSeconds(old.GetDeletionGracePeriodSeconds())
	} else {
		acc.SetDeletionTimestamp(nil)
		acc.SetDeletionGracePeriodSeconds(nil)
	}
	acc.SetSelfLink("")
	if s.Default != nil {
		s.Default(requested)
	}
	// Admission: the mutating phase may replace the object.
	requested, err := s.admitMutate(ctx, admission.Update, requested, current, subresource, admissionDryRun(ctx, nil), nil)
	if err != nil {
		return nil, err
	}
	acc, _ = meta.Accessor(requested)
	if subresource == "" && s.Hooks.BeforeUpdate != nil {
		commit, rollback, err := s.Hooks.BeforeUpdate(ctx, requested, current)
		if err != nil {
			return nil, err
		}
		*pending = pendingHook{commit: commit, rollback: rollback}
	}
	// After mutating admission, as kube's BeforeUpdate: the stored
	// generation, bumped as the kind's strategy says. A status write never
	// bumps it (its spec is the stored one, as kube's status strategies
	// keep it): no need to compare.
	acc.SetGeneration(old.GetGeneration())
	if subresource != "status" && s.Generation.Changed != nil && s.Generation.Changed(requested, current) {
		acc.SetGeneration(old.GetGeneration() + 1)
	}
	var errs field.ErrorList
	if acc.GetUID() != old.GetUID() {
		errs = append(errs, field.Invalid(field.NewPath("metadata", "uid"), acc.GetUID(), "field is immutable"))
	}
	switch {
	case ownValidation:
	case subresource == "status" && s.ValidateStatusUpdate != nil:
		errs = append(errs, s.ValidateStatusUpdate(requested, current)...)
	case s.ValidateUpdate != nil:
		errs = append(errs, s.ValidateUpdate(requested, current)...)
	}
	if len(errs) > 0 {
		return nil, apierrors.NewInvalid(s.Kind.GroupKind(), acc.GetName(), errs)
	}
	if err := s.admitValidate(ctx, admission.Update, requested, current, subresource, admissionDryRun(ctx, nil), nil); err != nil {
		return nil, err
	}
	return requested, nil
}

// deleteIfFinalized deletes an object whose deletion was waiting for
// finalizers once the last one is gone, returning its last state.
func (s *Store) deleteIfFinalized(ctx context.Context, key string, obj runtime.Object) (runtime.Object, error) {
	acc, err := meta.Accessor(obj)
	if err != nil || acc.GetDeletionTimestamp() == nil || s.waitsForFinalizers(obj) {
		return nil, nil
	}
	if g := acc.GetDeletionGracePeriodSeconds(); g != nil && *g > 0 {
		return nil, nil // a graceful deletion: its grace runs (a kubelet ends it)
	}
	uid, rv := acc.GetUID(), acc.GetResourceVersion()
	out := s.NewFunc()
	err = s.storageDelete(ctx, key, out, &storage.Preconditions{UID: &uid, ResourceVersion: &rv})
	if apierrors.IsNotFound(err) || apierrors.IsConflict(err) {
		// Someone else deleted or changed it meanwhile; they own the outcome.
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	s.afterDelete(ctx, out)
	return out, nil
}

// waitsForFinalizers: obj may not go yet (its finalizers, or the kind's own
// ones such as a namespace's spec.finalizers).
func (s *Store) waitsForFinalizers(obj runtime.Object) bool {
	if acc := metaOf(obj); acc != nil && len(acc.GetFinalizers()) > 0 {
		return true
	}
	return s.Finalizing != nil && s.Finalizing(obj)
}

// Delete deletes an object, or marks it for deletion when finalizers must
// run first or the kind deletes it gracefully. deleted reports whether it is
// gone.
func (s *Store) Delete(ctx context.Context, namespace, name string, opts *metav1.DeleteOptions) (obj runtime.Object, deleted bool, err error) {
	if err := s.checkScope(namespace); err != nil {
		return nil, false, err
	}
	if opts == nil {
		opts = &metav1.DeleteOptions{}
	} else {
		opts = opts.DeepCopy() // the grace decided here is written into it
	}
	key := s.Key(namespace, name)
	var pre *storage.Preconditions
	if opts.Preconditions != nil {
		pre = &storage.Preconditions{UID: opts.Preconditions.UID, ResourceVersion: opts.Preconditions.ResourceVersion}
	}
	current := s.NewFunc()
	if err := s.Storage.Get(ctx, key, storage.GetOptions{}, current); err != nil {
		return nil, false, err
	}
	if err := checkPreconditions(s.Resource, name, pre, current); err != nil {
		return nil, false, err
	}
	// Mutating admission sees deletes too (webhooks may watch them), though
	// there is no object to change.
	if _, err := s.admitMutate(ctx, admission.Delete, nil, current, "", isDryRun(opts.DryRun), opts); err != nil {
		return nil, false, err
	}
	if err := s.admitValidate(ctx, admission.Delete, nil, current, "", isDryRun(opts.DryRun), opts); err != nil {
		return nil, false, err
	}
	// A negative grace means the shortest one, as kube's BeforeDelete.
	if g := opts.GracePeriodSeconds; g != nil && *g < 0 {
		opts.GracePeriodSeconds = ptr.To[int64](1)
	}
	var graceful, pending bool
	if s.CheckGracefulDelete != nil {
		graceful, pending = s.beforeDelete(s.copyObject(current), opts.DeepCopy())
	}
	if pending {
		// A graceful deletion runs: only a shorter grace changes it, and
		// finalizers are not added once it started.
		return current, false, nil
	}
	if graceful || s.waitsForFinalizers(current) || propagationFinalizer(opts) != "" {
		out, deleteNow, err := s.markForDeletion(ctx, key, pre, opts)
		if err != nil {
			if errors.Is(err, errAlreadyDeleting) {
				return current, false, nil
			}
			return nil, false, err
		}
		if !deleteNow {
			return out, false, nil
		}
		if isDryRun(opts.DryRun) {
			return out, true, nil
		}
		if out == nil {
			out = current // nothing to mark: it goes as it is
		}
		if pre != nil && pre.ResourceVersion != nil {
			rv := metaOf(out).GetResourceVersion()
			pre.ResourceVersion = &rv
		}
		if graceful {
			// Deleted with no grace: a kubelet racing to delete it too wins
			// just as well.
			gone := s.NewFunc()
			err := s.storageDelete(ctx, key, gone, pre)
			if apierrors.IsNotFound(err) {
				return out, true, nil
			}
			if err != nil {
				return nil, false, err
			}
			s.afterDelete(ctx, gone)
			return gone, true, nil
		}
	}
	if isDryRun(opts.DryRun) {
		return current, true, nil
	}
	out := s.NewFunc()
	if err := s.storageDelete(ctx, key, out, pre); err != nil {
		return nil, false, err
	}
	s.afterDelete(ctx, out)
	return out, true, nil
}

var (
	// errDeleteNow ends markForDeletion's update: the object goes now.
	errDeleteNow = errors.New("delete now")
	// errAlreadyDeleting ends it too: a graceful deletion already runs.
	errAlreadyDeleting = errors.New("already deleting")
)

// beforeDelete decides, as kube's rest.BeforeDelete, whether deleting obj
// is graceful (obj then has its deletionTimestamp and
// deletionGracePeriodSeconds, opts.GracePeriodSeconds the grace) or a
// graceful deletion is already pending (only a shorter grace changes it).
func (s *Store) beforeDelete(obj runtime.Object, opts *metav1.DeleteOptions) (graceful, pending bool) {
	acc := metaOf(obj)
	if acc == nil || s.CheckGracefulDelete == nil {
		return false, false
	}
	if g := acc.GetDeletionGracePeriodSeconds(); g != nil && *g < 0 {
		acc.SetDeletionGracePeriodSeconds(ptr.To[int64](1))
	}
	if ts := acc.GetDeletionTimestamp(); ts != nil {
		current := acc.GetDeletionGracePeriodSeconds()
		if current == nil || *current == 0 {
			return false, false // its grace is over: delete it now
		}
		if opts.GracePeriodSeconds == nil || *opts.GracePeriodSeconds >= *current {
			return false, true
		}
		// Shortened: the deadline moves back by the difference, never
		// into the past (then the shortest graceful grace, 1s, unless 0).
		period := *opts.GracePeriodSeconds
		deadline := metav1.NewTime(ts.Add(time.Duration(period-*current) * time.Second))
		if now := metav1.Now(); deadline.Before(&now) {
			deadline = now
			if period != 0 {
				period = 1
			}
		}
		acc.SetDeletionTimestamp(&deadline)
		acc.SetDeletionGracePeriodSeconds(&period)
		opts.GracePeriodSeconds = &period
		return true, false
	}
	if !s.CheckGracefulDelete(obj, opts) || opts.GracePeriodSeconds == nil {
		return false, false
	}
	deadline := metav1.NewTime(time.Now().Add(time.Duration(*opts.GracePeriodSeconds) * time.Second))
	acc.SetDeletionTimestamp(&deadline)
	acc.SetDeletionGracePeriodSeconds(ptr.To(*opts.GracePeriodSeconds))
	// Its controllers must see the change.
	if g := acc.GetGeneration(); g > 0 {
		acc.SetGeneration(g + 1)
	}
	return true, false
}

func checkPreconditions(gr schema.GroupResource, name string, pre *storage.Preconditions, obj runtime.Object) error {
	if pre == nil {
		return nil
	}
	acc, err := meta.Accessor(obj)
	if err != nil {
		return apierrors.NewInternalError(err)
	}
	if pre.UID != nil && *pre.UID != acc.GetUID() {
		return apierrors.NewConflict(gr, name,
			fmt.Errorf("Precondition failed: UID in precondition: %v, UID in object meta: %v", *pre.UID, acc.GetUID()))
	}
	if pre.ResourceVersion != nil && *pre.ResourceVersion != acc.GetResourceVersion() {
		return apierrors.NewConflict(gr, name,
			fmt.Errorf("Precondition failed: ResourceVersion in precondition: %v, ResourceVersion in object meta: %v",
				*pre.ResourceVersion, acc.GetResourceVersion()))
	}
	return nil
}

// propagationFinalizer is the finalizer a delete's propagation policy adds.
func propagationFinalizer(opts *metav1.DeleteOptions) string {
	if opts.PropagationPolicy != nil {
		switch *opts.PropagationPolicy {
		case metav1.DeletePropagationOrphan:
			return metav1.FinalizerOrphanDependents
		case metav1.DeletePropagationForeground:
			return metav1.FinalizerDeleteDependents
		}
		return ""
	}
	if opts.OrphanDependents != nil && *opts.OrphanDependents {
		return metav1.FinalizerOrphanDependents
	}
	return ""
}

// markForDeletion records a deletion on the stored object, as kube's
// updateForGracefulDeletionAndFinalizers: a graceful one's deadline, or
// (with finalizers to wait for) deletionTimestamp now and no grace; the
// propagation policy's finalizer; the kind's own marks (a namespace's
// Terminating phase). deleteNow reports that nothing holds the object: its
// grace is 0 and no finalizer waits.
func (s *Store) markForDeletion(ctx context.Context, key string, pre *storage.Preconditions, opts *metav1.DeleteOptions) (out runtime.Object, deleteNow bool, err error) {
	var grace int64
	var finalizing bool
	mark := func(input runtime.Object) (runtime.Object, error) {
		obj := s.copyObject(input)
		acc, err := meta.Accessor(obj)
		if err != nil {
			return nil, apierrors.NewInternalError(err)
		}
		try := opts.DeepCopy()
		graceful, pending := s.beforeDelete(obj, try)
		if pending {
			return nil, errAlreadyDeleting
		}
		if f := propagationFinalizer(opts); f != "" {
			acc.SetFinalizers(withFinalizer(acc.GetFinalizers(), f))
		}
		finalizing = s.waitsForFinalizers(obj)
		if s.PrepareForDeletion != nil {
			s.PrepareForDeletion(obj)
		}
		if graceful {
			grace = *try.GracePeriodSeconds
			return obj, nil
		}
		if !finalizing {
			return nil, errDeleteNow
		}
		if acc.GetDeletionTimestamp() == nil {
			now := metav1.NewTime(time.Now().Truncate(time.Second))
			acc.SetDeletionTimestamp(&now)
			// Its controllers must see the change (kube's markAsDeleting).
			if g := acc.GetGeneration(); g > 0 {
				acc.SetGeneration(g + 1)
			}
		}
		acc.SetDeletionGracePeriodSeconds(ptr.To[int64](0))
		return obj, nil
	}
	if isDryRun(opts.DryRun) {
		current := s.NewFunc()
		if err := s.Storage.Get(ctx, key, storage.GetOptions{}, current); err != nil {
			return nil, false, err
		}
		out, err = mark(current)
	} else {
		out = s.NewFunc()
		err = s.storageUpdate(ctx, key, out, false, pre, "", mark)
	}
	switch {
	case errors.Is(err, errDeleteNow):
		return nil, true, nil
	case err != nil:
		return nil, false, err
	}
	return out, !finalizing && grace == 0, nil
}

func withFinalizer(finalizers []string, f string) []string {
	for _, have := range finalizers {
		if have == f {
			return finalizers
		}
	}
	// The two propagation finalizers exclude each other.
	out := make([]string, 0, len(finalizers)+1)
	for _, have := range finalizers {
		if have != metav1.FinalizerOrphanDependents && have != metav1.FinalizerDeleteDependents {
			out = append(out, have)
		}
	}
	return append(out, f)
}

// DeleteCollection deletes every object matching listOpts and returns the
// list of what was deleted or marked for deletion.
func (s *Store) DeleteCollection(ctx context.Context, namespace string, opts *metav1.DeleteOptions, listOpts metav1.ListOptions) (runtime.Object, error) {
	listOpts.Limit, listOpts.Continue = 0, ""
	list, err := s.List(ctx, namespace, listOpts)
	if err != nil {
		return nil, err
	}
	items, err := meta.ExtractList(list)
	if err != nil {
		return nil, apierrors.NewInternalError(err)
	}
	var done []runtime.Object
	for _, item := range items {
		acc, err := meta.Accessor(item)
		if err != nil {
			return nil, apierrors.NewInternalError(err)
		}
		itemOpts := opts.DeepCopy()
		if itemOpts == nil {
			itemOpts = &metav1.DeleteOptions{}
		}
		// Preconditions name one object; a collection delete ignores them.
		itemOpts.Preconditions = nil
		obj, _, err := s.Delete(ctx, acc.GetNamespace(), acc.GetName(), itemOpts)
		if apierrors.IsNotFound(err) {
			continue
		}
		if err != nil {
			return nil, err
		}
		done = append(done, obj)
	}
	out := s.NewListFunc()
	if err := meta.SetList(out, done); err != nil {
		return nil, apierrors.NewInternalError(err)
	}
	return out, nil
}

// DeletedStatus is the Success Status kube returns for an immediate delete.
func (s *Store) DeletedStatus(obj runtime.Object) *metav1.Status {
	st := &metav1.Status{Status: metav1.StatusSuccess}
	if acc, err := meta.Accessor(obj); err == nil {
		st.Details = &metav1.StatusDetails{Name: acc.GetName(), Group: s.Resource.Group, Kind: s.Resource.Resource, UID: acc.GetUID()}
	}
	return st
}

// pendingHook holds the outcome callbacks of an update hook until the
// update is stored (commit) or abandoned (rollback).
type pendingHook struct{ commit, rollback func() }

func (p *pendingHook) discard() {
	if p.rollback != nil {
		p.rollback()
	}
	*p = pendingHook{}
}

func (p *pendingHook) done() {
	if p.commit != nil {
		p.commit()
	}
	*p = pendingHook{}
}

// Hooks are a kind's side effects around storage.
type Hooks struct {
	// BeforeCreate runs after defaulting, before validation; rollback (may
	// be nil) undoes it when the object is not stored.
	BeforeCreate func(ctx context.Context, obj runtime.Object) (rollback func(), err error)
	// BeforeUpdate runs on the merged object before validation; exactly one
	// of commit or rollback (either may be nil) runs afterwards.
	BeforeUpdate func(ctx context.Context, obj, old runtime.Object) (commit, rollback func(), err error)
	// AfterDelete runs once the object is gone from storage.
	AfterDelete func(ctx context.Context, obj runtime.Object)
}

func (s *Store) afterDelete(ctx context.Context, obj runtime.Object) {
	if s.Hooks.AfterDelete != nil && obj != nil {
		s.Hooks.AfterDelete(ctx, obj)
	}
}
