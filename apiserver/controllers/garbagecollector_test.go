package controllers_test

import (
	"context"
	"fmt"
	"slices"
	"testing"
	"time"

	"github.com/devplane/devplane/apiserver/controllers"
	"github.com/devplane/devplane/apiserver/controlplane/controlplanetest"
	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/uuid"
)

// gcFixture creates ConfigMap owners and Secret dependents in one namespace.
type gcFixture struct {
	t  *testing.T
	s  *testServer
	ns string
}

func (f *gcFixture) owner(name string) *corev1.ConfigMap {
	f.t.Helper()
	cm, err := f.s.client.CoreV1().ConfigMaps(f.ns).Create(context.Background(), &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: name}}, metav1.CreateOptions{})
	if err != nil {
		f.t.Fatal(err)
	}
	return cm
}

func refTo(apiVersion, kind, name string, uid types.UID, block bool) metav1.OwnerReference {
	return metav1.OwnerReference{APIVersion: apiVersion, Kind: kind, Name: name, UID: uid, BlockOwnerDeletion: &block}
}

func configMapRef(cm *corev1.ConfigMap, block bool) metav1.OwnerReference {
	return refTo("v1", "ConfigMap", cm.Name, cm.UID, block)
}

func (f *gcFixture) dependent(name string, finalizers []string, refs ...metav1.OwnerReference) {
	f.t.Helper()
	secret := &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Name: name, OwnerReferences: refs, Finalizers: finalizers}}
	if _, err := f.s.client.CoreV1().Secrets(f.ns).Create(context.Background(), secret, metav1.CreateOptions{}); err != nil {
		f.t.Fatal(err)
	}
}

func (f *gcFixture) deleteOwner(name string, policy metav1.DeletionPropagation) {
	f.t.Helper()
	if err := f.s.client.CoreV1().ConfigMaps(f.ns).Delete(context.Background(), name, metav1.DeleteOptions{PropagationPolicy: &policy}); err != nil {
		f.t.Fatal(err)
	}
}

func (f *gcFixture) secret(name string) (*corev1.Secret, bool) {
	f.t.Helper()
	s, err := f.s.client.CoreV1().Secrets(f.ns).Get(context.Background(), name, metav1.GetOptions{})
	if apierrors.IsNotFound(err) {
		return nil, false
	}
	if err != nil {
		f.t.Fatal(err)
	}
	return s, true
}

func (f *gcFixture) eventuallyGone(what string, get func() (any, bool)) {
	f.t.Helper()
	controlplanetest.Eventually(f.t, 30*time.Second, what+" collected", func() (bool, string) {
		obj, exists := get()
		return !exists, fmt.Sprintf("%+v", obj)
	})
}

func (f *gcFixture) secretGetter(name string) func() (any, bool) {
	return func() (any, bool) { s, ok := f.secret(name); return s, ok }
}

func (f *gcFixture) configMapGetter(name string) func() (any, bool) {
	return func() (any, bool) {
		cm, err := f.s.client.CoreV1().ConfigMaps(f.ns).Get(context.Background(), name, metav1.GetOptions{})
		if apierrors.IsNotFound(err) {
			return nil, false
		}
		return cm, true
	}
}

func startGC(t *testing.T, s *testServer) *controllers.GarbageCollector {
	t.Helper()
	gc, err := controllers.NewGarbageCollector(s.cfg, s.cp.LocalReader, nil)
	if err != nil {
		t.Fatal(err)
	}
	gc.DiscoveryInterval = 500 * time.Millisecond
	run(t, gc)
	return gc
}

