package crdschema

import (
	"context"

	"k8s.io/apiextensions-apiserver/pkg/apis/apiextensions"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	"k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/validation"
	"k8s.io/apimachinery/pkg/util/validation/field"
)

// DefaultCRD applies the apiextensions.k8s.io/v1 defaults (singular, listKind,
// conversion strategy None, service port 443, storedVersions) in place, as the
// API server does when decoding a CRD.
func DefaultCRD(crd *apiextensionsv1.CustomResourceDefinition) {
	apiextensionsv1.SetObjectDefaults_CustomResourceDefinition(crd)
}

// ValidateCRD validates a CRD for creation. A non-structural schema is
// rejected with the same field errors kube returns. Call DefaultCRD first.
func ValidateCRD(crd *apiextensionsv1.CustomResourceDefinition) field.ErrorList {
	internal, err := readOnlyInternal(crd)
	if err != nil {
		return field.ErrorList{field.InternalError(nil, err)}
	}
	return validation.ValidateCustomResourceDefinition(context.Background(), internal)
}

// ValidateCRDUpdate validates an update of old into crd; it ratchets rules
// that were already violated by old, as kube does.
func ValidateCRDUpdate(crd, old *apiextensionsv1.CustomResourceDefinition) field.ErrorList {
	internal, err := readOnlyInternal(crd)
	if err != nil {
		return field.ErrorList{field.InternalError(nil, err)}
	}
	internalOld, err := readOnlyInternal(old)
	if err != nil {
		return field.ErrorList{field.InternalError(nil, err)}
	}
	return validation.ValidateCustomResourceDefinitionUpdate(context.Background(), internal, internalOld)
}

// ValidateCRDStatusUpdate is kube's status strategy: the metadata update
// and the status, never the spec (a status update keeps the stored spec,
// and revalidating its schemas would cost far more than the write).
func ValidateCRDStatusUpdate(crd, old *apiextensionsv1.CustomResourceDefinition) field.ErrorList {
	internal, err := metaAndStatusToInternal(crd)
	if err != nil {
		return field.ErrorList{field.InternalError(nil, err)}
	}
	internalOld, err := metaAndStatusToInternal(old)
	if err != nil {
		return field.ErrorList{field.InternalError(nil, err)}
	}
	return validation.ValidateUpdateCustomResourceDefinitionStatus(context.Background(), internal, internalOld)
}

// metaAndStatusToInternal converts a CRD without its spec.
func metaAndStatusToInternal(crd *apiextensionsv1.CustomResourceDefinition) (*apiextensions.CustomResourceDefinition, error) {
	shell := &apiextensionsv1.CustomResourceDefinition{TypeMeta: crd.TypeMeta,
		ObjectMeta: *crd.ObjectMeta.DeepCopy(), Status: *crd.Status.DeepCopy()}
	out := &apiextensions.CustomResourceDefinition{}
	if err := apiextensionsv1.Convert_v1_CustomResourceDefinition_To_apiextensions_CustomResourceDefinition(shell, out, nil); err != nil {
		return nil, err
	}
	return out, nil
}

// readOnlyInternal is toInternal without the copy, for validation, which
// only reads: the result may share memory with crd (the generated
// conversions alias what has the same layout). A 50 KB schema's copy is a
// good part of a CRD create's time, and an update would copy two.
func readOnlyInternal(crd *apiextensionsv1.CustomResourceDefinition) (*apiextensions.CustomResourceDefinition, error) {
	out := &apiextensions.CustomResourceDefinition{}
	if err := apiextensionsv1.Convert_v1_CustomResourceDefinition_To_apiextensions_CustomResourceDefinition(crd, out, nil); err != nil {
		return nil, err
	}
	return out, nil
}

func toInternal(crd *apiextensionsv1.CustomResourceDefinition) (*apiextensions.CustomResourceDefinition, error) {
	// Converted from a copy: the result may share memory with its input,
	// and callers may change it.
	return readOnlyInternal(crd.DeepCopy())
}
