package controlplane_test

import (
	"context"
	"encoding/json"
	"strings"
	"testing"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	flowcontrolv1 "k8s.io/api/flowcontrol/v1"
	storagev1 "k8s.io/api/storage/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/watch"
	"k8s.io/client-go/kubernetes"
	utilptr "k8s.io/utils/ptr"
)

// ghostNode names a node no kubelet runs: pods bound to it stay
// Terminating once deleted, as on kube.
const ghostNode = "no-kubelet-here"

func simpleDeployment(name string) *appsv1.Deployment {
	labels := map[string]string{"app": name}
	return &appsv1.Deployment{
		ObjectMeta: metav1.ObjectMeta{Name: name, Labels: map[string]string{"team": "a"}},
		Spec: appsv1.DeploymentSpec{
			Replicas: utilptr.To[int32](1),
			Selector: &metav1.LabelSelector{MatchLabels: labels},
			Template: corev1.PodTemplateSpec{
				ObjectMeta: metav1.ObjectMeta{Labels: labels},
				Spec:       corev1.PodSpec{Containers: []corev1.Container{{Name: "app", Image: "nginx:1.27"}}},
			},
		},
	}
}

// A write to /status starts from the request's object and resets only what
// the kind's status strategy says (kube's PrepareForUpdate of its status
// strategy), while a main-resource update keeps the stored status.
func TestStatusWritesKeepMetadataAsTheKindsStrategySays(t *testing.T) {
	s := startControlPlane(t, t.TempDir())
	cs := s.clientset(t, false)
	ctx := context.Background()

	t.Run("deployment: annotations kept, labels and spec reset", func(t *testing.T) {
		deployments := cs.AppsV1().Deployments("default")
		d, err := deployments.Create(ctx, simpleDeployment("status-meta"), metav1.CreateOptions{})
		if err != nil {
			t.Fatal(err)
		}
		d.Annotations = map[string]string{"deployment.kubernetes.io/revision": "3"}
		d.Labels["team"] = "b"
		d.Spec.Replicas = utilptr.To[int32](5)
		d.Status.ObservedGeneration = 1
		d.Status.Replicas = 1
		got, err := deployments.UpdateStatus(ctx, d, metav1.UpdateOptions{})
		if err != nil {
			t.Fatal(err)
		}
		if got.Annotations["deployment.kubernetes.io/revision"] != "3" {
			t.Errorf("annotations after a status write = %v, want the revision written", got.Annotations)
		}
		if got.Labels["team"] != "a" {
			t.Errorf("labels after a status write = %v, want the stored ones (team=a)", got.Labels)
		}
		if *got.Spec.Replicas != 1 || got.Status.Replicas != 1 || got.Status.ObservedGeneration != 1 {
			t.Errorf("spec.replicas=%d status.replicas=%d observedGeneration=%d, want 1 1 1",
				*got.Spec.Replicas, got.Status.Replicas, got.Status.ObservedGeneration)
		}

		// The main resource keeps the stored status.
		got.Spec.Replicas = utilptr.To[int32](2)
		got.Status.Replicas = 9
		updated, err := deployments.Update(ctx, got, metav1.UpdateOptions{})
		if err != nil {
			t.Fatal(err)
		}
		if *updated.Spec.Replicas != 2 || updated.Status.Replicas != 1 {
			t.Errorf("after an update: spec.replicas=%d status.replicas=%d, want 2 and the stored 1", *updated.Spec.Replicas, updated.Status.Replicas)
		}

		// Server-side apply through /status: the same rules.
		body := `{"apiVersion":"apps/v1","kind":"Deployment","metadata":{"name":"status-meta",` +
			`"labels":{"applied":"yes"},"annotations":{"applied":"yes"}},"spec":{"replicas":7},"status":{"observedGeneration":2}}`
		applied, err := deployments.Patch(ctx, "status-meta", types.ApplyPatchType, []byte(body),
			metav1.PatchOptions{FieldManager: "status-writer", Force: utilptr.To(true)}, "status")
		if err != nil {
			t.Fatal(err)
		}
		if applied.Annotations["applied"] != "yes" || applied.Labels["applied"] != "" ||
			*applied.Spec.Replicas != 2 || applied.Status.ObservedGeneration != 2 {
			t.Errorf("after apply to /status: annotations=%v labels=%v spec.replicas=%d observedGeneration=%d, "+
				"want the annotation, not the label, replicas 2, observedGeneration 2",
				applied.Annotations, applied.Labels, *applied.Spec.Replicas, applied.Status.ObservedGeneration)
		}
		// What /status resets is not the status writer's (kube's reset
		// fields): it owns no spec or labels, so applying the label on the
		// main resource conflicts with nobody.
		for _, entry := range applied.ManagedFields {
			if entry.Manager != "status-writer" {
				continue
			}
			owned := string(entry.FieldsV1.Raw)
			if entry.Subresource != "status" || strings.Contains(owned, `"f:spec"`) || strings.Contains(owned, `"f:labels"`) ||
				!strings.Contains(owned, `"f:annotations"`) || !strings.Contains(owned, `"f:status"`) {
				t.Errorf("status-writer's managedFields entry: subresource %q, fields %s; want status and annotations only", entry.Subresource, owned)
			}
		}
		mainApply := `{"apiVersion":"apps/v1","kind":"Deployment","metadata":{"name":"status-meta","labels":{"applied":"main"}}}`
		if _, err := deployments.Patch(ctx, "status-meta", types.ApplyPatchType, []byte(mainApply),
			metav1.PatchOptions{FieldManager: "spec-writer"}); err != nil {
			t.Errorf("apply of a label after a status apply that sent it: %v, want no conflict", err)
		}
		// And the other way: what the main resource resets (the status)
		// is not its appliers' either, whatever manifest they send.
		withStatus := `{"apiVersion":"apps/v1","kind":"Deployment","metadata":{"name":"status-meta"},"spec":{"replicas":3},"status":{"replicas":5}}`
		applied, err = deployments.Patch(ctx, "status-meta", types.ApplyPatchType, []byte(withStatus),
			metav1.PatchOptions{FieldManager: "manifest-applier", Force: utilptr.To(true)})
		if err != nil {
			t.Fatal(err)
		}
		for _, entry := range applied.ManagedFields {
			if owned := string(entry.FieldsV1.Raw); entry.Manager == "manifest-applier" && strings.Contains(owned, `"f:status"`) {
				t.Errorf("an apply to the main resource owns status fields: %s", owned)
			}
		}
		if applied.Status.Replicas == 5 {
			t.Errorf("an apply to the main resource set the status")
		}
	})

	t.Run("pod: labels and annotations kept, owner references reset", func(t *testing.T) {
		owner, err := cs.CoreV1().ConfigMaps("default").Create(ctx,
			&corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "pod-owner"}}, metav1.CreateOptions{})
		if err != nil {
			t.Fatal(err)
		}
		pod := &corev1.Pod{
			ObjectMeta: metav1.ObjectMeta{Name: "status-meta", OwnerReferences: []metav1.OwnerReference{
				{APIVersion: "v1", Kind: "ConfigMap", Name: owner.Name, UID: owner.UID}}},
			Spec: corev1.PodSpec{Containers: []corev1.Container{{Name: "app", Image: "nginx:1.27"}}},
		}
		pods := cs.CoreV1().Pods("default")
		p, err := pods.Create(ctx, pod, metav1.CreateOptions{})
		if err != nil {
			t.Fatal(err)
		}
		p.Labels = map[string]string{"written": "through-status"}
		p.Annotations = map[string]string{"note": "kept"}
		p.OwnerReferences = nil
		p.Spec.ActiveDeadlineSeconds = utilptr.To[int64](5)
		p.Status.Message = "hello"
		got, err := pods.UpdateStatus(ctx, p, metav1.UpdateOptions{})
		if err != nil {
			t.Fatal(err)
		}
		if got.Labels["written"] != "through-status" || got.Annotations["note"] != "kept" {
			t.Errorf("labels %v annotations %v after a pod status write, want the request's", got.Labels, got.Annotations)
		}
		if len(got.OwnerReferences) != 1 || got.OwnerReferences[0].UID != owner.UID {
			t.Errorf("ownerReferences after a pod status write = %v, want the stored one", got.OwnerReferences)
		}
		if got.Spec.ActiveDeadlineSeconds != nil || got.Status.Message != "hello" {
			t.Errorf("spec.activeDeadlineSeconds=%v status.message=%q, want the stored spec and the written status",
				got.Spec.ActiveDeadlineSeconds, got.Status.Message)
		}
	})

	t.Run("volume attachment, flow schema: metadata reset", func(t *testing.T) {
		attachments := cs.StorageV1().VolumeAttachments()
		va, err := attachments.Create(ctx, &storagev1.VolumeAttachment{ObjectMeta: metav1.ObjectMeta{Name: "status-meta"},
			Spec: storagev1.VolumeAttachmentSpec{Attacher: "example.com/csi", NodeName: ghostNode,
				Source: storagev1.VolumeAttachmentSource{PersistentVolumeName: utilptr.To("pv")}}}, metav1.CreateOptions{})
		if err != nil {
			t.Fatal(err)
		}
		va.Labels = map[string]string{"written": "through-status"}
		va.Status.Attached = true
		got, err := attachments.UpdateStatus(ctx, va, metav1.UpdateOptions{})
		if err != nil {
			t.Fatal(err)
		}
		if len(got.Labels) != 0 || !got.Status.Attached {
			t.Errorf("volume attachment after a status write: labels %v attached %v, want no labels and attached", got.Labels, got.Status.Attached)
		}

		schemas := cs.FlowcontrolV1().FlowSchemas()
		fs, err := schemas.Create(ctx, &flowcontrolv1.FlowSchema{ObjectMeta: metav1.ObjectMeta{Name: "status-meta"},
			Spec: flowcontrolv1.FlowSchemaSpec{MatchingPrecedence: 9000,
				PriorityLevelConfiguration: flowcontrolv1.PriorityLevelConfigurationReference{Name: "global-default"}}}, metav1.CreateOptions{})
		if err != nil {
			t.Fatal(err)
		}
		fs.Labels = map[string]string{"written": "through-status"}
		fs.Annotations = map[string]string{"written": "through-status"}
		gotFS, err := schemas.UpdateStatus(ctx, fs, metav1.UpdateOptions{})
		if err != nil {
			t.Fatal(err)
		}
		if len(gotFS.Labels) != 0 || gotFS.Annotations["written"] != "" {
			t.Errorf("flow schema after a status write: labels %v annotations %v, want the stored metadata", gotFS.Labels, gotFS.Annotations)
		}
	})

	t.Run("namespace: an update keeps spec.finalizers", func(t *testing.T) {
		createNamespace(t, cs, "finalizers-kept")
		ns, err := cs.CoreV1().Namespaces().Get(ctx, "finalizers-kept", metav1.GetOptions{})
		if err != nil {
			t.Fatal(err)
		}
		ns.Spec.Finalizers = append(ns.Spec.Finalizers, "example.com/extra")
		got, err := cs.CoreV1().Namespaces().Update(ctx, ns, metav1.UpdateOptions{})
		if err != nil {
			t.Fatal(err)
		}
		if len(got.Spec.Finalizers) != 1 || got.Spec.Finalizers[0] != corev1.FinalizerKubernetes {
			t.Errorf("spec.finalizers after an update = %v, want the stored [kubernetes] (only /finalize changes them)", got.Spec.Finalizers)
		}
	})
}

