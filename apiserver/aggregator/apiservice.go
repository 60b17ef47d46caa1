package aggregator

import (
	"context"
	"fmt"
	"strings"
	"time"

	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/fields"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/util/duration"
	"k8s.io/apimachinery/pkg/util/validation"
	"k8s.io/apimachinery/pkg/util/validation/field"
	apiregv1 "k8s.io/kube-aggregator/pkg/apis/apiregistration/v1"

	"github.com/devplane/devplane/apiserver/registry"
	"github.com/devplane/devplane/apiserver/storage"
)

// NewResource serves APIServices from store (a storage.Store or Cacher made
// with StorageConfig): all verbs, status subresource, kube's table.
func NewResource(store storage.Interface) *registry.Resource {
	gvr := GroupVersion.WithResource("apiservices")
	newObj := func() runtime.Object { return &apiregv1.APIService{} }
	newList := func() runtime.Object { return &apiregv1.APIServiceList{} }
	return &registry.Resource{
		GVR:        gvr,
		Kind:       "APIService",
		ListKind:   "APIServiceList",
		Singular:   "apiservice",
		Categories: []string{"api-extensions"},
		Verbs:      registry.DefaultVerbs,
		HasStatus:  true,
		New:        newObj,
		NewList:    newList,
		Table:      tableConvertor{},
		GetAttrs:   getAttrs,
		Store: &registry.Store{
			Resource:    gvr.GroupResource(),
			Kind:        GroupVersion.WithKind("APIService"),
			HasStatus:   true,
			Storage:     store,
			KeyPrefix:   StoragePrefix,
			NewFunc:     newObj,
			NewListFunc: newList,
			Strategy: registry.Strategy{
				Default:        func(obj runtime.Object) { Scheme.Default(obj) },
				Validate:       func(obj runtime.Object) field.ErrorList { return Validate(obj.(*apiregv1.APIService)) },
				ValidateUpdate: func(obj, _ runtime.Object) field.ErrorList { return Validate(obj.(*apiregv1.APIService)) },
				// kube-aggregator's status strategy: the status only; labels,
				// annotations, finalizers and owners stay as stored.
				PrepareStatusUpdate: registry.ResetMetadataForStatus,
			},
			GetAttrs: getAttrs,
		},
	}
}

func getAttrs(obj runtime.Object) (labels.Set, fields.Set, error) {
	acc, err := meta.Accessor(obj)
	if err != nil {
		return nil, nil, err
	}
	return labels.Set(acc.GetLabels()), fields.Set{"metadata.name": acc.GetName()}, nil
}

// Validate checks an APIService as kube's apiregistration validation does.
func Validate(s *apiregv1.APIService) field.ErrorList {
	var errs field.ErrorList
	spec := field.NewPath("spec")
	if want := s.Spec.Version + "." + s.Spec.Group; s.Name != want {
		errs = append(errs, field.Invalid(field.NewPath("metadata", "name"), s.Name, "must be "+want))
	}
	if s.Spec.Group == "" && s.Spec.Service != nil {
		errs = append(errs, field.Required(spec.Child("group"), "only builtin groups may be empty"))
	}
	if s.Spec.Group != "" {
		for _, msg := range validation.IsDNS1123Subdomain(s.Spec.Group) {
			errs = append(errs, field.Invalid(spec.Child("group"), s.Spec.Group, msg))
		}
	}
	if s.Spec.Version == "" {
		errs = append(errs, field.Required(spec.Child("version"), ""))
	} else {
		for _, msg := range validation.IsDNS1035Label(s.Spec.Version) {
			errs = append(errs, field.Invalid(spec.Child("version"), s.Spec.Version, msg))
		}
	}
	if p := s.Spec.GroupPriorityMinimum; p <= 0 || p > 20000 {
		errs = append(errs, field.Invalid(spec.Child("groupPriorityMinimum"), p, "must be positive and less than 20000"))
	}
	if p := s.Spec.VersionPriority; p <= 0 || p > 1000 {
		errs = append(errs, field.Invalid(spec.Child("versionPriority"), p, "must be positive and less than 1000"))
	}
	if s.Spec.Service == nil {
		if len(s.Spec.CABundle) > 0 {
			errs = append(errs, field.Invalid(spec.Child("caBundle"), fmt.Sprintf("%d bytes", len(s.Spec.CABundle)),
				"local APIServices may not have a caBundle"))
		}
		if s.Spec.InsecureSkipTLSVerify {
			errs = append(errs, field.Invalid(spec.Child("insecureSkipTLSVerify"), true,
				"local APIServices may not have insecureSkipTLSVerify"))
		}
		return errs
	}
	svc := spec.Child("service")
	if s.Spec.Service.Namespace == "" {
		errs = append(errs, field.Required(svc.Child("namespace"), ""))
	}
	if s.Spec.Service.Name == "" {
		errs = append(errs, field.Required(svc.Child("name"), ""))
	}
	if p := s.Spec.Service.Port; p != nil {
		for _, msg := range validation.IsValidPortNum(int(*p)) {
			errs = append(errs, field.Invalid(svc.Child("port"), *p, msg))
		}
	}
	if s.Spec.InsecureSkipTLSVerify && len(s.Spec.CABundle) > 0 {
		errs = append(errs, field.Invalid(spec.Child("insecureSkipTLSVerify"), true,
			"may not be true if caBundle is present"))
	}
	return errs
}

