package extensions

import (
	"context"
	"fmt"
	goruntime "runtime"
	"sync"

	autoscalingv1 "k8s.io/api/autoscaling/v1"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/managedfields"
	"k8s.io/apimachinery/pkg/util/validation/field"

	"github.com/devplane/devplane/apiserver/crdschema"
	"github.com/devplane/devplane/apiserver/patch"
	"github.com/devplane/devplane/apiserver/registry"
	"github.com/devplane/devplane/apiserver/storage"
)

// servedCRD is what is served for one CRD: one watch cache over its etcd
// prefix (objects in whatever version they were written) and one Resource
// per served version.
type servedCRD struct {
	uid        types.UID
	key        string // what the served resources were built from
	cacher     *storage.Cacher
	prefix     string
	gvrs       []schema.GroupVersionResource
	versions   map[string]*servedVersion // by version name, served or not
	storageVer string
	crd        *apiextensionsv1.CustomResourceDefinition
	// terminating: the CRD is being deleted; creates are refused.
	terminating bool
}

// servedVersion is one version of a served CRD.
type servedVersion struct {
	crd     *servedCRD
	v       *crdschema.Version
	res     *registry.Resource
	served  bool
	storage bool
}

// servingKey changes whenever what is served for crd must be rebuilt.
func servingKey(crd *apiextensionsv1.CustomResourceDefinition) string {
	n := crd.Status.AcceptedNames
	return fmt.Sprintf("%s/%d/%s/%s/%s/%v/%v", crd.UID, crd.Generation, n.Plural, n.Singular, n.Kind, n.ShortNames, n.Categories)
}

func newUnstructured(gvk schema.GroupVersionKind) func() runtime.Object {
	return func() runtime.Object {
		u := &unstructured.Unstructured{}
		u.SetGroupVersionKind(gvk)
		return u
	}
}

func newUnstructuredList(gvk schema.GroupVersionKind) func() runtime.Object {
	return func() runtime.Object {
		u := &unstructured.UnstructuredList{}
		u.SetGroupVersionKind(gvk)
		return u
	}
}

