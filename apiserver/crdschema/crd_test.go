package crdschema

import (
	"slices"
	"strings"
	"testing"

	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
)

func TestDefaultCRD(t *testing.T) {
	crd := readCRD(t, "widgets.yaml")
	if crd.Spec.Names.Singular != "widget" || crd.Spec.Names.ListKind != "WidgetList" {
		t.Errorf("names not defaulted: %+v", crd.Spec.Names)
	}
	if crd.Spec.Conversion == nil || crd.Spec.Conversion.Strategy != apiextensionsv1.NoneConverter {
		t.Errorf("conversion = %+v, want strategy None", crd.Spec.Conversion)
	}
	if !slices.Equal(crd.Status.StoredVersions, []string{"v1alpha1"}) {
		t.Errorf("storedVersions = %v", crd.Status.StoredVersions)
	}
}

func TestValidateCRDAcceptsRealCRDs(t *testing.T) {
	for _, name := range []string{"crontabs.yaml", "widgets.yaml"} {
		if errs := ValidateCRD(readCRD(t, name)); len(errs) > 0 {
			t.Errorf("%s: %v", name, errs.ToAggregate())
		}
	}
}

func TestValidateCRDRejectsNonStructuralSchema(t *testing.T) {
	errs := ValidateCRD(readCRD(t, "nonstructural.yaml"))
	requireErrors(t, errs,
		// Single-version CRDs validate as spec.validation, exactly as kube words it.
		`spec.validation.openAPIV3Schema.properties[spec].properties[mode].anyOf[0].description: Forbidden: must be empty to be structural`,
		`spec.validation.openAPIV3Schema.properties[spec].properties[mode].anyOf[0].type: Forbidden: must be empty to be structural`,
		`spec.validation.openAPIV3Schema.properties[spec].properties[size].type: Required value: must not be empty for specified object fields`,
	)
}

func TestValidateCRDRejectsBadNamesAndCEL(t *testing.T) {
	crd := readCRD(t, "widgets.yaml")
	crd.Name = "widgets.wrong.dev"
	crd.Spec.Versions[0].Schema.OpenAPIV3Schema.XValidations = apiextensionsv1.ValidationRules{{Rule: "self.spec.size >"}}
	errs := errorStrings(ValidateCRD(crd))
	want := []string{
		`metadata.name: Invalid value: "widgets.wrong.dev": must be spec.names.plural+"."+spec.group`,
		`spec.versions[0].schema.openAPIV3Schema.x-kubernetes-validations[0].rule: Invalid value: {"Rule":"self.spec.size \u003e"`,
	}
	for _, w := range want {
		if !slices.ContainsFunc(errs, func(e string) bool { return strings.HasPrefix(e, w) }) {
			t.Errorf("missing error %q in\n%s", w, strings.Join(errs, "\n"))
		}
	}
}

func TestValidateCRDUpdate(t *testing.T) {
	old := loadCRD(t, "crontabs.yaml")
	old.ResourceVersion = "1"

	// Scope may change until the CRD is established, as in kube.
	scopeChange := old.DeepCopy()
	scopeChange.Spec.Scope = apiextensionsv1.ClusterScoped
	if errs := ValidateCRDUpdate(scopeChange, old); len(errs) > 0 {
		t.Errorf("scope change before Established: %v", errs.ToAggregate())
	}
	established := old.DeepCopy()
	established.Status.Conditions = []apiextensionsv1.CustomResourceDefinitionCondition{{Type: apiextensionsv1.Established, Status: apiextensionsv1.ConditionTrue}}
	scopeChange.Status = established.Status
	requireErrors(t, ValidateCRDUpdate(scopeChange, established), `spec.scope: Invalid value: "Cluster": field is immutable`)

	groupChange := old.DeepCopy()
	groupChange.Spec.Group = "other.example.com"
	errs := errorStrings(ValidateCRDUpdate(groupChange, old))
	if !slices.Contains(errs, `spec.group: Invalid value: "other.example.com": field is immutable`) {
		t.Errorf("group change errors: %v", errs)
	}

	addVersion := old.DeepCopy()
	v3 := *addVersion.Spec.Versions[1].DeepCopy()
	v3.Name, v3.Deprecated = "v3", false
	addVersion.Spec.Versions = append(addVersion.Spec.Versions, v3)
	if errs := ValidateCRDUpdate(addVersion, old); len(errs) > 0 {
		t.Errorf("adding a version: %v", errs.ToAggregate())
	}
}
