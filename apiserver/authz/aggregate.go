package authz

import (
	"slices"
	"sort"

	rbacv1 "k8s.io/api/rbac/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
)

// AggregateClusterRoles does the job of kube's clusterrole-aggregation
// controller: every role with an aggregationRule gets the union of the
// rules of the roles its selectors match. It returns updated copies of the
// roles whose rules changed; the inputs are not modified. Chains (view →
// edit → admin) are followed to a fixed point in one call.
func AggregateClusterRoles(roles []*rbacv1.ClusterRole) (changed []*rbacv1.ClusterRole) {
	current := make([]*rbacv1.ClusterRole, len(roles))
	copy(current, roles)
	// kube adds rules in the order of the matched roles' names.
	sort.SliceStable(current, func(i, j int) bool { return current[i].Name < current[j].Name })

	updated := map[string]*rbacv1.ClusterRole{}
	for range len(current) + 1 {
		progress := false
		for i, role := range current {
			if role.AggregationRule == nil {
				continue
			}
			rules := aggregatedRules(role, current)
			if slices.EqualFunc(rules, role.Rules, ruleEqual) {
				continue
			}
			cp := role.DeepCopy()
			cp.Rules = rules
			current[i] = cp
			updated[cp.Name] = cp
			progress = true
		}
		if !progress {
			break
		}
	}
	for _, role := range current {
		if u, ok := updated[role.Name]; ok {
			changed = append(changed, u)
		}
	}
	return changed
}

func aggregatedRules(target *rbacv1.ClusterRole, roles []*rbacv1.ClusterRole) []rbacv1.PolicyRule {
	selectors := make([]labels.Selector, 0, len(target.AggregationRule.ClusterRoleSelectors))
	for i := range target.AggregationRule.ClusterRoleSelectors {
		sel, err := metav1.LabelSelectorAsSelector(&target.AggregationRule.ClusterRoleSelectors[i])
		if err != nil {
			continue // validation rejects bad selectors; skip rather than fail the rest
		}
		selectors = append(selectors, sel)
	}
	rules := []rbacv1.PolicyRule{}
	for _, role := range roles {
		if role.Name == target.Name || !matchesAny(selectors, role.Labels) {
			continue
		}
		for _, rule := range role.Rules {
			if !slices.ContainsFunc(rules, func(r rbacv1.PolicyRule) bool { return ruleEqual(r, rule) }) {
				rules = append(rules, rule)
			}
		}
	}
	return rules
}

// ruleEqual is equality.Semantic.DeepEqual for rules (a nil list equals
// an empty one) without reflection: every instance start aggregates the
// bootstrap roles, some thousands of comparisons.
func ruleEqual(a, b rbacv1.PolicyRule) bool {
	return slices.Equal(a.Verbs, b.Verbs) && slices.Equal(a.APIGroups, b.APIGroups) &&
		slices.Equal(a.Resources, b.Resources) && slices.Equal(a.ResourceNames, b.ResourceNames) &&
		slices.Equal(a.NonResourceURLs, b.NonResourceURLs)
}

func matchesAny(selectors []labels.Selector, l map[string]string) bool {
	for _, sel := range selectors {
		if sel.Matches(labels.Set(l)) {
			return true
		}
	}
	return false
}
