package extensions

import (
	"fmt"
	"io"

	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	apiequality "k8s.io/apimachinery/pkg/api/equality"
	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/fields"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/runtime"
	kjson "k8s.io/apimachinery/pkg/runtime/serializer/json"
	utilruntime "k8s.io/apimachinery/pkg/util/runtime"
	"k8s.io/apimachinery/pkg/util/validation/field"

	"github.com/devplane/devplane/apiserver/builtin"
	"github.com/devplane/devplane/apiserver/crdschema"
	"github.com/devplane/devplane/apiserver/patch"
	"github.com/devplane/devplane/apiserver/registry"
	"github.com/devplane/devplane/apiserver/storage"
)

// crdPrefix is where CRDs live in etcd, as in kube.
const crdPrefix = "/registry/apiextensions.k8s.io/customresourcedefinitions"

// The field manager of CRDs (server-side apply, managedFields, strategic
// merge patch) works on the typed objects of builtin.Scheme.
func init() {
	utilruntime.Must(apiextensionsv1.AddToScheme(builtin.Scheme))
}

func newCRD() runtime.Object { return &apiextensionsv1.CustomResourceDefinition{} }
func newCRDList() runtime.Object {
	return &apiextensionsv1.CustomResourceDefinitionList{}
}

// metaAttrs selects by labels, metadata.name and metadata.namespace.
func metaAttrs(obj runtime.Object) (labels.Set, fields.Set, error) {
	acc, err := meta.Accessor(obj)
	if err != nil {
		return nil, nil, err
	}
	return labels.Set(acc.GetLabels()), fields.Set{"metadata.name": acc.GetName(), "metadata.namespace": acc.GetNamespace()}, nil
}

func (e *Extensions) installCRDResource() error {
	gv := apiextensionsv1.SchemeGroupVersion
	cfg := storage.Config{
		Resource:       CRDResource.GroupResource(),
		Codec:          e.crdCodec(),
		NewFunc:        newCRD,
		NewListFunc:    newCRDList,
		ResourcePrefix: crdPrefix,
		GetAttrs:       metaAttrs,
		ShareUnchanged: shareCRDSpec,
		Compact: func(obj runtime.Object) {
			if crd, ok := obj.(*apiextensionsv1.CustomResourceDefinition); ok {
				crdschema.CompactSchemas(crd)
			}
		},
		Decode: e.decodeStoredCRD,
		Copy:   copyCRD,
	}
	cacher, err := storage.NewCacher(storage.NewStore(e.deps.Client, cfg), cfg,
		storage.CacherOptions{Logger: e.logger.With("component", "watch-cache", "resource", cfg.Resource.String())})
	if err != nil {
		return fmt.Errorf("watch cache for CRDs: %w", err)
	}
	e.crdCacher = cacher
	e.crdStore = &registry.Store{
		Resource:    CRDResource.GroupResource(),
		Kind:        gv.WithKind("CustomResourceDefinition"),
		HasStatus:   true,
		Storage:     cacher,
		KeyPrefix:   crdPrefix,
		NewFunc:     newCRD,
		NewListFunc: newCRDList,
		// kube's CRD strategy. A status write keeps the request's metadata
		// (its status strategy resets the metadata onto itself): the
		// finalizer controller removes its cleanup finalizer through /status.
		Strategy: registry.Strategy{
			Default:        defaultCRD,
			Validate:       validateCRDCreate,
			ValidateUpdate: validateCRDUpdate,
			ValidateStatusUpdate: func(obj, old runtime.Object) field.ErrorList {
				return crdschema.ValidateCRDStatusUpdate(obj.(*apiextensionsv1.CustomResourceDefinition), old.(*apiextensionsv1.CustomResourceDefinition))
			},
			// 1 on create, bumped by spec changes.
			Generation: registry.Generation{OnCreate: true, Changed: func(obj, old runtime.Object) bool {
				return !apiequality.Semantic.DeepEqual(obj.(*apiextensionsv1.CustomResourceDefinition).Spec, old.(*apiextensionsv1.CustomResourceDefinition).Spec)
			}},
		},
		GetAttrs: metaAttrs,
		Copy:     copyCRD,
	}
	e.reg.Add(&registry.Resource{
		GVR:        CRDResource,
		Kind:       "CustomResourceDefinition",
		ListKind:   "CustomResourceDefinitionList",
		Singular:   "customresourcedefinition",
		ShortNames: []string{"crd", "crds"},
		Categories: []string{"api-extensions"},
		Verbs:      registry.DefaultVerbs,
		HasStatus:  true,
		// Without it apply would panic (no field manager) and managedFields
		// would not be kept.
		FieldManager: patch.BuiltinFieldManager(gv.WithKind("CustomResourceDefinition")),
		New:          newCRD,
		NewList:      newCRDList,
		Store:        e.crdStore,
		GetAttrs:     metaAttrs,
	})
	return nil
}

// copyCRD is the CRD store's copy for a write: the schemas, read-only
// wherever a CRD is held, are shared rather than copied.
func copyCRD(obj runtime.Object) runtime.Object {
	if crd, ok := obj.(*apiextensionsv1.CustomResourceDefinition); ok {
		return crdschema.CopySharingSchemas(crd)
	}
	return obj.DeepCopyObject()
}

// crdCodec is the storage codec of CRDs: JSON, so an empty
// status.conditions stays [] (kubectl wait reads it).
func (e *Extensions) crdCodec() runtime.Codec {
	js := kjson.NewSerializerWithOptions(kjson.DefaultMetaFactory, e.scheme, e.scheme, kjson.SerializerOptions{})
	gv := apiextensionsv1.SchemeGroupVersion
	return crdJSONCodec{e.codecs.CodecForVersions(js, js, gv, gv)}
}