// isLocal: served by devplane itself rather than by a backend.
func isLocal(s *apiregv1.APIService) bool { return s.Spec.Service == nil }

// availableCondition returns the Available condition (nil if unset).
func availableCondition(s *apiregv1.APIService) *apiregv1.APIServiceCondition {
	for i := range s.Status.Conditions {
		if s.Status.Conditions[i].Type == apiregv1.Available {
			return &s.Status.Conditions[i]
		}
	}
	return nil
}

// tableConvertor prints kube's APIService columns.
type tableConvertor struct{}

var tableColumns = []metav1.TableColumnDefinition{
	{Name: "Name", Type: "string", Format: "name", Description: metav1.ObjectMeta{}.SwaggerDoc()["name"]},
	{Name: "Service", Type: "string", Description: "The reference to the service that hosts this API endpoint."},
	{Name: "Available", Type: "string", Description: "Whether this service is available."},
	{Name: "Age", Type: "string", Description: metav1.ObjectMeta{}.SwaggerDoc()["creationTimestamp"]},
}

func (tableConvertor) ConvertToTable(_ context.Context, obj runtime.Object, opts *metav1.TableOptions) (*metav1.Table, error) {
	t := &metav1.Table{}
	if opts == nil || !opts.NoHeaders {
		t.ColumnDefinitions = tableColumns
	}
	row := func(s *apiregv1.APIService) metav1.TableRow {
		service := "Local"
		if s.Spec.Service != nil {
			service = s.Spec.Service.Namespace + "/" + s.Spec.Service.Name
		}
		available := "Unknown"
		if c := availableCondition(s); c != nil {
			available = string(c.Status)
			if c.Status != apiregv1.ConditionTrue && c.Reason != "" {
				available += " (" + c.Reason + ")"
			}
		}
		return metav1.TableRow{
			Cells:  []interface{}{s.Name, service, available, age(s.CreationTimestamp)},
			Object: runtime.RawExtension{Object: s},
		}
	}
	switch o := obj.(type) {
	case *apiregv1.APIService:
		t.Rows = []metav1.TableRow{row(o)}
		t.ResourceVersion = o.ResourceVersion
	case *apiregv1.APIServiceList:
		t.Rows = []metav1.TableRow{}
		for i := range o.Items {
			t.Rows = append(t.Rows, row(&o.Items[i]))
		}
		t.ResourceVersion, t.Continue, t.RemainingItemCount = o.ResourceVersion, o.Continue, o.RemainingItemCount
	default:
		return nil, fmt.Errorf("aggregator: cannot print %T", obj)
	}
	return t, nil
}

func age(ts metav1.Time) string {
	if ts.IsZero() {
		return "<unknown>"
	}
	return duration.HumanDuration(time.Since(ts.Time))
}

// apiServiceName is kube's name for an APIService: "<version>.<group>".
func apiServiceName(group, version string) string {
	return version + "." + group
}

// splitName undoes apiServiceName ("v1." → "", "v1").
func splitName(name string) (group, version string) {
	version, group, _ = strings.Cut(name, ".")
	return group, version
}
