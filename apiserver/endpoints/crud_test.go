package endpoints

import (
	"strings"
	"testing"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/utils/ptr"
)

var contentTypes = []string{"application/json", "application/vnd.kubernetes.protobuf"}

func TestConfigMapCRUD(t *testing.T) {
	for _, ct := range contentTypes {
		t.Run(ct, func(t *testing.T) {
			cs := clientFor(t, ct)
			ns := newNamespace(t, cs)
			cms := cs.CoreV1().ConfigMaps(ns)
			created, err := cms.Create(ctx(t), &corev1.ConfigMap{
				ObjectMeta: metav1.ObjectMeta{Name: "one", Labels: map[string]string{"app": "a"}},
				Data:       map[string]string{"k": "v"}}, metav1.CreateOptions{})
			if err != nil {
				t.Fatalf("create: %v", err)
			}
			if created.UID == "" || created.ResourceVersion == "" || created.CreationTimestamp.IsZero() || created.Namespace != ns {
				t.Fatalf("system metadata missing: %+v", created.ObjectMeta)
			}
			got, err := cms.Get(ctx(t), "one", metav1.GetOptions{})
			if err != nil || got.Data["k"] != "v" || got.UID != created.UID {
				t.Fatalf("get: %v %+v", err, got)
			}

			got.Data["k"] = "v2"
			updated, err := cms.Update(ctx(t), got, metav1.UpdateOptions{})
			if err != nil || updated.Data["k"] != "v2" || updated.ResourceVersion == got.ResourceVersion {
				t.Fatalf("update: %v %+v", err, updated)
			}
			// got still carries the old resourceVersion.
			if _, err := cms.Update(ctx(t), got, metav1.UpdateOptions{}); !apierrors.IsConflict(err) {
				t.Fatalf("stale update: want 409, got %v", err)
			}

			gen, err := cms.Create(ctx(t), &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{GenerateName: "gen-"}}, metav1.CreateOptions{})
			if err != nil || !strings.HasPrefix(gen.Name, "gen-") || len(gen.Name) != len("gen-")+5 {
				t.Fatalf("generateName: %v %q", err, gen.Name)
			}

			if _, err := cms.Create(ctx(t), &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "dry"}},
				metav1.CreateOptions{DryRun: []string{metav1.DryRunAll}}); err != nil {
				t.Fatalf("dry-run create: %v", err)
			}
			if _, err := cms.Get(ctx(t), "dry", metav1.GetOptions{}); !apierrors.IsNotFound(err) {
				t.Fatalf("dry-run create persisted: %v", err)
			}
			if _, err := cms.Patch(ctx(t), "one", types.MergePatchType, []byte(`{"data":{"dry":"x"}}`),
				metav1.PatchOptions{DryRun: []string{metav1.DryRunAll}}); err != nil {
				t.Fatalf("dry-run patch: %v", err)
			}
			if err := cms.Delete(ctx(t), "one", metav1.DeleteOptions{DryRun: []string{metav1.DryRunAll}}); err != nil {
				t.Fatalf("dry-run delete: %v", err)
			}
			if after, err := cms.Get(ctx(t), "one", metav1.GetOptions{}); err != nil || after.Data["dry"] != "" {
				t.Fatalf("dry-run writes persisted: %v %+v", err, after)
			}

			merged, err := cms.Patch(ctx(t), "one", types.MergePatchType, []byte(`{"data":{"m":"1"}}`), metav1.PatchOptions{})
			if err != nil || merged.Data["m"] != "1" || merged.Data["k"] != "v2" {
				t.Fatalf("merge patch: %v %+v", err, merged)
			}
			jp, err := cms.Patch(ctx(t), "one", types.JSONPatchType, []byte(`[{"op":"remove","path":"/data/m"}]`), metav1.PatchOptions{})
			if err != nil || jp.Data["m"] != "" || jp.Data["k"] != "v2" {
				t.Fatalf("json patch: %v %+v", err, jp)
			}
			smp, err := cms.Patch(ctx(t), "one", types.StrategicMergePatchType, []byte(`{"data":{"s":"1"}}`), metav1.PatchOptions{})
			if err != nil || smp.Data["s"] != "1" || smp.Data["k"] != "v2" {
				t.Fatalf("strategic merge patch: %v %+v", err, smp)
			}
			applied, err := cms.Patch(ctx(t), "applied", types.ApplyPatchType,
				[]byte(`{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"applied"},"data":{"a":"1"}}`),
				metav1.PatchOptions{FieldManager: "tester"})
			if err != nil || applied.Data["a"] != "1" || len(applied.ManagedFields) != 1 ||
				applied.ManagedFields[0].Manager != "tester" || applied.ManagedFields[0].Operation != metav1.ManagedFieldsOperationApply {
				t.Fatalf("server-side apply create: %v %+v", err, applied)
			}
			_, err = cms.Patch(ctx(t), "applied", types.ApplyPatchType,
				[]byte(`{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"applied"},"data":{"a":"2"}}`),
				metav1.PatchOptions{FieldManager: "other"})
			if !apierrors.IsConflict(err) || !strings.Contains(err.Error(), `conflict with "tester"`) {
				t.Fatalf("server-side apply by another manager: want 409 conflict, got %v", err)
			}
			if len(smp.ManagedFields) == 0 {
				t.Errorf("no managedFields recorded on update: %+v", smp.ObjectMeta)
			}

			list, err := cms.List(ctx(t), metav1.ListOptions{LabelSelector: "app=a"})
			if err != nil || len(list.Items) != 1 || list.Items[0].Name != "one" {
				t.Fatalf("label selector: %v %+v", err, list)
			}
			list, err = cms.List(ctx(t), metav1.ListOptions{FieldSelector: "metadata.name=" + gen.Name})
			if err != nil || len(list.Items) != 1 || list.Items[0].Name != gen.Name {
				t.Fatalf("field selector: %v %+v", err, list)
			}
			_, err = cms.List(ctx(t), metav1.ListOptions{FieldSelector: "spec.color=red"})
			if !apierrors.IsBadRequest(err) || !strings.Contains(err.Error(), "field label not supported: spec.color") {
				t.Fatalf("unsupported field: %v", err)
			}

			if err := cms.Delete(ctx(t), "one", metav1.DeleteOptions{Preconditions: &metav1.Preconditions{UID: ptr.To(types.UID("nope"))}}); !apierrors.IsConflict(err) {
				t.Fatalf("delete with wrong uid: want 409, got %v", err)
			}
			if err := cms.Delete(ctx(t), "one", metav1.DeleteOptions{}); err != nil {
				t.Fatalf("delete: %v", err)
			}
			if _, err := cms.Get(ctx(t), "one", metav1.GetOptions{}); !apierrors.IsNotFound(err) {
				t.Fatalf("after delete: %v", err)
			}
			if err := cms.DeleteCollection(ctx(t), metav1.DeleteOptions{}, metav1.ListOptions{}); err != nil {
				t.Fatalf("deletecollection: %v", err)
			}
			if list, err := cms.List(ctx(t), metav1.ListOptions{}); err != nil || len(list.Items) != 0 {
				t.Fatalf("after deletecollection: %v %d", err, len(list.Items))
			}
		})
	}
}