// buildServed compiles every version of crd (names from acceptedNames) over
// the shared cache; prev's cache is reused when there is one.
func (e *Extensions) buildServed(crd *apiextensionsv1.CustomResourceDefinition, prev *servedCRD) (*servedCRD, error) {
	names := crd.Status.AcceptedNames
	group := crd.Spec.Group
	sc := &servedCRD{uid: crd.UID, key: servingKey(crd), versions: map[string]*servedVersion{},
		storageVer: storageVersion(crd), crd: crd,
		prefix: "/registry/" + group + "/" + crd.Spec.Names.Plural}
	if prev != nil && prev.uid == crd.UID && prev.prefix == sc.prefix {
		sc.cacher = prev.cacher
		sc.terminating = prev.terminating
	} else {
		cfg := storage.Config{
			Resource:       schema.GroupResource{Group: group, Resource: crd.Spec.Names.Plural},
			Codec:          unstructured.UnstructuredJSONScheme,
			NewFunc:        func() runtime.Object { return &unstructured.Unstructured{} },
			NewListFunc:    func() runtime.Object { return &unstructured.UnstructuredList{} },
			ResourcePrefix: sc.prefix,
			GetAttrs:       metaAttrs,
		}
		cacher, err := storage.NewCacher(storage.NewStore(e.deps.Client, cfg), cfg,
			storage.CacherOptions{Logger: e.logger.With("component", "watch-cache", "resource", cfg.Resource.String())})
		if err != nil {
			return nil, err
		}
		sc.cacher = cacher
	}
	conv, err := crdschema.NewConverter(crd, e.resolveService)
	if err != nil {
		return sc, err
	}
	for _, cv := range crd.Spec.Versions {
		v, err := crdschema.Compile(crd, cv.Name)
		if err != nil {
			return sc, fmt.Errorf("compiling %s version %s: %w", crd.Name, cv.Name, err)
		}
		gvr := schema.GroupVersionResource{Group: group, Version: cv.Name, Resource: names.Plural}
		gvk := schema.GroupVersionKind{Group: group, Version: cv.Name, Kind: names.Kind}
		st := &versionStorage{under: sc.cacher, v: v, conv: conv, storageVersion: sc.storageVer,
			gvk: gvk, listGVK: gvk.GroupVersion().WithKind(names.ListKind), deterministic: crdschema.IsDeterministic(conv)}
		store := &registry.Store{
			Resource:    gvr.GroupResource(),
			Kind:        gvk,
			Namespaced:  v.NamespaceScoped,
			HasStatus:   v.StatusEnabled,
			Storage:     st,
			KeyPrefix:   sc.prefix,
			NewFunc:     newUnstructured(gvk),
			NewListFunc: newUnstructuredList(st.listGVK),
			Strategy: registry.Strategy{
				Default: func(obj runtime.Object) {
					u := obj.(*unstructured.Unstructured)
					normalizeNumbers(u.Object)
					_, _ = v.Prune(u)
					v.Default(u)
				},
				Validate: func(obj runtime.Object) field.ErrorList {
					return v.Validate(context.Background(), obj.(*unstructured.Unstructured), nil)
				},
				ValidateUpdate: func(obj, old runtime.Object) field.ErrorList {
					return v.Validate(context.Background(), obj.(*unstructured.Unstructured), old.(*unstructured.Unstructured))
				},
				// kube's custom resource strategy: 1 on create, bumped by any
				// change but metadata's.
				Generation: registry.Generation{OnCreate: true, Changed: registry.ContentChanged},
			},
			GetAttrs: metaAttrs,
		}
		var scale *registry.ScaleFuncs
		if v.ScaleSubresource != nil {
			scale = &registry.ScaleFuncs{
				Get: func(obj runtime.Object) *autoscalingv1.Scale {
					s, err := v.GetScale(obj.(*unstructured.Unstructured))
					if err != nil || s == nil {
						return &autoscalingv1.Scale{}
					}
					return s
				},
				Set: func(obj runtime.Object, replicas int32) {
					_ = v.SetReplicas(obj.(*unstructured.Unstructured), replicas)
				},
			}
			store.Scale = scale
		}
		res := &registry.Resource{
			GVR:          gvr,
			Kind:         names.Kind,
			ListKind:     names.ListKind,
			Singular:     names.Singular,
			ShortNames:   names.ShortNames,
			Categories:   names.Categories,
			Namespaced:   v.NamespaceScoped,
			Verbs:        registry.DefaultVerbs,
			HasStatus:    v.StatusEnabled,
			Scale:        scale,
			New:          store.NewFunc,
			NewList:      store.NewListFunc,
			Store:        store,
			Table:        v,
			GetAttrs:     metaAttrs,
			Custom:       true,
			FieldManager: patch.NewCustomFieldManager(gvk, func() managedfields.TypeConverter { return patch.CustomResourceTypeConverter(v) }),
		}
		if v.StatusEnabled {
			// kube's custom resource strategies: the main resource resets
			// the status, /status the spec.
			res.FieldManager.ResetOn("", "status")
			res.FieldManager.ResetOn("status", "spec")
		}
		if !v.PreserveUnknownFields {
			res.UnknownFields = func(u *unstructured.Unstructured) []string {
				unknown, _ := v.Prune(u.DeepCopy())
				return unknown
			}
		}
		sv := &servedVersion{crd: sc, v: v, res: res, served: cv.Served, storage: cv.Storage}
		sc.versions[cv.Name] = sv
		if cv.Served {
			sc.gvrs = append(sc.gvrs, gvr)
		}
	}
	return sc, nil
}

// storageStore is the Store of the storage version (served or not), used to
// delete every custom resource of a CRD.
func (sc *servedCRD) storageStore() *registry.Store {
	if sv, ok := sc.versions[sc.storageVer]; ok {
		return sv.res.Store
	}
	return nil
}

// versionStorage serves one version of a CRD from the CRD's cache: reads are
// converted to the version, pruned and defaulted (kube does both on read);
// writes are converted to the storage version.
type versionStorage struct {
	under          storage.Interface
	v              *crdschema.Version
	conv           crdschema.Converter
	storageVersion string
	gvk, listGVK   schema.GroupVersionKind
	// deterministic: no conversion webhook, so served forms can be memoized.
	deterministic bool
	memo          servedMemo
}