func TestGarbageCollector(t *testing.T) {
	s := startServer(t)
	ctx := context.Background()
	createNamespace(t, s, "gc")
	f := &gcFixture{t: t, s: s, ns: "gc"}
	gc := startGC(t, s)

	t.Run("background", func(t *testing.T) {
		f := *f
		f.t = t
		owner := f.owner("bg")
		other := f.owner("bg-other")
		f.dependent("bg-1", nil, configMapRef(owner, false))
		f.dependent("bg-2", nil, configMapRef(owner, true))
		f.dependent("bg-shared", nil, configMapRef(owner, false), configMapRef(other, false))
		f.deleteOwner("bg", metav1.DeletePropagationBackground)
		f.eventuallyGone("bg-1", f.secretGetter("bg-1"))
		f.eventuallyGone("bg-2", f.secretGetter("bg-2"))
		// A dependent with another live owner stays, without the dead reference.
		controlplanetest.Eventually(t, 30*time.Second, "shared dependent keeps only its live owner", func() (bool, string) {
			s, ok := f.secret("bg-shared")
			if !ok {
				return false, "deleted"
			}
			return len(s.OwnerReferences) == 1 && s.OwnerReferences[0].UID == other.UID, fmt.Sprintf("%+v", s.OwnerReferences)
		})
	})

	t.Run("foreground", func(t *testing.T) {
		f := *f
		f.t = t
		owner := f.owner("fg")
		f.dependent("fg-plain", nil, configMapRef(owner, true))
		f.dependent("fg-held", []string{"example.com/hold"}, configMapRef(owner, true))
		f.dependent("fg-nonblocking", nil, configMapRef(owner, false))
		f.deleteOwner("fg", metav1.DeletePropagationForeground)
		f.eventuallyGone("fg-plain", f.secretGetter("fg-plain"))
		f.eventuallyGone("fg-nonblocking", f.secretGetter("fg-nonblocking"))
		controlplanetest.Eventually(t, 30*time.Second, "held dependent being deleted", func() (bool, string) {
			s, ok := f.secret("fg-held")
			return ok && s.DeletionTimestamp != nil, fmt.Sprintf("%+v", s)
		})
		// The owner waits for its blocking dependent.
		cm, err := s.client.CoreV1().ConfigMaps(f.ns).Get(ctx, "fg", metav1.GetOptions{})
		if err != nil {
			t.Fatalf("owner must wait for its blocking dependent: %v", err)
		}
		if cm.DeletionTimestamp == nil || !slices.Contains(cm.Finalizers, metav1.FinalizerDeleteDependents) {
			t.Fatalf("owner not deleting in the foreground: %+v", cm.ObjectMeta)
		}
		if _, err := s.client.CoreV1().Secrets(f.ns).Patch(ctx, "fg-held", types.MergePatchType, []byte(`{"metadata":{"finalizers":null}}`), metav1.PatchOptions{}); err != nil {
			t.Fatal(err)
		}
		f.eventuallyGone("fg-held", f.secretGetter("fg-held"))
		f.eventuallyGone("foreground owner", f.configMapGetter("fg"))
	})

	t.Run("orphan", func(t *testing.T) {
		f := *f
		f.t = t
		owner := f.owner("orphan")
		other := f.owner("orphan-other")
		f.dependent("orphan-1", nil, configMapRef(owner, true))
		f.dependent("orphan-2", nil, configMapRef(owner, false), configMapRef(other, false))
		f.deleteOwner("orphan", metav1.DeletePropagationOrphan)
		f.eventuallyGone("orphaning owner", f.configMapGetter("orphan"))
		s1, ok1 := f.secret("orphan-1")
		s2, ok2 := f.secret("orphan-2")
		if !ok1 || !ok2 {
			t.Fatal("orphaned dependents must stay")
		}
		if len(s1.OwnerReferences) != 0 {
			t.Errorf("orphan-1 still refers to an owner: %+v", s1.OwnerReferences)
		}
		if len(s2.OwnerReferences) != 1 || s2.OwnerReferences[0].UID != other.UID {
			t.Errorf("orphan-2 must keep only its other owner: %+v", s2.OwnerReferences)
		}
		// They are not collected later either.
		time.Sleep(300 * time.Millisecond)
		if _, ok := f.secret("orphan-1"); !ok {
			t.Error("orphan-1 collected after orphaning")
		}
	})

	t.Run("dangling references", func(t *testing.T) {
		f := *f
		f.t = t
		live := f.owner("dangling-live")
		f.dependent("never-existed", nil, refTo("v1", "ConfigMap", "ghost", uuid.NewUUID(), false))
		f.dependent("uid-mismatch", nil, refTo("v1", "ConfigMap", live.Name, uuid.NewUUID(), false))
		f.dependent("really-owned", nil, configMapRef(live, false))
		f.eventuallyGone("dependent of an owner that never existed", f.secretGetter("never-existed"))
		f.eventuallyGone("dependent of another object with the owner's name", f.secretGetter("uid-mismatch"))
		if _, ok := f.secret("really-owned"); !ok {
			t.Error("a dependent of a live owner was collected")
		}
	})

	t.Run("cluster-scoped owner", func(t *testing.T) {
		f := *f
		f.t = t
		role, err := s.client.RbacV1().ClusterRoles().Create(ctx, &rbacv1.ClusterRole{ObjectMeta: metav1.ObjectMeta{Name: "gc-owner"}}, metav1.CreateOptions{})
		if err != nil {
			t.Fatal(err)
		}
		f.dependent("of-cluster-role", nil, refTo("rbac.authorization.k8s.io/v1", "ClusterRole", role.Name, role.UID, false))
		time.Sleep(200 * time.Millisecond)
		if _, ok := f.secret("of-cluster-role"); !ok {
			t.Fatal("dependent of a live cluster-scoped owner collected")
		}
		if err := s.client.RbacV1().ClusterRoles().Delete(ctx, role.Name, metav1.DeleteOptions{}); err != nil {
			t.Fatal(err)
		}
		f.eventuallyGone("dependent of a cluster-scoped owner", f.secretGetter("of-cluster-role"))
	})

	t.Run("owner in another namespace", func(t *testing.T) {
		createNamespace(t, s, "gc-elsewhere")
		f := *f
		f.t = t
		owner := f.owner("cross-owner") // in namespace gc
		// The event names an object the collector knows in another
		// namespace: let it see the owner first.
		controlplanetest.Eventually(t, 10*time.Second, "owner observed", func() (bool, string) { return gc.Observed(owner.UID), "" })
		other := &gcFixture{t: t, s: s, ns: "gc-elsewhere"}
		other.dependent("cross-dependent", nil, configMapRef(owner, false))
		other.eventuallyGone("dependent referring to another namespace's owner", other.secretGetter("cross-dependent"))
		controlplanetest.Eventually(t, 30*time.Second, "OwnerRefInvalidNamespace event", func() (bool, string) {
			events, err := s.client.CoreV1().Events("gc-elsewhere").List(ctx, metav1.ListOptions{})
			if err != nil {
				return false, err.Error()
			}
			for _, e := range events.Items {
				if e.Reason == "OwnerRefInvalidNamespace" && e.InvolvedObject.Name == "cross-dependent" && e.Type == corev1.EventTypeWarning {
					return true, ""
				}
			}
			return false, fmt.Sprintf("%d events", len(events.Items))
		})
		if _, ok := f.configMapGetter("cross-owner")(); !ok {
			t.Error("the other namespace's object must not be touched")
		}
	})
}

// An owner deleted while no garbage collector ran is found at start-up.
func TestGarbageCollectorAfterRestart(t *testing.T) {
	s := startServer(t)
	createNamespace(t, s, "restart")
	f := &gcFixture{t: t, s: s, ns: "restart"}
	owner := f.owner("gone-while-stopped")
	f.dependent("left-behind", nil, configMapRef(owner, false))
	f.deleteOwner("gone-while-stopped", metav1.DeletePropagationBackground)
	if _, ok := f.secret("left-behind"); !ok {
		t.Fatal("with no collector running the dependent must still exist")
	}
	startGC(t, s)
	f.eventuallyGone("dependent of an owner deleted before start", f.secretGetter("left-behind"))
}
