package storage

import (
	"context"
	"fmt"
	"reflect"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/watch"
)

// Conversion turns a kind's served version into its stored one and back.
type Conversion struct {
	// NewStored and NewStoredList make empty objects of the stored version.
	NewStored, NewStoredList func() runtime.Object
	// ToStored converts a served object; current is the stored object it
	// replaces (nil on create), so fields the served version cannot express
	// are kept.
	ToStored func(served, current runtime.Object) (runtime.Object, error)
	// FromStored converts a stored object to the served version.
	FromStored func(stored runtime.Object) (runtime.Object, error)
}

// Converting serves one version of a kind from the storage (and watch
// cache) of another, as kube-apiserver serves autoscaling/v1 HPAs from the
// autoscaling/v2 ones: every object is converted on its way in and out, so
// both versions see the same objects.
type Converting struct {
	under Interface
	conv  Conversion
}

var _ Interface = (*Converting)(nil)

// NewConverting serves under's objects through conv.
func NewConverting(under Interface, conv Conversion) *Converting {
	return &Converting{under: under, conv: conv}
}

// setInto copies the converted object into the caller's out.
func setInto(out, obj runtime.Object) error {
	dst, src := reflect.ValueOf(out), reflect.ValueOf(obj)
	if dst.Kind() != reflect.Pointer || src.Type() != dst.Type() {
		return apierrors.NewInternalError(fmt.Errorf("converted %T, caller wants %T", obj, out))
	}
	dst.Elem().Set(src.Elem())
	return nil
}

func (c *Converting) served(stored runtime.Object, out runtime.Object) error {
	obj, err := c.conv.FromStored(stored)
	if err != nil {
		return apierrors.NewInternalError(err)
	}
	return setInto(out, obj)
}

// isEmpty is an object that was never stored (no resourceVersion).
func isEmpty(obj runtime.Object) bool {
	acc, err := meta.Accessor(obj)
	return err != nil || acc.GetResourceVersion() == ""
}

func (c *Converting) Create(ctx context.Context, key string, obj, out runtime.Object, ttl int64) error {
	stored, err := c.conv.ToStored(obj, nil)
	if err != nil {
		return apierrors.NewBadRequest(err.Error())
	}
	tmp := c.conv.NewStored()
	if err := c.under.Create(ctx, key, stored, tmp, ttl); err != nil {
		return err
	}
	if out == nil {
		return nil
	}
	return c.served(tmp, out)
}

func (c *Converting) Get(ctx context.Context, key string, opts GetOptions, out runtime.Object) error {
	tmp := c.conv.NewStored()
	if err := c.under.Get(ctx, key, opts, tmp); err != nil {
		return err
	}
	if isEmpty(tmp) { // IgnoreNotFound
		return nil
	}
	return c.served(tmp, out)
}

func (c *Converting) GetList(ctx context.Context, key string, opts ListOptions, listObj runtime.Object) error {
	tmp := c.conv.NewStoredList()
	// The cache's encodings are of the stored version: not for this list.
	if err := c.under.GetList(WithEncodedItems(ctx, nil), key, opts, tmp); err != nil {
		return err
	}
	items, err := meta.ExtractList(tmp)
	if err != nil {
		return apierrors.NewInternalError(err)
	}
	served := make([]runtime.Object, len(items))
	for i, item := range items {
		if served[i], err = c.conv.FromStored(item); err != nil {
			return apierrors.NewInternalError(err)
		}
	}
	if err := meta.SetList(listObj, served); err != nil {
		return apierrors.NewInternalError(err)
	}
	from, err := meta.ListAccessor(tmp)
	if err != nil {
		return apierrors.NewInternalError(err)
	}
	to, err := meta.ListAccessor(listObj)
	if err != nil {
		return apierrors.NewInternalError(err)
	}
	to.SetResourceVersion(from.GetResourceVersion())
	to.SetContinue(from.GetContinue())
	to.SetRemainingItemCount(from.GetRemainingItemCount())
	return nil
}

func (c *Converting) GuaranteedUpdate(ctx context.Context, key string, out runtime.Object, ignoreNotFound bool,
	preconditions *Preconditions, tryUpdate UpdateFunc) error {
	tmp := c.conv.NewStored()
	err := c.under.GuaranteedUpdate(ctx, key, tmp, ignoreNotFound, preconditions, func(in runtime.Object) (runtime.Object, error) {
		current := in
		var served runtime.Object
		if isEmpty(in) {
			current = nil
			served = reflect.New(reflect.TypeOf(out).Elem()).Interface().(runtime.Object)
		} else {
			var err error
			if served, err = c.conv.FromStored(in); err != nil {
				return nil, apierrors.NewInternalError(err)
			}
		}
		updated, err := tryUpdate(served)
		if err != nil {
			return nil, err
		}
		stored, err := c.conv.ToStored(updated, current)
		if err != nil {
			return nil, apierrors.NewBadRequest(err.Error())
		}
		return stored, nil
	})
	if err != nil {
		return err
	}
	return c.served(tmp, out)
}

func (c *Converting) Delete(ctx context.Context, key string, out runtime.Object, preconditions *Preconditions,
	validateDeletion func(ctx context.Context, obj runtime.Object) error) error {
	var validate func(ctx context.Context, obj runtime.Object) error
	if validateDeletion != nil {
		validate = func(ctx context.Context, obj runtime.Object) error {
			served, err := c.conv.FromStored(obj)
			if err != nil {
				return apierrors.NewInternalError(err)
			}
			return validateDeletion(ctx, served)
		}
	}
	tmp := c.conv.NewStored()
	if err := c.under.Delete(ctx, key, tmp, preconditions, validate); err != nil {
		return err
	}
	if out == nil {
		return nil
	}
	return c.served(tmp, out)
}

func (c *Converting) Watch(ctx context.Context, key string, opts ListOptions) (watch.Interface, error) {
	w, err := c.under.Watch(ctx, key, opts)
	if err != nil {
		return nil, err
	}
	return watch.Filter(w, func(ev watch.Event) (watch.Event, bool) {
		if ev.Type == watch.Error {
			return ev, true
		}
		served, err := c.conv.FromStored(ev.Object)
		if err != nil {
			st := apierrors.NewInternalError(err).ErrStatus
			return watch.Event{Type: watch.Error, Object: &st}, true
		}
		ev.Object = served
		return ev, true
	}), nil
}

func (c *Converting) CurrentRevision(ctx context.Context) (int64, error) {
	return c.under.CurrentRevision(ctx)
}