// appendCRDJSON writes a served v1 CRD for the API handler's JSON
// responses (kubectl get -o json, apply and create responses).
func appendCRDJSON(dst []byte, obj runtime.Object) ([]byte, bool) {
	crd, ok := obj.(*apiextensionsv1.CustomResourceDefinition)
	if !ok || crd.Kind != "CustomResourceDefinition" || crd.APIVersion != apiextensionsv1.SchemeGroupVersion.String() {
		return dst, false
	}
	return crdschema.AppendCRDJSON(dst, crd)
}

// crdJSONCodec encodes v1 CRDs with crdschema.AppendCRDJSON: the same
// bytes as the serializer's encoding/json, without re-scanning a large
// schema once per level of nesting (a create and each status update
// encode the whole CRD).
type crdJSONCodec struct{ runtime.Codec }

func (c crdJSONCodec) Encode(obj runtime.Object, w io.Writer) error {
	if crd, ok := obj.(*apiextensionsv1.CustomResourceDefinition); ok {
		if data, ok := crdschema.AppendCRDJSON(nil, crd); ok {
			_, err := w.Write(append(data, '\n'))
			return err
		}
	}
	return c.Codec.Encode(obj, w)
}

// decodeStoredCRD decodes a stored CRD in one pass (the reflection decoder
// re-scans every schema subtree, which dominates a restart with many large
// CRDs), then defaults it as the versioning codec does after decoding.
// Anything it does not reproduce exactly is left to the codec.
func (e *Extensions) decodeStoredCRD(data []byte, like, into runtime.Object) (bool, error) {
	crd, ok := into.(*apiextensionsv1.CustomResourceDefinition)
	prev, _ := like.(*apiextensionsv1.CustomResourceDefinition)
	if !ok || !crdschema.DecodeCRDJSONLike(data, prev, crd) {
		return false, nil
	}
	e.scheme.Default(crd)
	return true, nil
}

// shareCRDSpec keeps one copy of a CRD's spec in the watch cache while its
// generation stays the same: status updates (names, conditions) do not
// change the spec, and its schemas are most of a CRD's memory.
func shareCRDSpec(prev, cur runtime.Object) bool {
	p, ok1 := prev.(*apiextensionsv1.CustomResourceDefinition)
	c, ok2 := cur.(*apiextensionsv1.CustomResourceDefinition)
	if ok1 && ok2 && p.UID == c.UID && p.Generation == c.Generation && c.Generation != 0 {
		c.Spec = p.Spec
		return true
	}
	return false
}

// defaultCRD applies the v1 defaults and, while the CRD is not being
// deleted, the cleanup finalizer: deleting a CRD first deletes its custom
// resources (kube adds the finalizer on delete; having it from creation is
// the same contract).
func defaultCRD(obj runtime.Object) {
	crd := obj.(*apiextensionsv1.CustomResourceDefinition)
	crdschema.DefaultCRD(crd)
	if crd.Status.Conditions == nil {
		crd.Status.Conditions = []apiextensionsv1.CustomResourceDefinitionCondition{}
	}
	if crd.DeletionTimestamp == nil && !hasString(crd.Finalizers, CleanupFinalizer) {
		crd.Finalizers = append(crd.Finalizers, CleanupFinalizer)
	}
}

// validateCRDCreate is the create strategy: a new CRD starts with an empty
// status (the controllers fill it) and storedVersions = [storage version].
func validateCRDCreate(obj runtime.Object) field.ErrorList {
	crd := obj.(*apiextensionsv1.CustomResourceDefinition)
	crd.Status = apiextensionsv1.CustomResourceDefinitionStatus{Conditions: []apiextensionsv1.CustomResourceDefinitionCondition{}}
	crdschema.DefaultCRD(crd)
	return crdschema.ValidateCRD(crd)
}

// validateCRDUpdate keeps the storage version among storedVersions, as
// kube's update strategy does, then validates the update.
func validateCRDUpdate(obj, old runtime.Object) field.ErrorList {
	crd := obj.(*apiextensionsv1.CustomResourceDefinition)
	if v := storageVersion(crd); v != "" && !hasString(crd.Status.StoredVersions, v) {
		crd.Status.StoredVersions = append(crd.Status.StoredVersions, v)
	}
	return crdschema.ValidateCRDUpdate(crd, old.(*apiextensionsv1.CustomResourceDefinition))
}

func storageVersion(crd *apiextensionsv1.CustomResourceDefinition) string {
	for _, v := range crd.Spec.Versions {
		if v.Storage {
			return v.Name
		}
	}
	return ""
}

func hasString(list []string, s string) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}

func findCondition(crd *apiextensionsv1.CustomResourceDefinition, t apiextensionsv1.CustomResourceDefinitionConditionType) *apiextensionsv1.CustomResourceDefinitionCondition {
	for i := range crd.Status.Conditions {
		if crd.Status.Conditions[i].Type == t {
			return &crd.Status.Conditions[i]
		}
	}
	return nil
}

// setCondition sets a condition, keeping lastTransitionTime when the status
// does not change.
func setCondition(crd *apiextensionsv1.CustomResourceDefinition, c apiextensionsv1.CustomResourceDefinitionCondition) {
	if cur := findCondition(crd, c.Type); cur != nil {
		if cur.Status == c.Status {
			c.LastTransitionTime = cur.LastTransitionTime
		}
		*cur = c
		return
	}
	crd.Status.Conditions = append(crd.Status.Conditions, c)
}
