package registry

import (
	"context"

	autoscalingv1 "k8s.io/api/autoscaling/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/util/validation/field"

	"github.com/devplane/devplane/apiserver/storage"
)

// ScaleTransformFunc computes the requested Scale from the current one.
type ScaleTransformFunc func(ctx context.Context, current *autoscalingv1.Scale) (*autoscalingv1.Scale, error)

func (s *Store) scaleOf(obj runtime.Object) *autoscalingv1.Scale {
	sc := s.Scale.Get(obj)
	sc.APIVersion, sc.Kind = autoscalingv1.SchemeGroupVersion.String(), "Scale"
	if acc, err := meta.Accessor(obj); err == nil {
		sc.ResourceVersion = acc.GetResourceVersion()
		sc.UID = acc.GetUID()
		sc.CreationTimestamp = acc.GetCreationTimestamp()
	}
	return sc
}

// GetScale returns the scale subresource of an object.
func (s *Store) GetScale(ctx context.Context, namespace, name string, opts metav1.GetOptions) (*autoscalingv1.Scale, error) {
	if s.Scale == nil {
		return nil, apierrors.NewNotFound(s.Resource, name)
	}
	obj, err := s.Get(ctx, namespace, name, opts)
	if err != nil {
		return nil, err
	}
	return s.scaleOf(obj), nil
}

// UpdateScale sets spec.replicas from the requested Scale. A Scale with a
// resourceVersion other than the object's is a conflict.
func (s *Store) UpdateScale(ctx context.Context, namespace, name string, transform ScaleTransformFunc,
	opts metav1.UpdateOptions) (*autoscalingv1.Scale, error) {
	if s.Scale == nil {
		return nil, apierrors.NewNotFound(s.Resource, name)
	}
	ctx = withAdmissionDryRun(ctx, opts.DryRun)
	tryUpdate := func(current runtime.Object) (runtime.Object, error) {
		requested, err := transform(ctx, s.scaleOf(current))
		if err != nil {
			return nil, err
		}
		if requested.Name != "" && requested.Name != name {
			return nil, apierrors.NewBadRequest("the name of the object (" + requested.Name +
				") does not match the name on the URL (" + name + ")")
		}
		curAcc, _ := meta.Accessor(current)
		if rv := requested.ResourceVersion; rv != "" && rv != curAcc.GetResourceVersion() {
			return nil, conflict(s.Resource, name)
		}
		if requested.Spec.Replicas < 0 {
			return nil, apierrors.NewInvalid(autoscalingv1.SchemeGroupVersion.WithKind("Scale").GroupKind(), name, field.ErrorList{
				field.Invalid(field.NewPath("spec", "replicas"), requested.Spec.Replicas, "must be greater than or equal to 0")})
		}
		updated := current.DeepCopyObject()
		s.Scale.Set(updated, requested.Spec.Replicas)
		// Scalable kinds have no update hooks, so nothing is pending.
		return s.prepareUpdate(ctx, updated, current, "", &pendingHook{})
	}
	key := s.Key(namespace, name)
	out := s.NewFunc()
	if isDryRun(opts.DryRun) {
		if err := s.Storage.Get(ctx, key, storage.GetOptions{}, out); err != nil {
			return nil, err
		}
		updated, err := tryUpdate(out)
		if err != nil {
			return nil, err
		}
		return s.scaleOf(updated), nil
	}
	if err := s.storageUpdate(ctx, key, out, false, nil, "scale", tryUpdate); err != nil {
		return nil, err
	}
	return s.scaleOf(out), nil
}