var _ storage.Interface = (*versionStorage)(nil)

// Observe follows the objects as stored: an observer reads metadata only
// (the garbage collector), the same in every version.
func (s *versionStorage) Observe(o *storage.Observer) (func(), bool) {
	if obs, ok := s.under.(storage.Observable); ok {
		return obs.Observe(o)
	}
	return nil, false
}

// Versions reads an object's past versions as etcd holds them, in the
// storage version (object history shows what was stored).
func (s *versionStorage) Versions(ctx context.Context, key string, deletedAt []int64, limit int) ([]storage.Version, bool, bool, error) {
	v, ok := s.under.(storage.Versioned)
	if !ok {
		return nil, false, false, apierrors.NewInternalError(fmt.Errorf("%s: no history", s.gvk.Kind))
	}
	return v.Versions(ctx, key, deletedAt, limit)
}

func conversionError(err error) error {
	if _, ok := err.(apierrors.APIStatus); ok {
		return err
	}
	return apierrors.NewInternalError(err)
}

// toServed converts stored objects to this version (new objects: the
// inputs may be shared with the cache).
func (s *versionStorage) toServed(ctx context.Context, objs []*unstructured.Unstructured) ([]*unstructured.Unstructured, error) {
	out, err := s.conv.Convert(ctx, objs, s.v.Name())
	if err != nil {
		return nil, conversionError(err)
	}
	serve := func(i int) {
		c := out[i].DeepCopy()
		_ = s.v.PruneStored(c)
		s.v.Default(c)
		c.SetGroupVersionKind(s.gvk)
		out[i] = c
	}
	// A first list after a restart serves every object once (the memo
	// keeps the results): on every core when there are many.
	workers := min(goruntime.GOMAXPROCS(0), len(out)/64)
	if workers < 2 {
		for i := range out {
			serve(i)
		}
		return out, nil
	}
	var wg sync.WaitGroup
	for w := range workers {
		wg.Go(func() {
			for i := w; i < len(out); i += workers {
				serve(i)
			}
		})
	}
	wg.Wait()
	return out, nil
}

func (s *versionStorage) toServedOne(ctx context.Context, obj *unstructured.Unstructured) (*unstructured.Unstructured, error) {
	out, err := s.toServed(ctx, []*unstructured.Unstructured{obj})
	if err != nil {
		return nil, err
	}
	return out[0], nil
}

func (s *versionStorage) toStorage(ctx context.Context, obj runtime.Object) (*unstructured.Unstructured, error) {
	u, ok := obj.(*unstructured.Unstructured)
	if !ok {
		return nil, apierrors.NewInternalError(fmt.Errorf("expected an unstructured object, got %T", obj))
	}
	if u.GetAPIVersion() == "" {
		u.SetGroupVersionKind(s.gvk)
	}
	out, err := s.conv.Convert(ctx, []*unstructured.Unstructured{u}, s.storageVersion)
	if err != nil {
		return nil, conversionError(err)
	}
	return out[0], nil
}

func setInto(out runtime.Object, u *unstructured.Unstructured) {
	if dst, ok := out.(*unstructured.Unstructured); ok {
		*dst = *u
	}
}

func (s *versionStorage) Create(ctx context.Context, key string, obj, out runtime.Object, ttl int64) error {
	stored, err := s.toStorage(ctx, obj)
	if err != nil {
		return err
	}
	tmp := &unstructured.Unstructured{}
	if err := s.under.Create(ctx, key, stored, tmp, ttl); err != nil {
		return err
	}
	served, err := s.toServedOne(ctx, tmp)
	if err != nil {
		return err
	}
	setInto(out, served)
	return nil
}

func (s *versionStorage) Get(ctx context.Context, key string, opts storage.GetOptions, out runtime.Object) error {
	tmp := &unstructured.Unstructured{}
	if err := s.under.Get(ctx, key, opts, tmp); err != nil {
		return err
	}
	if len(tmp.Object) == 0 { // IgnoreNotFound
		setInto(out, tmp)
		return nil
	}
	served, err := s.toServedOne(ctx, tmp)
	if err != nil {
		return err
	}
	setInto(out, served)
	return nil
}

