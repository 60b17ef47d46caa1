package rbac

import (
	"context"
	"errors"
	"fmt"

	rbacv1 "k8s.io/api/rbac/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"

	"github.com/devplane/devplane/apiserver/authz"
	"github.com/devplane/devplane/apiserver/registry"
)

// ReconcileBootstrapObject creates one object of the bootstrap policy, or
// brings the existing one up to date unless it is annotated
// rbac.authorization.kubernetes.io/autoupdate=false (a binding whose
// roleRef changed is replaced).
func ReconcileBootstrapObject(ctx context.Context, reg *registry.Registry, wanted runtime.Object) error {
	var resource string
	switch wanted.(type) {
	case *rbacv1.ClusterRole:
		resource = "clusterroles"
	case *rbacv1.ClusterRoleBinding:
		resource = "clusterrolebindings"
	case *rbacv1.Role:
		resource = "roles"
	case *rbacv1.RoleBinding:
		resource = "rolebindings"
	default:
		return fmt.Errorf("unexpected bootstrap object %T", wanted)
	}
	res, ok := reg.Lookup(rbacv1.GroupName, "v1", resource)
	if !ok || res.Store == nil {
		return fmt.Errorf("%s are not served", resource)
	}
	store := res.Store
	acc, err := meta.Accessor(wanted)
	if err != nil {
		return err
	}
	ns, name := acc.GetNamespace(), acc.GetName()
	existing, err := store.Get(ctx, ns, name, metav1.GetOptions{})
	if apierrors.IsNotFound(err) {
		_, err = store.Create(ctx, ns, wanted.DeepCopyObject(), metav1.CreateOptions{})
		if apierrors.IsAlreadyExists(err) {
			return errors.New("created concurrently; retrying")
		}
		return err
	}
	if err != nil {
		return err
	}
	var result runtime.Object
	var update, recreate bool
	switch w := wanted.(type) {
	case *rbacv1.ClusterRole:
		result, update = authz.Reconcile(existing.(*rbacv1.ClusterRole), w)
	case *rbacv1.Role:
		result, update = authz.ReconcileRole(existing.(*rbacv1.Role), w)
	case *rbacv1.ClusterRoleBinding:
		e := existing.(*rbacv1.ClusterRoleBinding)
		recreate = authz.RoleRefChanged(e.RoleRef, w.RoleRef) && !protectedMeta(e.ObjectMeta)
		result, update = authz.ReconcileClusterRoleBinding(e, w)
	case *rbacv1.RoleBinding:
		e := existing.(*rbacv1.RoleBinding)
		recreate = authz.RoleRefChanged(e.RoleRef, w.RoleRef) && !protectedMeta(e.ObjectMeta)
		result, update = authz.ReconcileRoleBinding(e, w)
	}
	if recreate {
		// A roleRef cannot change: replace the binding.
		if _, _, err := store.Delete(ctx, ns, name, &metav1.DeleteOptions{}); err != nil && !apierrors.IsNotFound(err) {
			return err
		}
		_, err := store.Create(ctx, ns, wanted.DeepCopyObject(), metav1.CreateOptions{})
		return err
	}
	if !update {
		return nil
	}
	_, _, err = store.Update(ctx, ns, name, "", func(_ context.Context, _ runtime.Object) (runtime.Object, error) {
		return result.DeepCopyObject(), nil
	}, metav1.UpdateOptions{})
	return err
}

func protectedMeta(m metav1.ObjectMeta) bool {
	return m.Annotations[rbacv1.AutoUpdateAnnotationKey] == "false"
}