// An immediate DELETE answers with the deleted object for the kinds whose
// kube storage sets ReturnDeletedObject, and with a Success Status for the
// others.
func TestImmediateDeleteReturnsTheObjectAsKubeDoes(t *testing.T) {
	s := startControlPlane(t, t.TempDir())
	cs := s.clientset(t, false)
	ctx := context.Background()
	const ns = "default"
	create := []struct {
		kind, path string
		create     func() error
	}{
		{"Service", "/api/v1/namespaces/default/services/del", func() error {
			_, err := cs.CoreV1().Services(ns).Create(ctx, &corev1.Service{ObjectMeta: metav1.ObjectMeta{Name: "del"},
				Spec: corev1.ServiceSpec{Ports: []corev1.ServicePort{{Port: 80}}}}, metav1.CreateOptions{})
			return err
		}},
		{"ServiceAccount", "/api/v1/namespaces/default/serviceaccounts/del", func() error {
			_, err := cs.CoreV1().ServiceAccounts(ns).Create(ctx, &corev1.ServiceAccount{ObjectMeta: metav1.ObjectMeta{Name: "del"}}, metav1.CreateOptions{})
			return err
		}},
		{"PersistentVolumeClaim", "/api/v1/namespaces/default/persistentvolumeclaims/del", func() error {
			_, err := cs.CoreV1().PersistentVolumeClaims(ns).Create(ctx, &corev1.PersistentVolumeClaim{ObjectMeta: metav1.ObjectMeta{Name: "del"},
				Spec: corev1.PersistentVolumeClaimSpec{AccessModes: []corev1.PersistentVolumeAccessMode{corev1.ReadWriteOnce},
					Resources: corev1.VolumeResourceRequirements{Requests: corev1.ResourceList{corev1.ResourceStorage: resource.MustParse("1Gi")}}}},
				metav1.CreateOptions{})
			return err
		}},
		{"PersistentVolume", "/api/v1/persistentvolumes/del", func() error {
			_, err := cs.CoreV1().PersistentVolumes().Create(ctx, &corev1.PersistentVolume{ObjectMeta: metav1.ObjectMeta{Name: "del"},
				Spec: corev1.PersistentVolumeSpec{AccessModes: []corev1.PersistentVolumeAccessMode{corev1.ReadWriteOnce},
					Capacity:               corev1.ResourceList{corev1.ResourceStorage: resource.MustParse("1Gi")},
					PersistentVolumeSource: corev1.PersistentVolumeSource{HostPath: &corev1.HostPathVolumeSource{Path: "/tmp/del"}}}},
				metav1.CreateOptions{})
			return err
		}},
		{"PodTemplate", "/api/v1/namespaces/default/podtemplates/del", func() error {
			_, err := cs.CoreV1().PodTemplates(ns).Create(ctx, &corev1.PodTemplate{ObjectMeta: metav1.ObjectMeta{Name: "del"},
				Template: corev1.PodTemplateSpec{Spec: corev1.PodSpec{Containers: []corev1.Container{{Name: "app", Image: "nginx:1.27"}}}}},
				metav1.CreateOptions{})
			return err
		}},
		{"ResourceQuota", "/api/v1/namespaces/default/resourcequotas/del", func() error {
			_, err := cs.CoreV1().ResourceQuotas(ns).Create(ctx, &corev1.ResourceQuota{ObjectMeta: metav1.ObjectMeta{Name: "del"},
				Spec: corev1.ResourceQuotaSpec{Hard: corev1.ResourceList{corev1.ResourcePods: resource.MustParse("100")}}}, metav1.CreateOptions{})
			return err
		}},
		{"StorageClass", "/apis/storage.k8s.io/v1/storageclasses/del", func() error {
			_, err := cs.StorageV1().StorageClasses().Create(ctx, &storagev1.StorageClass{ObjectMeta: metav1.ObjectMeta{Name: "del"},
				Provisioner: "example.com/none"}, metav1.CreateOptions{})
			return err
		}},
		{"CSIDriver", "/apis/storage.k8s.io/v1/csidrivers/del", func() error {
			_, err := cs.StorageV1().CSIDrivers().Create(ctx, &storagev1.CSIDriver{ObjectMeta: metav1.ObjectMeta{Name: "del"}}, metav1.CreateOptions{})
			return err
		}},
		{"Status", "/api/v1/namespaces/default/configmaps/del", func() error {
			_, err := cs.CoreV1().ConfigMaps(ns).Create(ctx, &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "del"}}, metav1.CreateOptions{})
			return err
		}},
	}
	for _, c := range create {
		if err := c.create(); err != nil {
			t.Fatalf("creating for %s: %v", c.path, err)
		}
		raw, err := cs.CoreV1().RESTClient().Delete().AbsPath(c.path).SetHeader("Accept", "application/json").DoRaw(ctx)
		if err != nil {
			t.Fatalf("DELETE %s: %v", c.path, err)
		}
		var answer struct {
			Kind     string            `json:"kind"`
			Metadata metav1.ObjectMeta `json:"metadata"`
		}
		if err := json.Unmarshal(raw, &answer); err != nil {
			t.Fatalf("DELETE %s: %v in %s", c.path, err, raw)
		}
		if answer.Kind != c.kind {
			t.Errorf("DELETE %s answered a %s, want a %s: %s", c.path, answer.Kind, c.kind, raw)
		} else if c.kind != "Status" && answer.Metadata.Name != "del" {
			t.Errorf("DELETE %s answered %s, want the deleted object", c.path, raw)
		}
	}
}

