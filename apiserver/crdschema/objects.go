package crdschema

import (
	"context"
	"fmt"

	structuralschema "k8s.io/apiextensions-apiserver/pkg/apiserver/schema"
	"k8s.io/apiextensions-apiserver/pkg/apiserver/schema/cel"
	"k8s.io/apiextensions-apiserver/pkg/apiserver/schema/cel/model"
	structuraldefaulting "k8s.io/apiextensions-apiserver/pkg/apiserver/schema/defaulting"
	structurallisttype "k8s.io/apiextensions-apiserver/pkg/apiserver/schema/listtype"
	schemaobjectmeta "k8s.io/apiextensions-apiserver/pkg/apiserver/schema/objectmeta"
	structuralpruning "k8s.io/apiextensions-apiserver/pkg/apiserver/schema/pruning"
	apiservervalidation "k8s.io/apiextensions-apiserver/pkg/apiserver/validation"
	"k8s.io/apimachinery/pkg/api/operation"
	metavalidation "k8s.io/apimachinery/pkg/api/validation"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/util/validation/field"
	celconfig "k8s.io/apiserver/pkg/apis/cel"
	"k8s.io/apiserver/pkg/cel/common"
)

// Default applies the schema's structural defaults in place. Kube defaults
// on decode of requests and when reading from storage.
func (v *Version) Default(obj *unstructured.Unstructured) {
	if c, err := v.schema(); err == nil && c.structural != nil {
		structuraldefaulting.Default(obj.Object, c.structural)
	}
}

// Prune drops fields the schema does not know (honouring
// x-kubernetes-preserve-unknown-fields and embedded resources), drops nulls
// of non-nullable fields without defaults, and coerces metadata. It returns
// the dropped field paths ("spec.foo"), sorted as kube reports them for
// fieldValidation=Warn/Strict. The error reports malformed metadata.
func (v *Version) Prune(obj *unstructured.Unstructured) (pruned []string, err error) {
	return v.coerce(obj, false)
}

// PruneStored is Prune for objects read from storage: malformed metadata is
// dropped rather than failing the read, as kube does.
func (v *Version) PruneStored(obj *unstructured.Unstructured) error {
	_, err := v.coerce(obj, true)
	return err
}

func (v *Version) coerce(obj *unstructured.Unstructured, dropInvalidMetadata bool) ([]string, error) {
	c, err := v.schema()
	if err != nil {
		return nil, err
	}
	u := obj.Object
	apiVersion, hasAPIVersion := u["apiVersion"]
	kind, hasKind := u["kind"]
	objectMeta, hasMeta, unknown, err := schemaobjectmeta.GetObjectMetaWithOptions(u, schemaobjectmeta.ObjectMetaOptions{
		DropMalformedFields:     dropInvalidMetadata,
		ReturnUnknownFieldPaths: true,
	})
	if err != nil {
		return nil, err
	}
	if !v.PreserveUnknownFields {
		unknown = append(unknown, structuralpruning.PruneWithOptions(u, c.structural, true, structuralschema.UnknownFieldPathOptions{TrackUnknownFieldPaths: true})...)
		structuraldefaulting.PruneNonNullableNullsWithoutDefaults(u, c.structural)
	}
	fieldErr, paths := schemaobjectmeta.CoerceWithOptions(nil, u, c.structural, false, schemaobjectmeta.CoerceOptions{
		DropInvalidFields:       dropInvalidMetadata,
		ReturnUnknownFieldPaths: true,
	})
	if fieldErr != nil {
		return nil, fieldErr
	}
	unknown = append(unknown, paths...)

	// Pruning at the root treats the object as a resource; restore its type and metadata cleanly.
	if hasAPIVersion {
		u["apiVersion"] = apiVersion
	}
	if hasKind {
		u["kind"] = kind
	}
	if hasMeta {
		if err := schemaobjectmeta.SetObjectMeta(u, objectMeta); err != nil {
			return nil, err
		}
	}
	return unknown, nil
}

// Validate validates obj against this version: apiVersion/kind, metadata
// (name must be a DNS subdomain), the OpenAPI schema, embedded resources,
// list-type sets and maps, scale replicas, and x-kubernetes-validations CEL
// rules within kube's runtime cost budget. With old non-nil it validates an
// update: transition rules see oldSelf and unchanged invalid values ratchet.
func (v *Version) Validate(ctx context.Context, obj, old *unstructured.Unstructured) field.ErrorList {
	if errs := v.validateTypeMeta(obj); len(errs) > 0 {
		return errs
	}
	c, err := v.schema()
	if err != nil {
		return field.ErrorList{field.InternalError(nil, err)}
	}
	var (
		errs       field.ErrorList
		schemaOpts []apiservervalidation.ValidationOption
		celOpts    []cel.Option
		oldObject  any
	)
	if old == nil {
		errs = append(errs, v.validateObjectMeta(ctx, obj, nil)...)
		errs = append(errs, apiservervalidation.ValidateCustomResource(nil, obj.Object, c.schemaValidator)...)
	} else {
		oldObject = old.Object
		if c.structural != nil {
			correlated := common.NewCorrelatedObject(obj.Object, old.Object, &model.Structural{Structural: c.structural})
			schemaOpts = append(schemaOpts, apiservervalidation.WithRatcheting(correlated))
			celOpts = append(celOpts, cel.WithRatcheting(correlated))
		}
		errs = append(errs, v.validateObjectMeta(ctx, obj, old)...)
		errs = append(errs, apiservervalidation.ValidateCustomResourceUpdate(nil, obj.Object, old.Object, c.schemaValidator, schemaOpts...)...)
	}
	errs = append(errs, v.validateScale(obj, true)...)
	errs = append(errs, schemaobjectmeta.Validate(ctx, nil, obj.Object, c.structural, false)...)
	// Like kube, a list that was already invalid may stay invalid on update.
	if old == nil || len(structurallisttype.ValidateListSetsAndMaps(nil, c.structural, old.Object)) == 0 {
		errs = append(errs, structurallisttype.ValidateListSetsAndMaps(nil, c.structural, obj.Object)...)
	}
	return append(errs, c.validateCEL(ctx, errs, obj.Object, oldObject, celOpts)...)
}