func TestFinalizersAndNamespaces(t *testing.T) {
	cs := clientFor(t, "application/json")
	ns := newNamespace(t, cs)
	cms := cs.CoreV1().ConfigMaps(ns)
	if _, err := cms.Create(ctx(t), &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "held",
		Finalizers: []string{"example.com/hold"}}}, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	if err := cms.Delete(ctx(t), "held", metav1.DeleteOptions{PropagationPolicy: ptr.To(metav1.DeletePropagationForeground)}); err != nil {
		t.Fatalf("delete: %v", err)
	}
	held, err := cms.Get(ctx(t), "held", metav1.GetOptions{})
	if err != nil || held.DeletionTimestamp == nil || len(held.Finalizers) != 2 || held.Finalizers[1] != metav1.FinalizerDeleteDependents {
		t.Fatalf("want object kept with deletionTimestamp and foregroundDeletion: %v %+v", err, held)
	}
	held.Finalizers = nil
	if _, err := cms.Update(ctx(t), held, metav1.UpdateOptions{}); err != nil {
		t.Fatalf("removing finalizers: %v", err)
	}
	if _, err := cms.Get(ctx(t), "held", metav1.GetOptions{}); !apierrors.IsNotFound(err) {
		t.Fatalf("object must be gone after its last finalizer: %v", err)
	}

	if _, err := cs.CoreV1().ConfigMaps("no-such-ns").Create(ctx(t), &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "x"}}, metav1.CreateOptions{}); !apierrors.IsNotFound(err) || !strings.Contains(err.Error(), `namespaces "no-such-ns" not found`) {
		t.Fatalf("create in missing namespace: %v", err)
	}
	if err := cs.CoreV1().Namespaces().Delete(ctx(t), ns, metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	terminating, err := cs.CoreV1().Namespaces().Get(ctx(t), ns, metav1.GetOptions{})
	if err != nil || terminating.Status.Phase != corev1.NamespaceTerminating || terminating.DeletionTimestamp == nil {
		t.Fatalf("namespace must be Terminating: %v %+v", err, terminating)
	}
	_, err = cms.Create(ctx(t), &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "late"}}, metav1.CreateOptions{})
	if !apierrors.IsForbidden(err) || !strings.Contains(err.Error(), "because it is being terminated") {
		t.Fatalf("create in terminating namespace: %v", err)
	}
	terminating.Spec.Finalizers = nil
	if _, err := cs.CoreV1().Namespaces().Finalize(ctx(t), terminating, metav1.UpdateOptions{}); err != nil {
		t.Fatalf("finalize: %v", err)
	}
	if _, err := cs.CoreV1().Namespaces().Get(ctx(t), ns, metav1.GetOptions{}); !apierrors.IsNotFound(err) {
		t.Fatalf("namespace must be gone once finalized: %v", err)
	}
}