// watchPod follows one pod's events.
func watchPod(t *testing.T, cs kubernetes.Interface, ns, name string) watch.Interface {
	t.Helper()
	w, err := cs.CoreV1().Pods(ns).Watch(context.Background(), metav1.ListOptions{FieldSelector: "metadata.name=" + name})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(w.Stop)
	return w
}

// nextPodEvent waits (bounded) for the pod event that satisfies want.
func nextPodEvent(t *testing.T, w watch.Interface, what string, want func(watch.EventType, *corev1.Pod) bool) *corev1.Pod {
	t.Helper()
	timeout := time.After(30 * time.Second)
	for {
		select {
		case ev, ok := <-w.ResultChan():
			if !ok {
				t.Fatalf("watch ended before %s", what)
			}
			if pod, isPod := ev.Object.(*corev1.Pod); isPod && want(ev.Type, pod) {
				return pod
			}
		case <-timeout:
			t.Fatalf("no watch event: %s", what)
		}
	}
}

// deleteWithGrace30 deletes a pod of default with a 30s grace and returns
// the watch on it and the event that marked it for deletion.
func deleteWithGrace30(t *testing.T, cs kubernetes.Interface, name string) (watch.Interface, *corev1.Pod) {
	t.Helper()
	w := watchPod(t, cs, "default", name)
	err := cs.CoreV1().Pods("default").Delete(context.Background(), name, metav1.DeleteOptions{GracePeriodSeconds: utilptr.To[int64](30)})
	if err != nil {
		t.Fatal(err)
	}
	marked := nextPodEvent(t, w, "the pod marked for deletion", func(typ watch.EventType, p *corev1.Pod) bool {
		return typ == watch.Modified && p.DeletionTimestamp != nil
	})
	if g := marked.DeletionGracePeriodSeconds; g == nil || *g != 30 {
		t.Fatalf("deletionGracePeriodSeconds = %v, want 30", g)
	}
	return w, marked
}

