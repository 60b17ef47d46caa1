package controlplane_test

// devplane's bootstrap RBAC policy against kube-apiserver's, kept in
// testdata/rbac (see its README): a missing role, binding, rule or subject
// fails here.

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	goruntime "runtime"
	"sort"
	"strings"
	"testing"
	"time"

	rbacv1 "k8s.io/api/rbac/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	"sigs.k8s.io/yaml"
)

// policyObject is one bootstrap RBAC object as both sides are compared.
type policyObject struct {
	Kind            string                  `json:"kind"`
	Name            string                  `json:"name"`
	Namespace       string                  `json:"namespace,omitempty"`
	Labels          map[string]string       `json:"labels"`
	Annotations     map[string]string       `json:"annotations"`
	Rules           []rbacv1.PolicyRule     `json:"rules,omitempty"`
	AggregationRule *rbacv1.AggregationRule `json:"aggregationRule,omitempty"`
	RoleRef         *rbacv1.RoleRef         `json:"roleRef,omitempty"`
	Subjects        []rbacv1.Subject        `json:"subjects,omitempty"`
}

// lines renders o as one line per field, rules and subjects sorted (their
// order means nothing to authorization), for a readable diff.
func (o policyObject) lines() []string {
	id := o.Kind + " " + o.Name
	if o.Namespace != "" {
		id = o.Kind + " " + o.Namespace + "/" + o.Name
	}
	j := func(v any) string { b, _ := json.Marshal(v); return string(b) }
	out := []string{id + " labels=" + j(o.Labels), id + " annotations=" + j(o.Annotations)}
	var rules []string
	// An aggregated role's rules are its controller's doing (in kube, the
	// controller-manager's, so the reference has none): compared apart.
	for _, r := range o.Rules {
		if o.AggregationRule != nil {
			break
		}
		// The empty and the absent list are the same rule.
		for _, l := range []*[]string{&r.APIGroups, &r.Resources, &r.ResourceNames, &r.NonResourceURLs} {
			if len(*l) == 0 {
				*l = nil
			}
		}
		rules = append(rules, id+" rule="+j(r))
	}
	sort.Strings(rules)
	out = append(out, rules...)
	if o.AggregationRule != nil {
		out = append(out, id+" aggregationRule="+j(o.AggregationRule))
	}
	if o.RoleRef != nil {
		out = append(out, id+" roleRef="+j(o.RoleRef))
	}
	for _, s := range o.Subjects {
		out = append(out, id+" subject="+j(s))
	}
	return out
}

func devplanePolicy(t *testing.T, cs kubernetes.Interface) []string {
	t.Helper()
	ctx := context.Background()
	opts := metav1.ListOptions{LabelSelector: "kubernetes.io/bootstrapping=rbac-defaults"}
	var objs []policyObject
	crs, err := cs.RbacV1().ClusterRoles().List(ctx, opts)
	if err != nil {
		t.Fatal(err)
	}
	for _, r := range crs.Items {
		objs = append(objs, policyObject{Kind: "ClusterRole", Name: r.Name, Labels: r.Labels, Annotations: r.Annotations, Rules: r.Rules, AggregationRule: r.AggregationRule})
	}
	crbs, err := cs.RbacV1().ClusterRoleBindings().List(ctx, opts)
	if err != nil {
		t.Fatal(err)
	}
	for _, b := range crbs.Items {
		objs = append(objs, policyObject{Kind: "ClusterRoleBinding", Name: b.Name, Labels: b.Labels, Annotations: b.Annotations, RoleRef: &b.RoleRef, Subjects: b.Subjects})
	}
	roles, err := cs.RbacV1().Roles("").List(ctx, opts)
	if err != nil {
		t.Fatal(err)
	}
	for _, r := range roles.Items {
		objs = append(objs, policyObject{Kind: "Role", Name: r.Name, Namespace: r.Namespace, Labels: r.Labels, Annotations: r.Annotations, Rules: r.Rules})
	}
	rbs, err := cs.RbacV1().RoleBindings("").List(ctx, opts)
	if err != nil {
		t.Fatal(err)
	}
	for _, b := range rbs.Items {
		objs = append(objs, policyObject{Kind: "RoleBinding", Name: b.Name, Namespace: b.Namespace, Labels: b.Labels, Annotations: b.Annotations, RoleRef: &b.RoleRef, Subjects: b.Subjects})
	}
	return policyLines(objs)
}

func policyLines(objs []policyObject) []string {
	var lines []string
	for _, o := range objs {
		lines = append(lines, o.lines()...)
	}
	sort.Strings(lines)
	return lines
}

func TestBootstrapPolicyMatchesKube(t *testing.T) {
	_, file, _, _ := goruntime.Caller(0)
	data, err := os.ReadFile(filepath.Join(filepath.Dir(file), "..", "..", "testdata", "rbac", "kube-v1.37.2.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	var kube []policyObject
	if err := yaml.Unmarshal(data, &kube); err != nil {
		t.Fatal(err)
	}
	want := policyLines(kube)

	s := startControlPlane(t, "")
	cs := s.clientset(t, false)
	// The aggregated roles' rules are filled in by their controller.
	var missing, extra []string
	for deadline := time.Now().Add(30 * time.Second); ; time.Sleep(100 * time.Millisecond) {
		missing, extra = diffLines(want, devplanePolicy(t, cs))
		if len(missing)+len(extra) == 0 || time.Now().After(deadline) {
			break
		}
	}
	for _, l := range missing {
		t.Errorf("kube has, devplane does not: %s", l)
	}
	for _, l := range extra {
		t.Errorf("devplane has, kube does not: %s", l)
	}

	// What kube's components do, as themselves.
	for _, c := range []struct{ as, verb, resource, subresource string }{
		{"system:kube-scheduler", "create", "pods", "binding"},
		{"system:kube-scheduler", "watch", "storageclasses.storage.k8s.io", ""},
		{"system:kube-controller-manager", "create", "serviceaccounts", "token"},
		{"system:serviceaccount:kube-system:deployment-controller", "update", "deployments.apps", ""},
		{"system:serviceaccount:kube-system:disruption-controller", "update", "poddisruptionbudgets.policy", "status"},
		{"system:kube-proxy", "watch", "endpointslices.discovery.k8s.io", ""},
	} {
		args := []string{"auth", "can-i", c.verb, c.resource, "--as", c.as, "-A"}
		if c.subresource != "" {
			args = append(args, "--subresource", c.subresource)
		}
		if out := s.kubectl(t, nil, "", args...); strings.TrimSpace(out.Stdout) != "yes" {
			t.Errorf("%s can-i %s %s %s: %q %s", c.as, c.verb, c.resource, c.subresource, out.Stdout, out.Stderr)
		}
	}
	// And what they may not: RBAC alone gives a kubelet nothing (kube binds
	// system:node to no one; the Node authorizer is what admits kubelets).
	if out := s.kubectl(t, nil, "", "auth", "can-i", "delete", "namespaces", "--as", "system:kube-scheduler"); strings.TrimSpace(out.Stdout) != "no" {
		t.Errorf("the scheduler may delete namespaces: %q", out.Stdout)
	}
}
