package controlplane_test

import (
	"context"
	"fmt"
	"strings"
	"testing"

	admissionregistrationv1 "k8s.io/api/admissionregistration/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// mutatingPolicy is a policy on ConfigMap creates with the given mutations.
func mutatingPolicy(name string, fail admissionregistrationv1.FailurePolicyType, mutations ...admissionregistrationv1.Mutation) *admissionregistrationv1.MutatingAdmissionPolicy {
	return &admissionregistrationv1.MutatingAdmissionPolicy{
		ObjectMeta: metav1.ObjectMeta{Name: name},
		Spec: admissionregistrationv1.MutatingAdmissionPolicySpec{
			MatchConstraints: &admissionregistrationv1.MatchResources{ResourceRules: []admissionregistrationv1.NamedRuleWithOperations{{
				RuleWithOperations: admissionregistrationv1.RuleWithOperations{Operations: []admissionregistrationv1.OperationType{admissionregistrationv1.Create},
					Rule: admissionregistrationv1.Rule{APIGroups: []string{""}, APIVersions: []string{"v1"}, Resources: []string{"configmaps"}}}}}},
			FailurePolicy:      &fail,
			ReinvocationPolicy: admissionregistrationv1.NeverReinvocationPolicy,
			Mutations:          mutations,
		},
	}
}

func applyMutation(expr string) admissionregistrationv1.Mutation {
	return admissionregistrationv1.Mutation{PatchType: admissionregistrationv1.PatchTypeApplyConfiguration,
		ApplyConfiguration: &admissionregistrationv1.ApplyConfiguration{Expression: expr}}
}

func TestMutatingAdmissionPolicies(t *testing.T) {
	s := startControlPlane(t, "")
	cs := s.clientset(t, false)
	ctx := context.Background()
	policies := cs.AdmissionregistrationV1().MutatingAdmissionPolicies()
	bindings := cs.AdmissionregistrationV1().MutatingAdmissionPolicyBindings()
	bind := func(name, policy string, namespace string, param *admissionregistrationv1.ParamRef) {
		t.Helper()
		if _, err := bindings.Create(ctx, &admissionregistrationv1.MutatingAdmissionPolicyBinding{ObjectMeta: metav1.ObjectMeta{Name: name},
			Spec: admissionregistrationv1.MutatingAdmissionPolicyBindingSpec{PolicyName: policy, ParamRef: param,
				MatchResources: &admissionregistrationv1.MatchResources{NamespaceSelector: nsSelector(namespace)}}}, metav1.CreateOptions{}); err != nil {
			t.Fatal(err)
		}
	}
	// createCM creates a ConfigMap until check accepts the outcome (the
	// policies reach admission through the watch cache).
	createCM := func(ns, name string, labels map[string]string, check func(*corev1.ConfigMap, error) bool) *corev1.ConfigMap {
		t.Helper()
		var got *corev1.ConfigMap
		i := 0
		createUntil(t, "ConfigMap "+name, func() error {
			i++
			var err error
			got, err = cs.CoreV1().ConfigMaps(ns).Create(ctx, &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: fmt.Sprintf("%s-%d", name, i), Labels: labels},
				Data: map[string]string{"k": "v"}}, metav1.CreateOptions{})
			return err
		}, func(err error) bool { return check(got, err) })
		return got
	}

	t.Run("ApplyConfiguration adds a label, only where bound and matched", func(t *testing.T) {
		testNamespace(t, cs, "map-apply", nil)
		testNamespace(t, cs, "map-elsewhere", nil)
		p := mutatingPolicy("add-label", admissionregistrationv1.Fail,
			applyMutation(`Object{metadata: Object.metadata{labels: {"mutated": "yes"}}}`))
		p.Spec.MatchConditions = []admissionregistrationv1.MatchCondition{{Name: "not-skipped",
			Expression: `!has(object.metadata.labels) || !('skip' in object.metadata.labels)`}}
		if _, err := policies.Create(ctx, p, metav1.CreateOptions{}); err != nil {
			t.Fatal(err)
		}
		bind("add-label", "add-label", "map-apply", nil)
		cm := createCM("map-apply", "a", map[string]string{"keep": "me"}, func(cm *corev1.ConfigMap, err error) bool {
			return err == nil && cm.Labels["mutated"] == "yes"
		})
		if cm.Labels["keep"] != "me" {
			t.Errorf("apply configuration dropped a label: %v", cm.Labels)
		}
		skipped, err := cs.CoreV1().ConfigMaps("map-apply").Create(ctx, &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "skipped", Labels: map[string]string{"skip": "1"}}}, metav1.CreateOptions{})
		if err != nil || skipped.Labels["mutated"] != "" {
			t.Errorf("matchConditions did not exclude: %v %v", err, skipped.Labels)
		}
		other, err := cs.CoreV1().ConfigMaps("map-elsewhere").Create(ctx, &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "other"}}, metav1.CreateOptions{})
		if err != nil || other.Labels["mutated"] != "" {
			t.Errorf("mutated outside the binding's namespaces: %v %v", err, other.Labels)
		}
	})

	t.Run("JSONPatch with params from a ConfigMap", func(t *testing.T) {
		testNamespace(t, cs, "map-json", nil)
		if _, err := cs.CoreV1().ConfigMaps("map-json").Create(ctx, &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "settings"},
			Data: map[string]string{"team": "blue"}}, metav1.CreateOptions{}); err != nil {
			t.Fatal(err)
		}
		p := mutatingPolicy("json-team", admissionregistrationv1.Fail, admissionregistrationv1.Mutation{
			PatchType: admissionregistrationv1.PatchTypeJSONPatch,
			JSONPatch: &admissionregistrationv1.JSONPatch{Expression: `[
				JSONPatch{op: "add", path: "/metadata/labels/" + jsonpatch.escapeKey("example.com/team"), value: params.data.team}
			]`}})
		p.Spec.ParamKind = &admissionregistrationv1.ParamKind{APIVersion: "v1", Kind: "ConfigMap"}
		p.Spec.MatchConditions = []admissionregistrationv1.MatchCondition{{Name: "not-the-params", Expression: `object.metadata.name != "settings"`}}
		if _, err := policies.Create(ctx, p, metav1.CreateOptions{}); err != nil {
			t.Fatal(err)
		}
		bind("json-team", "json-team", "map-json", &admissionregistrationv1.ParamRef{Name: "settings"})
		createCM("map-json", "b", map[string]string{"app": "b"}, func(cm *corev1.ConfigMap, err error) bool {
			return err == nil && cm.Labels["example.com/team"] == "blue" && cm.Labels["app"] == "b"
		})
	})

	t.Run("failurePolicy: Fail denies, Ignore lets through", func(t *testing.T) {
		testNamespace(t, cs, "map-fail", nil)
		testNamespace(t, cs, "map-ignore", nil)
		broken := `Object{metadata: Object.metadata{labels: {"x": string(1 / (size(object.data) - size(object.data)))}}}`
		if _, err := policies.Create(ctx, mutatingPolicy("broken-fail", admissionregistrationv1.Fail, applyMutation(broken)), metav1.CreateOptions{}); err != nil {
			t.Fatal(err)
		}
		if _, err := policies.Create(ctx, mutatingPolicy("broken-ignore", admissionregistrationv1.Ignore, applyMutation(broken)), metav1.CreateOptions{}); err != nil {
			t.Fatal(err)
		}
		bind("broken-fail", "broken-fail", "map-fail", nil)
		bind("broken-ignore", "broken-ignore", "map-ignore", nil)
		createCM("map-fail", "c", nil, func(_ *corev1.ConfigMap, err error) bool {
			return apierrors.IsForbidden(err) && strings.Contains(err.Error(), "policy 'broken-fail' with binding 'broken-fail' denied request")
		})
		// Ignore: the create goes through, unchanged.
		cm, err := cs.CoreV1().ConfigMaps("map-ignore").Create(ctx, &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "d"}, Data: map[string]string{"k": "v"}}, metav1.CreateOptions{})
		if err != nil || cm.Labels["x"] != "" {
			t.Errorf("failurePolicy Ignore: %v %v", err, cm)
		}
	})

	t.Run("kubectl get", func(t *testing.T) {
		out := s.mustKubectl(t, "get", "mutatingadmissionpolicies", "json-team")
		if strings.Join(headers(out), ",") != "NAME,MUTATIONS,PARAMKIND,AGE" || !strings.Contains(out, "v1/ConfigMap") {
			t.Errorf("kubectl get mutatingadmissionpolicies:\n%s", out)
		}
		out = s.mustKubectl(t, "get", "mutatingadmissionpolicybindings", "json-team")
		if strings.Join(headers(out), ",") != "NAME,POLICYNAME,PARAMREF,AGE" || !strings.Contains(out, "settings") {
			t.Errorf("kubectl get mutatingadmissionpolicybindings:\n%s", out)
		}
	})
}
