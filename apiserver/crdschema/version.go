package crdschema

import (
	"fmt"
	"sync"

	"k8s.io/apiextensions-apiserver/pkg/apis/apiextensions"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	structuralschema "k8s.io/apiextensions-apiserver/pkg/apiserver/schema"
	"k8s.io/apiextensions-apiserver/pkg/apiserver/schema/cel"
	structuraldefaulting "k8s.io/apiextensions-apiserver/pkg/apiserver/schema/defaulting"
	apiservervalidation "k8s.io/apiextensions-apiserver/pkg/apiserver/validation"
	"k8s.io/apiextensions-apiserver/pkg/registry/customresource/tableconvertor"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	celconfig "k8s.io/apiserver/pkg/apis/cel"
	"k8s.io/apiserver/pkg/registry/rest"
)

// Version is one version of a CRD compiled for serving: the structural
// schema, the OpenAPI and CEL validators, the table convertor and subresource
// settings. It is immutable and safe for concurrent use.
type Version struct {
	crd  *apiextensionsv1.CustomResourceDefinition
	name string

	// GroupVersionKind and ListKind of the objects served in this version.
	GVK      schema.GroupVersionKind
	ListKind string
	// NamespaceScoped is true unless the CRD's scope is Cluster.
	NamespaceScoped bool
	// Served and Storage mirror the CRD version's flags.
	Served, Storage bool
	// Deprecated and DeprecationWarning drive the Warning header on requests.
	Deprecated         bool
	DeprecationWarning string
	// StatusEnabled is true when the /status subresource is on.
	StatusEnabled bool
	// ScaleSubresource is the /scale configuration, or nil.
	ScaleSubresource *apiextensionsv1.CustomResourceSubresourceScale
	// PreserveUnknownFields disables pruning (legacy spec.preserveUnknownFields).
	PreserveUnknownFields bool

	// The compiled forms (structural schema, validators, CEL programs,
	// table convertor) are built on first use: most versions of most CRDs
	// are never read or written, and building them costs many times the
	// schema's size.
	compileOnce sync.Once
	compiled    *compiledSchema
	compileErr  error
}

// compiledSchema is what serving objects of a version needs.
type compiledSchema struct {
	structural      *structuralschema.Structural
	schemaValidator apiservervalidation.SchemaValidator
	statusValidator apiservervalidation.SchemaValidator
	celValidator    *cel.Validator
	table           rest.TableConvertor
}

type versionKey struct {
	uid        types.UID
	generation int64
	version    string
}

// compiledVersions caches Versions per CRD UID, generation and version
// name, so a Version's compiled forms are built once per spec.
var compiledVersions sync.Map // versionKey -> *Version

// Compile returns the compiled Version of crd, cached by the CRD's UID and
// generation. CRDs without a UID (not yet stored) are compiled uncached.
// The CRD must have passed ValidateCRD.
func Compile(crd *apiextensionsv1.CustomResourceDefinition, version string) (*Version, error) {
	if crd.UID == "" {
		return compile(crd, version)
	}
	key := versionKey{crd.UID, crd.Generation, version}
	if v, ok := compiledVersions.Load(key); ok {
		return v.(*Version), nil
	}
	v, err := compile(crd, version)
	if err != nil {
		return nil, err
	}
	actual, _ := compiledVersions.LoadOrStore(key, v)
	// Older generations of this CRD are never asked for again.
	compiledVersions.Range(func(k, _ any) bool {
		if k := k.(versionKey); k.uid == crd.UID && k.generation != crd.Generation {
			compiledVersions.Delete(k)
		}
		return true
	})
	return actual.(*Version), nil
}

// Forget drops the cached Versions of a deleted CRD.
func Forget(uid types.UID) {
	compiledVersions.Range(func(k, _ any) bool {
		if k.(versionKey).uid == uid {
			compiledVersions.Delete(k)
		}
		return true
	})
}

// compile reads the version's settings; the schema is compiled on first
// use (schema()). It keeps crd's spec without copying it: CRDs handed to
// Compile are never mutated.
func compile(crd *apiextensionsv1.CustomResourceDefinition, version string) (*Version, error) {
	var crdVersion *apiextensionsv1.CustomResourceDefinitionVersion
	for i := range crd.Spec.Versions {
		if crd.Spec.Versions[i].Name == version {
			crdVersion = &crd.Spec.Versions[i]
		}
	}
	if crdVersion == nil {
		return nil, fmt.Errorf("version %q not found in CustomResourceDefinition %s", version, crd.Name)
	}
	// Serve the accepted names; before the naming controller ran, the requested ones.
	names := crd.Status.AcceptedNames
	if names.Kind == "" {
		names = crd.Spec.Names
	}
	if names.ListKind == "" {
		names.ListKind = names.Kind + "List"
	}
	// The CRD with this version only: what the OpenAPI builders read.
	shell := &apiextensionsv1.CustomResourceDefinition{TypeMeta: crd.TypeMeta,
		ObjectMeta: metav1.ObjectMeta{Name: crd.Name, UID: crd.UID, Generation: crd.Generation}, Spec: crd.Spec}
	shell.Spec.Versions = []apiextensionsv1.CustomResourceDefinitionVersion{*crdVersion}
	shell.Status.AcceptedNames = crd.Status.AcceptedNames
	v := &Version{
		crd:                   shell,
		name:                  version,
		GVK:                   schema.GroupVersionKind{Group: crd.Spec.Group, Version: version, Kind: names.Kind},
		ListKind:              names.ListKind,
		NamespaceScoped:       crd.Spec.Scope != apiextensionsv1.ClusterScoped,
		Served:                crdVersion.Served,
		Storage:               crdVersion.Storage,
		Deprecated:            crdVersion.Deprecated,
		PreserveUnknownFields: crd.Spec.PreserveUnknownFields,
	}
	if v.Deprecated {
		v.DeprecationWarning = fmt.Sprintf("%s/%s %s is deprecated", crd.Spec.Group, version, crd.Spec.Names.Kind)
		if crdVersion.DeprecationWarning != nil {
			v.DeprecationWarning = *crdVersion.DeprecationWarning
		}
	}
	if sub := crdVersion.Subresources; sub != nil {
		v.StatusEnabled = sub.Status != nil
		v.ScaleSubresource = sub.Scale.DeepCopy()
	}
	return v, nil
}

