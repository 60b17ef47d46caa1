// Package patch is the write path shared by every mutating verb, apart from
// HTTP: applying JSON, merge and strategic merge patches, server-side apply
// and managedFields bookkeeping, and kube's fieldValidation checks.
package patch

import (
	"encoding/json"
	"fmt"
	"net/http"
	"strings"

	jsonpatch "gopkg.in/evanphx/json-patch.v4"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/mergepatch"
	"k8s.io/apimachinery/pkg/util/strategicpatch"
	"k8s.io/apimachinery/pkg/util/validation/field"
	kjson "sigs.k8s.io/json"
)

// MaxJSONPatchOperations is kube-apiserver's limit on operations in one JSON
// patch; more is a 413.
const MaxJSONPatchOperations = 10000

// Patch types served for built-in kinds and for custom resources, in the
// order kube lists them in its 415 message.
var (
	BuiltinPatchTypes = []string{string(types.JSONPatchType), string(types.MergePatchType), string(types.StrategicMergePatchType), string(types.ApplyYAMLPatchType)}
	CustomPatchTypes  = []string{string(types.JSONPatchType), string(types.MergePatchType), string(types.ApplyYAMLPatchType)}
)

// Apply applies a JSON, merge or strategic merge patch to current, an
// object of gvk (typed for built-in kinds, *unstructured.Unstructured for
// custom resources; for the status and scale subresources pass the parent
// object or the autoscaling/v1 Scale). current is not modified.
//
// directive is the request's fieldValidation ("" means Warn). Unknown and
// duplicate fields in the patch or the patched object are returned as
// warnings (Warn) or as kube's 422 on field "patch" (Strict).
//
// Errors are API status errors as kube words them: 400 for undecodable
// bodies, 413 past MaxJSONPatchOperations, 415 for a strategic merge patch
// to a custom resource or for an unknown patch type, 422 for a JSON patch
// that does not apply. Server-side apply is FieldManager.ApplyPatch.
func Apply(current runtime.Object, gvk schema.GroupVersionKind, patchType types.PatchType, body []byte, directive string) (runtime.Object, []string, error) {
	return ApplyToCustom(current, gvk, patchType, body, directive, nil)
}

// ApplyToCustom is Apply for a custom resource whose schema lists the
// patched object's unknown fields (unknownFields, which must not modify
// its argument; nil for none): field validation reports them after the
// patch's own duplicate fields, as kube's strict decoding of the patched
// custom resource does.
func ApplyToCustom(current runtime.Object, gvk schema.GroupVersionKind, patchType types.PatchType, body []byte, directive string,
	unknownFields func(*unstructured.Unstructured) []string) (runtime.Object, []string, error) {
	directive, err := FieldValidation(directive)
	if err != nil {
		return nil, nil, err
	}
	_, custom := current.(runtime.Unstructured)
	supported := BuiltinPatchTypes
	if custom {
		supported = CustomPatchTypes
	}
	switch patchType {
	case types.JSONPatchType, types.MergePatchType:
	case types.StrategicMergePatchType:
		if !custom {
			return strategicPatch(current, gvk, body, directive)
		}
		return nil, nil, UnsupportedMediaType(supported)
	case types.ApplyYAMLPatchType:
		return nil, nil, apierrors.NewInternalError(fmt.Errorf("server-side apply goes through FieldManager.ApplyPatch"))
	default:
		return nil, nil, UnsupportedMediaType(supported)
	}

	currentJS, err := encodeJSON(current, gvk)
	if err != nil {
		return nil, nil, apierrors.NewInternalError(err)
	}
	patchedJS, strictErrs, err := applyJSONPatch(currentJS, patchType, body, directive)
	if err != nil {
		return nil, nil, err
	}
	if custom {
		patched := &unstructured.Unstructured{}
		if err := patched.UnmarshalJSON(patchedJS); err != nil {
			return nil, nil, invalidPatch(string(patchedJS), err)
		}
		if unknownFields != nil && checksFields(directive) {
			for _, path := range unknownFields(patched) {
				strictErrs = append(strictErrs, fmt.Errorf("unknown field %q", path))
			}
		}
		warnings, err := strictOutcome(strictErrs, directive, string(patchedJS))
		if err != nil {
			return nil, nil, err
		}
		return patched, warnings, nil
	}

	obj, _, err := decoderFor(false, checksFields(directive)).Decode(patchedJS, &gvk, newObject(gvk))
	if err != nil {
		strictErr, isStrict := runtime.AsStrictDecodingError(err)
		if !isStrict {
			// Unknown fields can't be listed when decoding failed outright.
			return nil, nil, invalidPatch(string(patchedJS), err)
		}
		strictErrs = append(strictErrs, strictErr.Errors()...)
	}
	warnings, err := strictOutcome(strictErrs, directive, string(patchedJS))
	if err != nil {
		return nil, nil, err
	}
	return obj, warnings, nil
}

