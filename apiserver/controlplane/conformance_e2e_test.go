package controlplane_test

// Differences kube's conformance suite found between devplane and
// kube-apiserver 1.37 in defaults, validation, admission and content
// negotiation, each checked against a real devplane with client-go.

import (
	"context"
	"testing"

	rbacv1 "k8s.io/api/rbac/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

func TestConformanceDifferencesE2E(t *testing.T) {
	s := startControlPlane(t, "")
	cs := s.clientset(t, false)
	ctx := context.Background()

	t.Run("RoleRefAPIGroupDefaulted", func(t *testing.T) {
		rb, err := cs.RbacV1().RoleBindings("default").Create(ctx, &rbacv1.RoleBinding{
			ObjectMeta: metav1.ObjectMeta{Name: "no-api-group"},
			RoleRef:    rbacv1.RoleRef{Kind: "ClusterRole", Name: "view"},
			Subjects:   []rbacv1.Subject{{Kind: rbacv1.UserKind, Name: "someone"}},
		}, metav1.CreateOptions{})
		if err != nil {
			t.Fatal(err)
		}
		if rb.RoleRef.APIGroup != rbacv1.GroupName || rb.Subjects[0].APIGroup != rbacv1.GroupName {
			t.Errorf("role binding: roleRef %+v, subjects %+v", rb.RoleRef, rb.Subjects)
		}
		crb, err := cs.RbacV1().ClusterRoleBindings().Create(ctx, &rbacv1.ClusterRoleBinding{
			ObjectMeta: metav1.ObjectMeta{Name: "no-api-group"},
			RoleRef:    rbacv1.RoleRef{Kind: "ClusterRole", Name: "view"},
			Subjects:   []rbacv1.Subject{{Kind: rbacv1.ServiceAccountKind, Name: "default", Namespace: "default"}},
		}, metav1.CreateOptions{})
		if err != nil {
			t.Fatal(err)
		}
		if crb.RoleRef.APIGroup != rbacv1.GroupName || crb.Subjects[0].APIGroup != "" {
			t.Errorf("cluster role binding: roleRef %+v, subjects %+v", crb.RoleRef, crb.Subjects)
		}
	})

}