// schema compiles the version's schema once.
func (v *Version) schema() (*compiledSchema, error) {
	v.compileOnce.Do(func() {
		v.compiled, v.compileErr = compileSchema(v.crd, &v.crd.Spec.Versions[0], v.GVK, v.StatusEnabled)
		if v.compileErr != nil {
			v.compileErr = fmt.Errorf("compiling %s version %s: %w", v.crd.Name, v.name, v.compileErr)
		}
	})
	return v.compiled, v.compileErr
}

// Compiled builds the compiled forms now (they are otherwise built on
// first use) and reports what failed.
func (v *Version) Compiled() error {
	_, err := v.schema()
	return err
}

func compileSchema(crd *apiextensionsv1.CustomResourceDefinition, crdVersion *apiextensionsv1.CustomResourceDefinitionVersion,
	gvk schema.GroupVersionKind, statusEnabled bool) (*compiledSchema, error) {
	c := &compiledSchema{}
	var internalSchema *apiextensions.JSONSchemaProps
	if crdVersion.Schema != nil && crdVersion.Schema.OpenAPIV3Schema != nil {
		internal := &apiextensions.CustomResourceValidation{}
		if err := apiextensionsv1.Convert_v1_CustomResourceValidation_To_apiextensions_CustomResourceValidation(crdVersion.Schema, internal, nil); err != nil {
			return nil, fmt.Errorf("converting schema of %s: %w", gvk, err)
		}
		internalSchema = internal.OpenAPIV3Schema
		s, err := structuralschema.NewStructural(internalSchema)
		if err != nil && !crd.Spec.PreserveUnknownFields {
			return nil, fmt.Errorf("schema of %s is not structural: %w", gvk, err)
		}
		if s != nil {
			// Defaults that would be pruned must not be applied (kube strips
			// them at load time). NewStructural made s from internalSchema,
			// which nothing else holds: it may be changed in place.
			if err := structuraldefaulting.PruneDefaults(s); err != nil {
				return nil, fmt.Errorf("pruning defaults of %s: %w", gvk, err)
			}
		}
		c.structural = s
	}

	var err error
	if c.schemaValidator, _, err = apiservervalidation.NewSchemaValidator(internalSchema); err != nil {
		return nil, fmt.Errorf("building validator for %s: %w", gvk, err)
	}
	if statusEnabled && internalSchema != nil {
		if status, ok := internalSchema.Properties["status"]; ok {
			if c.statusValidator, _, err = apiservervalidation.NewSchemaValidator(&status); err != nil {
				return nil, fmt.Errorf("building status validator for %s: %w", gvk, err)
			}
		}
	}
	if c.structural != nil {
		// Compiles every x-kubernetes-validations rule once.
		c.celValidator = cel.NewValidator(c.structural, true, celconfig.PerCallLimit)
	}

	columns := crdVersion.AdditionalPrinterColumns
	if len(columns) == 0 {
		columns = []apiextensionsv1.CustomResourceColumnDefinition{ageColumn}
	}
	// The CRD validation rejects unparsable JSONPaths; New still returns a NAME-only convertor on error.
	c.table, _ = tableconvertor.New(columns)
	return c, nil
}

// ageColumn is what kube serves when a version defines no printer columns,
// so `kubectl get` prints NAME and AGE.
var ageColumn = apiextensionsv1.CustomResourceColumnDefinition{
	Name:        "Age",
	Type:        "date",
	Description: metav1.ObjectMeta{}.SwaggerDoc()["creationTimestamp"],
	JSONPath:    ".metadata.creationTimestamp",
}

// Name is the version name, e.g. "v1".
func (v *Version) Name() string { return v.name }

// CRD returns the CRD this Version was compiled from. Do not mutate it.
func (v *Version) CRD() *apiextensionsv1.CustomResourceDefinition { return v.crd }

// Structural is the structural schema (defaults pruned), or nil without a
// schema or when it does not compile.
func (v *Version) Structural() *structuralschema.Structural {
	c, err := v.schema()
	if err != nil {
		return nil
	}
	return c.structural
}
