package endpoints

import (
	"testing"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	discoveryv1 "k8s.io/api/discovery/v1"
	schedulingv1 "k8s.io/api/scheduling/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"
)

// TestGenerationFollowsKubeStrategies checks metadata.generation kind by
// kind as kube 1.37's registry strategies keep it: only some kinds set it
// on create and bump it on update, each by its own rule; the others never
// set or move it.
func TestGenerationFollowsKubeStrategies(t *testing.T) {
	cs := clientFor(t, "application/json")
	ns := newNamespace(t, cs)

	// ConfigMaps keep no generation: 0 on create, not moved by updates; a
	// client's value on create stays, one on update is the stored one.
	cms := cs.CoreV1().ConfigMaps(ns)
	cm, err := cms.Create(ctx(t), &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "plain"}, Data: map[string]string{"k": "v"}}, metav1.CreateOptions{})
	if err != nil || cm.Generation != 0 {
		t.Fatalf("configmap create: generation %d, want 0 (%v)", cm.Generation, err)
	}
	cm.Data["k"] = "changed"
	cm.Generation = 9
	if cm, err = cms.Update(ctx(t), cm, metav1.UpdateOptions{}); err != nil || cm.Generation != 0 {
		t.Fatalf("configmap update: generation %d, want 0 (%v)", cm.Generation, err)
	}
	given, err := cms.Create(ctx(t), &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "given", Generation: 5}}, metav1.CreateOptions{})
	if err != nil || given.Generation != 5 {
		t.Fatalf("configmap created with generation 5: %d (%v)", given.Generation, err)
	}
	// Marking for deletion bumps only a generation that is set.
	cm.Finalizers = []string{"example.com/hold"}
	if cm, err = cms.Update(ctx(t), cm, metav1.UpdateOptions{}); err != nil {
		t.Fatal(err)
	}
	if err := cms.Delete(ctx(t), "plain", metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	if cm, err = cms.Get(ctx(t), "plain", metav1.GetOptions{}); err != nil || cm.Generation != 0 || cm.DeletionTimestamp == nil {
		t.Fatalf("configmap marked for deletion: generation %d (%v)", cm.Generation, err)
	}
	cm.Finalizers = nil
	if _, err := cms.Update(ctx(t), cm, metav1.UpdateOptions{}); err != nil {
		t.Fatal(err)
	}

	svc, err := cs.CoreV1().Services(ns).Create(ctx(t), &corev1.Service{ObjectMeta: metav1.ObjectMeta{Name: "svc"},
		Spec: corev1.ServiceSpec{ClusterIP: corev1.ClusterIPNone, Ports: []corev1.ServicePort{{Port: 80}}}}, metav1.CreateOptions{})
	if err != nil || svc.Generation != 0 {
		t.Fatalf("service create: generation %d, want 0 (%v)", svc.Generation, err)
	}
	sa, err := cs.CoreV1().ServiceAccounts(ns).Create(ctx(t), &corev1.ServiceAccount{ObjectMeta: metav1.ObjectMeta{Name: "sa"}}, metav1.CreateOptions{})
	if err != nil || sa.Generation != 0 {
		t.Fatalf("serviceaccount create: generation %d, want 0 (%v)", sa.Generation, err)
	}
	nsObj, err := cs.CoreV1().Namespaces().Get(ctx(t), ns, metav1.GetOptions{})
	if err != nil || nsObj.Generation != 0 {
		t.Fatalf("namespace: generation %d, want 0 (%v)", nsObj.Generation, err)
	}

	// Deployments: 1 on create; spec and annotation changes bump it,
	// label changes do not; marking for deletion does.
	labels := map[string]string{"app": "web"}
	deps := cs.AppsV1().Deployments(ns)
	d, err := deps.Create(ctx(t), &appsv1.Deployment{
		ObjectMeta: metav1.ObjectMeta{Name: "web", Generation: 7},
		Spec: appsv1.DeploymentSpec{Replicas: ptr.To(int32(1)), Selector: &metav1.LabelSelector{MatchLabels: labels},
			Template: corev1.PodTemplateSpec{ObjectMeta: metav1.ObjectMeta{Labels: labels},
				Spec: corev1.PodSpec{Containers: []corev1.Container{{Name: "c", Image: "nginx"}}}}},
	}, metav1.CreateOptions{})
	if err != nil || d.Generation != 1 {
		t.Fatalf("deployment create: generation %d, want 1 (%v)", d.Generation, err)
	}
	d.Labels = map[string]string{"x": "y"}
	if d, err = deps.Update(ctx(t), d, metav1.UpdateOptions{}); err != nil || d.Generation != 1 {
		t.Fatalf("deployment label change: generation %d, want 1 (%v)", d.Generation, err)
	}
	d.Annotations = map[string]string{"note": "a"}
	if d, err = deps.Update(ctx(t), d, metav1.UpdateOptions{}); err != nil || d.Generation != 2 {
		t.Fatalf("deployment annotation change: generation %d, want 2 (%v)", d.Generation, err)
	}
	d.Finalizers = []string{"example.com/hold"}
	if d, err = deps.Update(ctx(t), d, metav1.UpdateOptions{}); err != nil || d.Generation != 2 {
		t.Fatalf("deployment finalizer: generation %d, want 2 (%v)", d.Generation, err)
	}
	if err := deps.Delete(ctx(t), "web", metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	if d, err = deps.Get(ctx(t), "web", metav1.GetOptions{}); err != nil || d.Generation != 3 {
		t.Fatalf("deployment marked for deletion: generation %d, want 3 (%v)", d.Generation, err)
	}
	d.Finalizers = nil
	if _, err := deps.Update(ctx(t), d, metav1.UpdateOptions{}); err != nil {
		t.Fatal(err)
	}

	// ReplicaSets: annotations do not bump it (only Deployments' do).
	rss := cs.AppsV1().ReplicaSets(ns)
	rs, err := rss.Create(ctx(t), &appsv1.ReplicaSet{
		ObjectMeta: metav1.ObjectMeta{Name: "rs"},
		Spec: appsv1.ReplicaSetSpec{Replicas: ptr.To(int32(1)), Selector: &metav1.LabelSelector{MatchLabels: labels},
			Template: corev1.PodTemplateSpec{ObjectMeta: metav1.ObjectMeta{Labels: labels},
				Spec: corev1.PodSpec{Containers: []corev1.Container{{Name: "c", Image: "nginx"}}}}},
	}, metav1.CreateOptions{})
	if err != nil || rs.Generation != 1 {
		t.Fatalf("replicaset create: generation %d, want 1 (%v)", rs.Generation, err)
	}
	rs.Annotations = map[string]string{"note": "a"}
	if rs, err = rss.Update(ctx(t), rs, metav1.UpdateOptions{}); err != nil || rs.Generation != 1 {
		t.Fatalf("replicaset annotation change: generation %d, want 1 (%v)", rs.Generation, err)
	}
	rs.Spec.Replicas = ptr.To(int32(3))
	if rs, err = rss.Update(ctx(t), rs, metav1.UpdateOptions{}); err != nil || rs.Generation != 2 {
		t.Fatalf("replicaset spec change: generation %d, want 2 (%v)", rs.Generation, err)
	}

	// PriorityClasses: 1 on create, never bumped.
	pcs := cs.SchedulingV1().PriorityClasses()
	pc, err := pcs.Create(ctx(t), &schedulingv1.PriorityClass{ObjectMeta: metav1.ObjectMeta{Name: ns + "-pc"}, Value: 10}, metav1.CreateOptions{})
	if err != nil || pc.Generation != 1 {
		t.Fatalf("priorityclass create: generation %d, want 1 (%v)", pc.Generation, err)
	}
	t.Cleanup(func() { _ = pcs.Delete(ctx(t), pc.Name, metav1.DeleteOptions{}) })
	pc.Description = "changed"
	if pc, err = pcs.Update(ctx(t), pc, metav1.UpdateOptions{}); err != nil || pc.Generation != 1 {
		t.Fatalf("priorityclass update: generation %d, want 1 (%v)", pc.Generation, err)
	}

	// EndpointSlices have no spec: any change but metadata's, and labels,
	// bump it.
	eps := cs.DiscoveryV1().EndpointSlices(ns)
	es, err := eps.Create(ctx(t), &discoveryv1.EndpointSlice{ObjectMeta: metav1.ObjectMeta{Name: "es"}, AddressType: discoveryv1.AddressTypeIPv4}, metav1.CreateOptions{})
	if err != nil || es.Generation != 1 {
		t.Fatalf("endpointslice create: generation %d, want 1 (%v)", es.Generation, err)
	}
	es.Labels = map[string]string{"a": "b"}
	if es, err = eps.Update(ctx(t), es, metav1.UpdateOptions{}); err != nil || es.Generation != 2 {
		t.Fatalf("endpointslice label change: generation %d, want 2 (%v)", es.Generation, err)
	}
	es.Annotations = map[string]string{"a": "b"}
	if es, err = eps.Update(ctx(t), es, metav1.UpdateOptions{}); err != nil || es.Generation != 2 {
		t.Fatalf("endpointslice annotation change: generation %d, want 2 (%v)", es.Generation, err)
	}
	es.Ports = []discoveryv1.EndpointPort{{Port: ptr.To(int32(80))}}
	if es, err = eps.Update(ctx(t), es, metav1.UpdateOptions{}); err != nil || es.Generation != 3 {
		t.Fatalf("endpointslice ports change: generation %d, want 3 (%v)", es.Generation, err)
	}
}