// Pods are deleted gracefully as kube's pod strategy says: with the grace
// asked for (or the pod's terminationGracePeriodSeconds) once a kubelet
// runs them, at once when not scheduled; a later delete may only shorten
// the grace, and grace 0 deletes.
func TestPodsAreDeletedGracefully(t *testing.T) {
	s := startControlPlane(t, t.TempDir())
	cs := s.clientset(t, false)
	ctx := context.Background()
	pods := cs.CoreV1().Pods("default")

	t.Run("unscheduled pod goes at once", func(t *testing.T) {
		if _, err := pods.Create(ctx, boundPod("unscheduled", func(p *corev1.Pod) { p.Spec.NodeName = "" }), metav1.CreateOptions{}); err != nil {
			t.Fatal(err)
		}
		if err := pods.Delete(ctx, "unscheduled", metav1.DeleteOptions{GracePeriodSeconds: utilptr.To[int64](30)}); err != nil {
			t.Fatal(err)
		}
		if _, err := pods.Get(ctx, "unscheduled", metav1.GetOptions{}); !apierrors.IsNotFound(err) {
			t.Fatalf("get after deleting an unscheduled pod: %v, want NotFound", err)
		}
	})

	t.Run("scheduled pod terminates with its grace", func(t *testing.T) {
		created, err := pods.Create(ctx, boundPod("graceful", func(p *corev1.Pod) { p.Spec.NodeName = ghostNode }), metav1.CreateOptions{})
		if err != nil {
			t.Fatal(err)
		}
		w, marked := deleteWithGrace30(t, cs, "graceful")
		if left := time.Until(marked.DeletionTimestamp.Time); left < 20*time.Second || left > 31*time.Second {
			t.Errorf("deletionTimestamp is %v from now, want about 30s", left)
		}
		if marked.Generation != created.Generation+1 {
			t.Errorf("generation %d after a graceful delete, want %d", marked.Generation, created.Generation+1)
		}

		// A longer grace changes nothing, nor does a delete without one.
		for _, grace := range []*int64{utilptr.To[int64](60), nil} {
			if err := pods.Delete(ctx, "graceful", metav1.DeleteOptions{GracePeriodSeconds: grace}); err != nil {
				t.Fatal(err)
			}
		}
		again, err := pods.Get(ctx, "graceful", metav1.GetOptions{})
		if err != nil {
			t.Fatal(err)
		}
		if *again.DeletionGracePeriodSeconds != 30 || !again.DeletionTimestamp.Equal(marked.DeletionTimestamp) {
			t.Errorf("after longer deletes: grace %d, deletionTimestamp %v; want 30 and %v unchanged",
				*again.DeletionGracePeriodSeconds, again.DeletionTimestamp, marked.DeletionTimestamp)
		}

		// A shorter one moves the deadline back by the difference.
		if err := pods.Delete(ctx, "graceful", metav1.DeleteOptions{GracePeriodSeconds: utilptr.To[int64](10)}); err != nil {
			t.Fatal(err)
		}
		shorter, err := pods.Get(ctx, "graceful", metav1.GetOptions{})
		if err != nil {
			t.Fatal(err)
		}
		if *shorter.DeletionGracePeriodSeconds != 10 {
			t.Errorf("grace after a shorter delete = %d, want 10", *shorter.DeletionGracePeriodSeconds)
		}
		if moved := marked.DeletionTimestamp.Sub(shorter.DeletionTimestamp.Time); moved < 19*time.Second || moved > 21*time.Second {
			t.Errorf("a shorter grace moved the deletionTimestamp back by %v, want 20s", moved)
		}

		// No kubelet runs the node: the pod stays until deleted with grace 0.
		if _, err := pods.Get(ctx, "graceful", metav1.GetOptions{}); err != nil {
			t.Fatalf("the terminating pod: %v", err)
		}
		if err := pods.Delete(ctx, "graceful", metav1.DeleteOptions{GracePeriodSeconds: utilptr.To[int64](0)}); err != nil {
			t.Fatal(err)
		}
		nextPodEvent(t, w, "the pod deleted", func(typ watch.EventType, _ *corev1.Pod) bool { return typ == watch.Deleted })
	})
}