// strictOutcome turns the unknown and duplicate fields found while patching
// into warnings or kube's 422 on "patch", whose value is the patched object
// (JSON and merge patches) or the patch (strategic).
func strictOutcome(strictErrs []error, directive, value string) ([]string, error) {
	if len(strictErrs) == 0 {
		return nil, nil
	}
	if directive == metav1.FieldValidationWarn {
		return warningsFrom(strictErrs), nil
	}
	return nil, invalidPatch(value, runtime.NewStrictDecodingError(strictErrs))
}

func invalidPatch(value string, err error) error {
	return apierrors.NewInvalid(schema.GroupKind{}, "", field.ErrorList{
		field.Invalid(field.NewPath("patch"), value, err.Error()),
	})
}

// UnsupportedMediaType is kube's 415 for a request body (a patch included)
// in a media type that is not accepted.
func UnsupportedMediaType(accepted []string) error {
	return &apierrors.StatusError{ErrStatus: metav1.Status{
		Status:  metav1.StatusFailure,
		Code:    http.StatusUnsupportedMediaType,
		Reason:  metav1.StatusReasonUnsupportedMediaType,
		Message: "the body of the request was in an unknown format - accepted media types include: " + strings.Join(accepted, ", "),
	}}
}

// jsonPatchOp lists the fields of a JSON patch operation, so strict decoding
// can name the unknown ones.
type jsonPatchOp struct {
	Op    string `json:"op"`
	Path  string `json:"path"`
	From  string `json:"from"`
	Value any    `json:"value"`
}

func applyJSONPatch(currentJS []byte, patchType types.PatchType, body []byte, directive string) ([]byte, []error, error) {
	var strictErrs []error
	if patchType == types.JSONPatchType {
		if checksFields(directive) {
			var ops []jsonPatchOp
			var err error
			if strictErrs, err = kjson.UnmarshalStrict(body, &ops); err != nil {
				return nil, nil, apierrors.NewBadRequest(fmt.Sprintf("error decoding patch: %v", err))
			}
			for i, e := range strictErrs {
				strictErrs[i] = fmt.Errorf("json patch %v", e)
			}
		}
		ops, err := jsonpatch.DecodePatch(body)
		if err != nil {
			return nil, nil, apierrors.NewBadRequest(err.Error())
		}
		if len(ops) > MaxJSONPatchOperations {
			return nil, nil, apierrors.NewRequestEntityTooLargeError(fmt.Sprintf(
				"The allowed maximum operations in a JSON patch is %d, got %d", MaxJSONPatchOperations, len(ops)))
		}
		patched, err := ops.Apply(currentJS)
		if err != nil {
			return nil, nil, apierrors.NewGenericServerResponse(http.StatusUnprocessableEntity, "", schema.GroupResource{}, "", err.Error(), 0, false)
		}
		return patched, strictErrs, nil
	}

	if checksFields(directive) {
		var err error
		if strictErrs, err = kjson.UnmarshalStrict(body, &map[string]any{}); err != nil {
			return nil, nil, apierrors.NewBadRequest(fmt.Sprintf("error decoding patch: %v", err))
		}
	}
	patched, err := jsonpatch.MergePatch(currentJS, body)
	if err != nil {
		return nil, nil, apierrors.NewBadRequest(err.Error())
	}
	return patched, strictErrs, nil
}

