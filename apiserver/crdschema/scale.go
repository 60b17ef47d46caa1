package crdschema

import (
	"fmt"
	"math"
	"strings"

	autoscalingv1 "k8s.io/api/autoscaling/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/util/validation/field"
)

// ErrNoScale is returned by the scale helpers when the version has no /scale subresource.
var ErrNoScale = fmt.Errorf("the scale subresource is not enabled")

// GetScale reads the object's autoscaling/v1 Scale through the CRD's
// specReplicasPath, statusReplicasPath and labelSelectorPath. Missing
// replicas read as 0, as in kube.
func (v *Version) GetScale(obj *unstructured.Unstructured) (*autoscalingv1.Scale, error) {
	s := v.ScaleSubresource
	if s == nil {
		return nil, ErrNoScale
	}
	specReplicas, _, err := unstructured.NestedInt64(obj.Object, pathFields(s.SpecReplicasPath)...)
	if err != nil {
		return nil, err
	}
	statusReplicas, _, err := unstructured.NestedInt64(obj.Object, pathFields(s.StatusReplicasPath)...)
	if err != nil {
		return nil, err
	}
	var selector string
	if s.LabelSelectorPath != nil && *s.LabelSelectorPath != "" {
		if selector, _, err = unstructured.NestedString(obj.Object, pathFields(*s.LabelSelectorPath)...); err != nil {
			return nil, err
		}
	}
	return &autoscalingv1.Scale{
		TypeMeta: metav1.TypeMeta{APIVersion: "autoscaling/v1", Kind: "Scale"},
		ObjectMeta: metav1.ObjectMeta{
			Name:              obj.GetName(),
			Namespace:         obj.GetNamespace(),
			UID:               obj.GetUID(),
			ResourceVersion:   obj.GetResourceVersion(),
			CreationTimestamp: obj.GetCreationTimestamp(),
		},
		Spec:   autoscalingv1.ScaleSpec{Replicas: int32(specReplicas)},
		Status: autoscalingv1.ScaleStatus{Replicas: int32(statusReplicas), Selector: selector},
	}, nil
}

// SetReplicas writes replicas at the CRD's specReplicasPath, creating
// intermediate objects as needed (a PUT to /scale).
func (v *Version) SetReplicas(obj *unstructured.Unstructured, replicas int32) error {
	if v.ScaleSubresource == nil {
		return ErrNoScale
	}
	return unstructured.SetNestedField(obj.Object, int64(replicas), pathFields(v.ScaleSubresource.SpecReplicasPath)...)
}

// validateScale checks the replicas paths hold int32s and the selector a string.
func (v *Version) validateScale(obj *unstructured.Unstructured, checkSpec bool) field.ErrorList {
	s := v.ScaleSubresource
	if s == nil {
		return nil
	}
	var errs field.ErrorList
	checkReplicas := func(path string) {
		n, _, err := unstructured.NestedInt64(obj.Object, pathFields(path)...)
		switch {
		case err != nil:
			errs = append(errs, field.Invalid(field.NewPath(path), n, err.Error()))
		case n < 0:
			errs = append(errs, field.Invalid(field.NewPath(path), n, "should be a non-negative integer"))
		case n > math.MaxInt32:
			errs = append(errs, field.Invalid(field.NewPath(path), n, fmt.Sprintf("should be less than or equal to %v", math.MaxInt32)))
		}
	}
	if checkSpec {
		checkReplicas(s.SpecReplicasPath)
	}
	checkReplicas(s.StatusReplicasPath)
	if s.LabelSelectorPath != nil && *s.LabelSelectorPath != "" {
		if sel, _, err := unstructured.NestedString(obj.Object, pathFields(*s.LabelSelectorPath)...); err != nil {
			errs = append(errs, field.Invalid(field.NewPath(*s.LabelSelectorPath), sel, err.Error()))
		}
	}
	return errs
}

// pathFields splits a scale JSONPath like ".spec.replicas"; the CRD
// validation only admits simple dotted paths here.
func pathFields(path string) []string {
	return strings.Split(strings.TrimPrefix(path, "."), ".")
}