// Deleting a namespace deletes its pods first and the rest only once they
// are gone, as kube's namespace controller: a pod's ConfigMap outlives it.
func TestNamespaceDeletionDeletesPodsFirst(t *testing.T) {
	s := startControlPlane(t, t.TempDir())
	cs := s.clientset(t, false)
	ctx := context.Background()
	const ns = "pods-first"
	createNamespace(t, cs, ns)
	if _, err := cs.CoreV1().ConfigMaps(ns).Create(ctx, &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "config"}}, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	if _, err := cs.CoreV1().Pods(ns).Create(ctx, boundPod("user", func(p *corev1.Pod) { p.Spec.NodeName = ghostNode }), metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	if err := cs.CoreV1().Namespaces().Delete(ctx, ns, metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	waitPod(t, cs, ns, "user", "terminating", func(p *corev1.Pod) bool { return p.DeletionTimestamp != nil })
	// The namespace controller retries at least every second: three passes.
	for range 6 {
		time.Sleep(500 * time.Millisecond)
		if _, err := cs.CoreV1().ConfigMaps(ns).Get(ctx, "config", metav1.GetOptions{}); err != nil {
			t.Fatalf("the ConfigMap while its namespace's pod terminates: %v, want it kept", err)
		}
	}
	got, err := cs.CoreV1().Namespaces().Get(ctx, ns, metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range got.Status.Conditions {
		if c.Type == corev1.NamespaceContentRemaining && (c.Status != corev1.ConditionTrue || !strings.Contains(c.Message, "pods. has 1 resource instances")) {
			t.Errorf("condition %s = %s %q, want pods remaining", c.Type, c.Status, c.Message)
		}
	}
	if err := cs.CoreV1().Pods(ns).Delete(ctx, "user", metav1.DeleteOptions{GracePeriodSeconds: utilptr.To[int64](0)}); err != nil {
		t.Fatal(err)
	}
	waitFor(t, 30*time.Second, "namespace "+ns+" gone", func(ctx context.Context) (bool, error) {
		_, err := cs.CoreV1().Namespaces().Get(ctx, ns, metav1.GetOptions{})
		if apierrors.IsNotFound(err) {
			return true, nil
		}
		return false, err
	})
}

// A Deployment gets its revision, which kube's deployment controller
// writes through /status, and kubectl shows its rollout history.
func TestWorkloadsDeploymentRevision(t *testing.T) {
	s, cs := startWorkloads(t, 1)
	ctx := context.Background()

	if _, err := cs.AppsV1().Deployments("default").Create(ctx, simpleDeployment("revised"), metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	waitFor(t, 60*time.Second, "deployment revision 1", func(ctx context.Context) (bool, error) {
		d, err := cs.AppsV1().Deployments("default").Get(ctx, "revised", metav1.GetOptions{})
		return err == nil && d.Annotations["deployment.kubernetes.io/revision"] == "1", err
	})
	history := s.mustKubectl(t, "rollout", "history", "deployment/revised")
	if !strings.Contains(history, "REVISION") || !strings.Contains(history, "\n1 ") {
		t.Errorf("kubectl rollout history:\n%s\nwant revision 1", history)
	}
}

// A running pod deleted with grace is stopped by its (simulated) kubelet,
// which writes the stopped status and then deletes it, well before the
// grace runs out.
func TestWorkloadsKubeletEndsGracefullyDeletedPods(t *testing.T) {
	_, cs := startWorkloads(t, 1)
	ctx := context.Background()
	pods := cs.CoreV1().Pods("default")
	if _, err := pods.Create(ctx, boundPod("stopped", nil), metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	waitPod(t, cs, "default", "stopped", "running", func(p *corev1.Pod) bool { return p.Status.Phase == corev1.PodRunning })
	w, marked := deleteWithGrace30(t, cs, "stopped")
	stopped := nextPodEvent(t, w, "the kubelet's stopped status", func(_ watch.EventType, p *corev1.Pod) bool {
		return p.Status.Phase == corev1.PodFailed
	})
	if cs := stopped.Status.ContainerStatuses; len(cs) != 1 || cs[0].State.Terminated == nil || cs[0].State.Terminated.ExitCode != 137 {
		t.Errorf("container statuses once stopped: %+v, want app terminated with 137", cs)
	}
	nextPodEvent(t, w, "the pod deleted by its kubelet", func(typ watch.EventType, _ *corev1.Pod) bool { return typ == watch.Deleted })
	if left := time.Until(marked.DeletionTimestamp.Time); left < 10*time.Second {
		t.Errorf("the kubelet took until %v before the deadline; a simulated container stops at once", left)
	}
}

// namespaces/finalize is kube's finalize strategy: update alone (get and
// patch are 405, as kube answers a method without a route), the request's
// namespace but its status, each finalizer name validated by kube's rules.
// Subresources refuse the verbs they do not serve with kube's 405.
func TestNamespaceFinalizeAsKube(t *testing.T) {
	s := startControlPlane(t, t.TempDir())
	cs := s.clientset(t, false)
	ctx := context.Background()
	createNamespace(t, cs, "finalized")
	rc := cs.CoreV1().RESTClient()
	const kube405 = "the server does not allow this method on the requested resource"
	methodNotAllowed := func(what string, err error) {
		t.Helper()
		if !apierrors.IsMethodNotSupported(err) || !strings.Contains(err.Error(), kube405) {
			t.Errorf("%s: %v, want 405 %q", what, err, kube405)
		}
	}
	methodNotAllowed("GET namespaces/finalized/finalize", rc.Get().Resource("namespaces").Name("finalized").SubResource("finalize").Do(ctx).Error())
	methodNotAllowed("PATCH namespaces/finalized/finalize", rc.Patch(types.MergePatchType).Resource("namespaces").Name("finalized").
		SubResource("finalize").Body([]byte(`{"spec":{"finalizers":[]}}`)).Do(ctx).Error())
	if _, err := cs.AppsV1().Deployments("default").Create(ctx, simpleDeployment("no-status-delete"), metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	methodNotAllowed("DELETE deployments/no-status-delete/status", cs.AppsV1().RESTClient().Delete().Namespace("default").
		Resource("deployments").Name("no-status-delete").SubResource("status").Do(ctx).Error())
	if _, err := cs.AppsV1().Deployments("default").Get(ctx, "no-status-delete", metav1.GetOptions{}); err != nil {
		t.Errorf("the deployment after a refused DELETE of its status: %v", err)
	}

	// Discovery offers finalize for update only.
	resources, err := cs.Discovery().ServerResourcesForGroupVersion("v1")
	if err != nil {
		t.Fatal(err)
	}
	for _, r := range resources.APIResources {
		if r.Name == "namespaces/finalize" && (len(r.Verbs) != 1 || r.Verbs[0] != "update") {
			t.Errorf("namespaces/finalize verbs %v, want [update]", r.Verbs)
		}
	}

	ns, err := cs.CoreV1().Namespaces().Get(ctx, "finalized", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	bad := ns.DeepCopy()
	bad.Spec.Finalizers = []corev1.FinalizerName{"not a name!"}
	_, err = cs.CoreV1().Namespaces().Finalize(ctx, bad, metav1.UpdateOptions{})
	if !apierrors.IsInvalid(err) || !strings.Contains(err.Error(), `spec.finalizers[0]: Invalid value: "not a name!"`) ||
		!strings.Contains(err.Error(), "name is neither a standard finalizer name nor is it fully qualified") {
		t.Errorf("finalize with a bad finalizer name: %v, want kube's 422", err)
	}

	// The request's metadata and spec are taken, its status is not.
	ns.Spec.Finalizers = []corev1.FinalizerName{corev1.FinalizerKubernetes, "example.com/extra"}
	ns.Labels["through"] = "finalize"
	ns.Status.Phase = corev1.NamespaceTerminating
	got, err := cs.CoreV1().Namespaces().Finalize(ctx, ns, metav1.UpdateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if len(got.Spec.Finalizers) != 2 || got.Spec.Finalizers[1] != "example.com/extra" || got.Labels["through"] != "finalize" ||
		got.Status.Phase != corev1.NamespaceActive {
		t.Errorf("after finalize: finalizers %v labels %v phase %s, want both finalizers, the label, Active", got.Spec.Finalizers, got.Labels, got.Status.Phase)
	}
}