// strategicPatch applies a strategic merge patch using the patch metadata
// (merge keys, strategies) of the Go type of gvk.
func strategicPatch(current runtime.Object, gvk schema.GroupVersionKind, body []byte, directive string) (runtime.Object, []string, error) {
	original, err := runtime.DefaultUnstructuredConverter.ToUnstructured(current)
	if err != nil {
		return nil, nil, apierrors.NewInternalError(err)
	}
	original["apiVersion"], original["kind"] = gvk.GroupVersion().String(), gvk.Kind

	patchMap := map[string]any{}
	var strictErrs []error
	if checksFields(directive) {
		strictErrs, err = kjson.UnmarshalStrict(body, &patchMap)
	} else {
		err = kjson.UnmarshalCaseSensitivePreserveInts(body, &patchMap)
	}
	if err != nil {
		return nil, nil, apierrors.NewBadRequest(err.Error())
	}

	schemaReference := newObject(gvk)
	patched, err := strategicpatch.StrategicMergeMapPatch(original, patchMap, schemaReference)
	if err != nil {
		return nil, nil, strategicPatchError(err)
	}
	patchValue := fmt.Sprintf("%+v", patchMap)
	obj := newObject(gvk)
	if err := runtime.DefaultUnstructuredConverter.FromUnstructuredWithValidation(patched, obj, checksFields(directive)); err != nil {
		strictErr, isStrict := runtime.AsStrictDecodingError(err)
		if !isStrict {
			return nil, nil, invalidPatch(patchValue, err)
		}
		strictErrs = append(strictErrs, strictErr.Errors()...)
	}
	// FromUnstructured leaves TypeMeta as the patch left it.
	obj.GetObjectKind().SetGroupVersionKind(gvk)
	warnings, err := strictOutcome(strictErrs, directive, patchValue)
	if err != nil {
		return nil, nil, err
	}
	return obj, warnings, nil
}

// strategicPatchError gives strategic merge failures kube's status codes.
func strategicPatchError(err error) error {
	switch err {
	case mergepatch.ErrBadJSONDoc, mergepatch.ErrBadPatchFormatForPrimitiveList, mergepatch.ErrBadPatchFormatForRetainKeys,
		mergepatch.ErrBadPatchFormatForSetElementOrderList, mergepatch.ErrUnsupportedStrategicMergePatchFormat:
		return apierrors.NewBadRequest(err.Error())
	case mergepatch.ErrNoListOfLists, mergepatch.ErrPatchContentNotMatchRetainKeys:
		return apierrors.NewGenericServerResponse(http.StatusUnprocessableEntity, "", schema.GroupResource{}, "", err.Error(), 0, false)
	}
	return asStatus(err)
}

// asStatus gives an error that is not an API status the 500 kube-apiserver
// answers for it (its ErrorToAPIStatus), keeping the message unwrapped.
func asStatus(err error) error {
	if _, ok := err.(apierrors.APIStatus); ok || err == nil {
		return err
	}
	return &apierrors.StatusError{ErrStatus: metav1.Status{
		Status:  metav1.StatusFailure,
		Code:    http.StatusInternalServerError,
		Reason:  metav1.StatusReasonUnknown,
		Message: err.Error(),
	}}
}

// encodeJSON renders obj with its apiVersion and kind, as the patch was
// computed against the versioned JSON.
func encodeJSON(obj runtime.Object, gvk schema.GroupVersionKind) ([]byte, error) {
	if u, ok := obj.(*unstructured.Unstructured); ok {
		if u.GetKind() == "" {
			u = u.DeepCopy()
			u.SetGroupVersionKind(gvk)
		}
		return u.MarshalJSON()
	}
	m, err := runtime.DefaultUnstructuredConverter.ToUnstructured(obj)
	if err != nil {
		return nil, err
	}
	m["apiVersion"], m["kind"] = gvk.GroupVersion().String(), gvk.Kind
	return json.Marshal(m)
}