func TestDeploymentStatusAndScale(t *testing.T) {
	for _, ct := range contentTypes {
		t.Run(ct, func(t *testing.T) {
			cs := clientFor(t, ct)
			ns := newNamespace(t, cs)
			deps := cs.AppsV1().Deployments(ns)
			labels := map[string]string{"app": "web"}
			d, err := deps.Create(ctx(t), &appsv1.Deployment{
				ObjectMeta: metav1.ObjectMeta{Name: "web"},
				Spec: appsv1.DeploymentSpec{Replicas: ptr.To(int32(1)), Selector: &metav1.LabelSelector{MatchLabels: labels},
					Template: corev1.PodTemplateSpec{ObjectMeta: metav1.ObjectMeta{Labels: labels},
						Spec: corev1.PodSpec{Containers: []corev1.Container{{Name: "c", Image: "nginx"}}}}},
			}, metav1.CreateOptions{})
			if err != nil {
				t.Fatalf("create: %v", err)
			}
			if d.Generation != 1 || d.Spec.Strategy.Type == "" {
				t.Fatalf("want generation 1 and defaults, got %d %q", d.Generation, d.Spec.Strategy.Type)
			}
			d.Status.Replicas = 7
			st, err := deps.UpdateStatus(ctx(t), d, metav1.UpdateOptions{})
			if err != nil || st.Status.Replicas != 7 || st.Generation != 1 {
				t.Fatalf("update status: %v %+v", err, st)
			}
			st.Status.Replicas = 1
			st.Spec.Replicas = ptr.To(int32(2))
			main, err := deps.Update(ctx(t), st, metav1.UpdateOptions{})
			if err != nil || main.Status.Replicas != 7 || main.Generation != 2 {
				t.Fatalf("main update must keep status and bump generation: %v %+v", err, main)
			}
			scale, err := deps.GetScale(ctx(t), "web", metav1.GetOptions{})
			if err != nil || scale.Spec.Replicas != 2 {
				t.Fatalf("get scale: %v %+v", err, scale)
			}
			scale.Spec.Replicas = 5
			if _, err := deps.UpdateScale(ctx(t), "web", scale, metav1.UpdateOptions{}); err != nil {
				t.Fatalf("update scale: %v", err)
			}
			if _, err := deps.UpdateScale(ctx(t), "web", scale, metav1.UpdateOptions{}); !apierrors.IsConflict(err) {
				t.Fatalf("stale scale update: want 409, got %v", err)
			}
			after, err := deps.Get(ctx(t), "web", metav1.GetOptions{})
			if err != nil || *after.Spec.Replicas != 5 {
				t.Fatalf("replicas after scale: %v %+v", err, after.Spec.Replicas)
			}
			if err := deps.Delete(ctx(t), "web", metav1.DeleteOptions{}); err != nil {
				t.Fatalf("delete: %v", err)
			}
		})
	}
}