// ValidateStatus validates an update through the /status subresource: only
// status is checked against its schema (and CEL rules), as kube does.
func (v *Version) ValidateStatus(ctx context.Context, obj, old *unstructured.Unstructured) field.ErrorList {
	if errs := v.validateTypeMeta(obj); len(errs) > 0 {
		return errs
	}
	c, err := v.schema()
	if err != nil {
		return field.ErrorList{field.InternalError(nil, err)}
	}
	var (
		errs       field.ErrorList
		schemaOpts []apiservervalidation.ValidationOption
		celOpts    []cel.Option
	)
	if c.structural != nil {
		correlated := common.NewCorrelatedObject(obj.Object, old.Object, &model.Structural{Structural: c.structural})
		schemaOpts = append(schemaOpts, apiservervalidation.WithRatcheting(correlated.Key("status")))
		celOpts = append(celOpts, cel.WithRatcheting(correlated))
	}
	errs = append(errs, v.validateObjectMeta(ctx, obj, old)...)
	if status, ok := obj.Object["status"]; ok && c.statusValidator != nil {
		errs = append(errs, apiservervalidation.ValidateCustomResourceUpdate(field.NewPath("status"), status, old.Object["status"], c.statusValidator, schemaOpts...)...)
	}
	errs = append(errs, v.validateScale(obj, false)...)
	errs = append(errs, schemaobjectmeta.Validate(ctx, nil, obj.Object, c.structural, false)...)
	if len(structurallisttype.ValidateListSetsAndMaps(nil, c.structural, old.Object)) == 0 {
		errs = append(errs, structurallisttype.ValidateListSetsAndMaps(nil, c.structural, obj.Object)...)
	}
	return append(errs, c.validateCEL(ctx, errs, obj.Object, old.Object, celOpts)...)
}

func (c *compiledSchema) validateCEL(ctx context.Context, errs field.ErrorList, obj, old any, opts []cel.Option) field.ErrorList {
	if c.celValidator == nil {
		return nil
	}
	// Rules assume a well-typed object; kube skips them when the schema already failed hard.
	for _, err := range errs {
		switch err.Type {
		case field.ErrorTypeNotSupported, field.ErrorTypeRequired, field.ErrorTypeTooLong, field.ErrorTypeTooMany, field.ErrorTypeTypeInvalid:
			return field.ErrorList{field.Invalid(nil, nil, "some validation rules were not checked because the object was invalid; correct the existing errors to complete validation")}
		}
	}
	celErrs, _ := c.celValidator.Validate(ctx, nil, c.structural, obj, old, celconfig.RuntimeCELCostBudget, opts...)
	return celErrs
}

func (v *Version) validateTypeMeta(obj *unstructured.Unstructured) field.ErrorList {
	var errs field.ErrorList
	if kind := obj.GetKind(); kind != v.GVK.Kind {
		errs = append(errs, field.Invalid(field.NewPath("kind"), kind, fmt.Sprintf("must be %v", v.GVK.Kind)))
	}
	if want := v.GVK.GroupVersion().String(); obj.GetAPIVersion() != want {
		errs = append(errs, field.Invalid(field.NewPath("apiVersion"), obj.GetAPIVersion(), fmt.Sprintf("must be %v", want)))
	}
	return errs
}

func (v *Version) validateObjectMeta(ctx context.Context, obj, old *unstructured.Unstructured) field.ErrorList {
	meta, errs := objectMetaOf(obj)
	if len(errs) > 0 {
		return errs
	}
	path := field.NewPath("metadata")
	if old == nil {
		return metavalidation.ValidateObjectMetaDeclaratively(ctx, operation.Create, meta, nil, v.NamespaceScoped, metavalidation.NameIsDNSSubdomain, path, false)
	}
	oldMeta, errs := objectMetaOf(old)
	if len(errs) > 0 {
		return errs
	}
	return metavalidation.ValidateObjectMetaDeclaratively(ctx, operation.Update, meta, oldMeta, v.NamespaceScoped, nil, path, false)
}

func objectMetaOf(obj *unstructured.Unstructured) (*metav1.ObjectMeta, field.ErrorList) {
	meta := &metav1.ObjectMeta{}
	raw, ok := obj.Object["metadata"]
	if !ok || raw == nil {
		return meta, nil
	}
	m, ok := raw.(map[string]any)
	if !ok {
		return nil, field.ErrorList{field.Invalid(field.NewPath("metadata"), raw, fmt.Sprintf("expected map[string]interface{}, got %T", raw))}
	}
	if err := runtime.DefaultUnstructuredConverter.FromUnstructured(m, meta); err != nil {
		return nil, field.ErrorList{field.Invalid(field.NewPath("metadata"), raw, err.Error())}
	}
	return meta, nil
}
