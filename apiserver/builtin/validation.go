package builtin

import (
	apivalidation "k8s.io/apimachinery/pkg/api/validation"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/util/validation/field"
)

var metadataPath = field.NewPath("metadata")

func validatorFor(k Kind) func(obj runtime.Object) field.ErrorList {
	return func(obj runtime.Object) field.ErrorList {
		m, err := metaOf(obj)
		if err != nil {
			return field.ErrorList{field.InternalError(nil, err)}
		}
		return apivalidation.ValidateObjectMetaAccessor(m, k.Namespaced, apivalidation.NameIsDNSSubdomain, metadataPath)
	}
}

func updateValidatorFor(k Kind) func(obj, old runtime.Object) field.ErrorList {
	validate := validatorFor(k)
	return func(obj, old runtime.Object) field.ErrorList {
		return validate(obj)
	}
}
