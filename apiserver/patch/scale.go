package patch

import (
	autoscalingv1 "k8s.io/api/autoscaling/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/util/managedfields"
	"sigs.k8s.io/structured-merge-diff/v6/fieldpath"
)

// ScaleGVK is the kind served by every scale subresource. Writes through it
// keep managedFields with BuiltinFieldManager(ScaleGVK) and subresource
// "scale", on a Scale carrying ScaleManagedFields, and store the result on
// the parent with ParentManagedFields, as kube's scale REST does.
var ScaleGVK = autoscalingv1.SchemeGroupVersion.WithKind("Scale")

// The built-in scalable kinds all keep replicas at .spec.replicas.
var replicasPath = fieldpath.MakePathOrDie("spec", "replicas")

func scaleHandler(parent runtime.Object, parentGV schema.GroupVersion) (*managedfields.ScaleHandler, error) {
	accessor, err := meta.Accessor(parent)
	if err != nil {
		return nil, err
	}
	mappings := managedfields.ResourcePathMappings{parentGV.String(): replicasPath}
	return managedfields.NewScaleHandler(accessor.GetManagedFields(), parentGV, mappings), nil
}

// ScaleManagedFields returns the parent's managedFields as the Scale view
// shows them: the owners of .spec.replicas, in autoscaling/v1.
func ScaleManagedFields(parent runtime.Object, parentGV schema.GroupVersion) ([]metav1.ManagedFieldsEntry, error) {
	h, err := scaleHandler(parent, parentGV)
	if err != nil {
		return nil, err
	}
	return h.ToSubresource()
}

// ParentManagedFields merges the managedFields of a Scale written through
// the scale subresource back into the parent's, to store on the parent.
func ParentManagedFields(parent runtime.Object, parentGV schema.GroupVersion, scale *autoscalingv1.Scale) ([]metav1.ManagedFieldsEntry, error) {
	h, err := scaleHandler(parent, parentGV)
	if err != nil {
		return nil, err
	}
	return h.ToParent(scale.ManagedFields)
}
