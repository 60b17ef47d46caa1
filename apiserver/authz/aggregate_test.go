package authz

import (
	"reflect"
	"testing"

	rbacv1 "k8s.io/api/rbac/v1"
	"k8s.io/apimachinery/pkg/api/equality"
)

// ruleEqual must agree with equality.Semantic.DeepEqual, which aggregation
// used before, on every field of PolicyRule.
func TestRuleEqualAgreesWithSemanticDeepEqual(t *testing.T) {
	if n := reflect.TypeFor[rbacv1.PolicyRule]().NumField(); n != 5 {
		t.Fatalf("PolicyRule has %d fields; ruleEqual compares 5", n)
	}
	base := rbacv1.PolicyRule{Verbs: []string{"get"}, APIGroups: []string{""}, Resources: []string{"pods"},
		ResourceNames: []string{"a"}, NonResourceURLs: nil}
	variants := []rbacv1.PolicyRule{base}
	// Each field changed, emptied and nil in turn.
	for i := range 5 {
		for _, value := range [][]string{{"other"}, {}, nil} {
			v := *base.DeepCopy()
			reflect.ValueOf(&v).Elem().Field(i).Set(reflect.ValueOf(value))
			variants = append(variants, v)
		}
	}
	for _, a := range variants {
		for _, b := range variants {
			if got, want := ruleEqual(a, b), equality.Semantic.DeepEqual(a, b); got != want {
				t.Errorf("ruleEqual(%v, %v) = %v, Semantic.DeepEqual says %v", a, b, got, want)
			}
		}
	}
}