func (s *versionStorage) GetList(ctx context.Context, key string, opts storage.ListOptions, listObj runtime.Object) error {
	tmp := &unstructured.UnstructuredList{}
	if err := s.under.GetList(ctx, key, opts, tmp); err != nil {
		return err
	}
	objs := make([]*unstructured.Unstructured, len(tmp.Items))
	for i := range tmp.Items {
		objs[i] = &tmp.Items[i]
	}
	// A list the cache served holds the cached objects' content: memoized.
	served, entries, err := s.toServedShared(ctx, objs)
	if err != nil {
		return err
	}
	if enc, ok := storage.EncodedItemsFrom(ctx); ok && enc.WantJSON && entries != nil {
		enc.JSON = make([][]byte, len(entries))
		for i, e := range entries {
			if enc.JSON[i], err = e.JSON(); err != nil {
				enc.JSON = nil
				break
			}
		}
	}
	list, ok := listObj.(*unstructured.UnstructuredList)
	if !ok {
		return apierrors.NewInternalError(fmt.Errorf("expected an unstructured list, got %T", listObj))
	}
	if md, ok := tmp.Object["metadata"]; ok {
		if list.Object == nil {
			list.Object = map[string]interface{}{}
		}
		list.Object["metadata"] = md
	}
	list.SetGroupVersionKind(s.listGVK)
	list.Items = make([]unstructured.Unstructured, len(served))
	for i, u := range served {
		list.Items[i] = *u
	}
	return nil
}

func (s *versionStorage) GuaranteedUpdate(ctx context.Context, key string, out runtime.Object, ignoreNotFound bool,
	preconditions *storage.Preconditions, tryUpdate storage.UpdateFunc) error {
	tmp := &unstructured.Unstructured{}
	err := s.under.GuaranteedUpdate(ctx, key, tmp, ignoreNotFound, preconditions, func(input runtime.Object) (runtime.Object, error) {
		in := input.(*unstructured.Unstructured)
		var current *unstructured.Unstructured
		if len(in.Object) == 0 {
			current = &unstructured.Unstructured{}
			current.SetGroupVersionKind(s.gvk)
		} else {
			var err error
			if current, err = s.toServedOne(ctx, in); err != nil {
				return nil, err
			}
		}
		updated, err := tryUpdate(current)
		if err != nil {
			return nil, err
		}
		return s.toStorage(ctx, updated)
	})
	if err != nil {
		return err
	}
	served, err := s.toServedOne(ctx, tmp)
	if err != nil {
		return err
	}
	setInto(out, served)
	return nil
}

func (s *versionStorage) Delete(ctx context.Context, key string, out runtime.Object, preconditions *storage.Preconditions,
	validateDeletion func(ctx context.Context, obj runtime.Object) error) error {
	var validate func(ctx context.Context, obj runtime.Object) error
	if validateDeletion != nil {
		validate = func(ctx context.Context, obj runtime.Object) error {
			served, err := s.toServedOne(ctx, obj.(*unstructured.Unstructured))
			if err != nil {
				return err
			}
			return validateDeletion(ctx, served)
		}
	}
	tmp := &unstructured.Unstructured{}
	if err := s.under.Delete(ctx, key, tmp, preconditions, validate); err != nil {
		return err
	}
	served, err := s.toServedOne(ctx, tmp)
	if err != nil {
		// The object is gone; answer with what was stored.
		served = tmp
	}
	setInto(out, served)
	return nil
}

func (s *versionStorage) CurrentRevision(ctx context.Context) (int64, error) {
	return s.under.CurrentRevision(ctx)
}

// normalizeNumbers turns whole float64 values into int64, as the JSON
// decoder of a request produces them: objects built by other paths (apply)
// may carry float64 integers that the schema would reject.
func normalizeNumbers(v interface{}) interface{} {
	switch t := v.(type) {
	case map[string]interface{}:
		for k, x := range t {
			t[k] = normalizeNumbers(x)
		}
	case []interface{}:
		for i, x := range t {
			t[i] = normalizeNumbers(x)
		}
	case float64:
		if t == float64(int64(t)) && t >= -(1<<53) && t <= 1<<53 {
			return int64(t)
		}
	}
	return v
}
