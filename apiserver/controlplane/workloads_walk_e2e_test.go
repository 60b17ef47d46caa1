package controlplane_test

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	policyv1 "k8s.io/api/policy/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	utilptr "k8s.io/utils/ptr"

	"github.com/devplane/devplane/apiserver/workloads"
)

// TestWorkloadsKubectlWalk is the walk a developer does with a Deployment.
func TestWorkloadsKubectlWalk(t *testing.T) {
	s, cs := startWorkloads(t, 1)
	ctx := context.Background()
	s.mustKubectl(t, "create", "deployment", "web", "--image=nginx:1.26", "--replicas=3")
	s.mustKubectl(t, "rollout", "status", "deployment/web", "--timeout=60s")
	pods, err := cs.CoreV1().Pods("default").List(ctx, metav1.ListOptions{LabelSelector: "app=web"})
	if err != nil {
		t.Fatal(err)
	}
	if len(pods.Items) != 3 {
		t.Fatalf("%d pods after the rollout, want 3", len(pods.Items))
	}
	for _, p := range pods.Items {
		if p.Status.Phase != corev1.PodRunning || p.Spec.NodeName != workloads.NodeName(1) || p.Status.PodIP == "" {
			t.Errorf("pod %s: phase %s node %q IP %q", p.Name, p.Status.Phase, p.Spec.NodeName, p.Status.PodIP)
		}
		if podCondition(&p, corev1.PodScheduled) != corev1.ConditionTrue {
			t.Errorf("pod %s not scheduled: %v", p.Name, p.Status.Conditions)
		}
	}

	// kubectl expose: the Service's EndpointSlice lists the pods, ready.
	s.mustKubectl(t, "expose", "deployment", "web", "--port=80")
	waitFor(t, 30*time.Second, "3 ready endpoints", func(ctx context.Context) (bool, error) {
		slices, err := cs.DiscoveryV1().EndpointSlices("default").List(ctx, metav1.ListOptions{LabelSelector: "kubernetes.io/service-name=web"})
		if err != nil {
			return false, err
		}
		ready := 0
		for _, sl := range slices.Items {
			for _, e := range sl.Endpoints {
				if utilptr.Deref(e.Conditions.Ready, false) && len(e.Addresses) == 1 {
					ready++
				}
			}
		}
		return ready == 3, nil
	})

	// Scale up and down.
	s.mustKubectl(t, "scale", "deployment/web", "--replicas=5")
	s.mustKubectl(t, "rollout", "status", "deployment/web", "--timeout=60s")
	s.mustKubectl(t, "scale", "deployment/web", "--replicas=2")
	waitFor(t, 30*time.Second, "2 pods after scaling down", func(ctx context.Context) (bool, error) {
		pods, err := cs.CoreV1().Pods("default").List(ctx, metav1.ListOptions{LabelSelector: "app=web"})
		return err == nil && len(pods.Items) == 2, err
	})

	// A new image: a new ReplicaSet, the old one scaled to 0.
	s.mustKubectl(t, "set", "image", "deployment/web", "nginx=nginx:1.27")
	s.mustKubectl(t, "rollout", "status", "deployment/web", "--timeout=60s")
	rss, err := cs.AppsV1().ReplicaSets("default").List(ctx, metav1.ListOptions{LabelSelector: "app=web"})
	if err != nil {
		t.Fatal(err)
	}
	images := map[string]int32{}
	for _, rs := range rss.Items {
		images[rs.Spec.Template.Spec.Containers[0].Image] = utilptr.Deref(rs.Spec.Replicas, -1)
	}
	if len(rss.Items) != 2 || images["nginx:1.26"] != 0 || images["nginx:1.27"] != 2 {
		t.Errorf("ReplicaSets after set image: image → replicas %v", images)
	}

	// Undo goes back to the first template.
	s.mustKubectl(t, "rollout", "undo", "deployment/web")
	s.mustKubectl(t, "rollout", "status", "deployment/web", "--timeout=60s")
	d, err := cs.AppsV1().Deployments("default").Get(ctx, "web", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if img := d.Spec.Template.Spec.Containers[0].Image; img != "nginx:1.26" {
		t.Errorf("image after rollout undo: %s", img)
	}
	s.mustKubectl(t, "wait", "--for=condition=Available", "deployment/web", "--timeout=60s")

	// Deleting the Deployment removes its ReplicaSets and pods.
	s.mustKubectl(t, "delete", "deployment", "web")
	waitFor(t, 60*time.Second, "the Deployment's pods to go", func(ctx context.Context) (bool, error) {
		pods, err := cs.CoreV1().Pods("default").List(ctx, metav1.ListOptions{LabelSelector: "app=web"})
		return err == nil && len(pods.Items) == 0, err
	})
}

func TestWorkloadsUnschedulablePod(t *testing.T) {
	_, cs := startWorkloads(t, 1)
	ctx := context.Background()
	pod := &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{Name: "picky"},
		Spec: corev1.PodSpec{
			NodeSelector: map[string]string{"disktype": "ssd"},
			Containers:   []corev1.Container{{Name: "app", Image: "nginx"}},
		},
	}
	if _, err := cs.CoreV1().Pods("default").Create(ctx, pod, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	p := waitPod(t, cs, "default", "picky", "PodScheduled=False", func(p *corev1.Pod) bool {
		return podCondition(p, corev1.PodScheduled) == corev1.ConditionFalse
	})
	var msg string
	for _, c := range p.Status.Conditions {
		if c.Type == corev1.PodScheduled {
			msg = c.Message
			if c.Reason != "Unschedulable" {
				t.Errorf("reason %q, want Unschedulable", c.Reason)
			}
		}
	}
	if !strings.Contains(msg, "0/1 nodes are available") || !strings.Contains(msg, "didn't match Pod's node affinity/selector") {
		t.Errorf("PodScheduled message %q", msg)
	}
	// Labelling the node makes it fit: the scheduler retries.
	node, err := cs.CoreV1().Nodes().Get(ctx, workloads.NodeName(1), metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	node.Labels["disktype"] = "ssd"
	if _, err := cs.CoreV1().Nodes().Update(ctx, node, metav1.UpdateOptions{}); err != nil {
		t.Fatal(err)
	}
	waitPod(t, cs, "default", "picky", "Running", func(p *corev1.Pod) bool { return p.Status.Phase == corev1.PodRunning })
}

func jobCondition(j *batchv1.Job, t batchv1.JobConditionType) *batchv1.JobCondition {
	for i := range j.Status.Conditions {
		if j.Status.Conditions[i].Type == t && j.Status.Conditions[i].Status == corev1.ConditionTrue {
			return &j.Status.Conditions[i]
		}
	}
	return nil
}

func TestWorkloadsJobsAndCronJobs(t *testing.T) {
	s, cs := startWorkloads(t, 1)
	ctx := context.Background()
	jobs := cs.BatchV1().Jobs("default")
	newJob := func(name string, annotations map[string]string, backoffLimit int32) *batchv1.Job {
		return &batchv1.Job{
			ObjectMeta: metav1.ObjectMeta{Name: name},
			Spec: batchv1.JobSpec{
				BackoffLimit: &backoffLimit,
				Template: corev1.PodTemplateSpec{
					ObjectMeta: metav1.ObjectMeta{Annotations: annotations},
					Spec: corev1.PodSpec{RestartPolicy: corev1.RestartPolicyNever,
						Containers: []corev1.Container{{Name: "work", Image: "busybox"}}},
				},
			},
		}
	}
	// Completes: its pod's container exits 0 after the default run time.
	if _, err := jobs.Create(ctx, newJob("ok", nil, 6), metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	s.mustKubectl(t, "wait", "--for=condition=Complete", "job/ok", "--timeout=60s")
	// Fails: each pod exits 1; one retry after kube's back-off, then Failed.
	if _, err := jobs.Create(ctx, newJob("bad", map[string]string{workloads.AnnotationExitCode: "1", workloads.AnnotationExitAfter: "100ms"}, 1), metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	waitFor(t, 90*time.Second, "job bad to fail", func(ctx context.Context) (bool, error) {
		j, err := jobs.Get(ctx, "bad", metav1.GetOptions{})
		if err != nil {
			return false, err
		}
		c := jobCondition(j, batchv1.JobFailed)
		if c != nil && (c.Reason != "BackoffLimitExceeded" || j.Status.Failed != 2) {
			return false, fmt.Errorf("failed with reason %s after %d failed pods", c.Reason, j.Status.Failed)
		}
		return c != nil, nil
	})
	// ttlSecondsAfterFinished: a finished Job goes away.
	ttl := newJob("short-lived", nil, 6)
	ttl.Spec.TTLSecondsAfterFinished = utilptr.To[int32](0)
	if _, err := jobs.Create(ctx, ttl, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	waitFor(t, 60*time.Second, "job short-lived to be deleted after finishing", func(ctx context.Context) (bool, error) {
		_, err := jobs.Get(ctx, "short-lived", metav1.GetOptions{})
		return apierrors.IsNotFound(err), nil
	})
	// A CronJob makes a Job on schedule (every minute: at most a minute).
	s.mustKubectl(t, "create", "cronjob", "tick", "--image=busybox", "--schedule=* * * * *", "--", "true")
	waitFor(t, 90*time.Second, "the CronJob's Job to complete", func(ctx context.Context) (bool, error) {
		list, err := jobs.List(ctx, metav1.ListOptions{})
		if err != nil {
			return false, err
		}
		for _, j := range list.Items {
			if len(j.OwnerReferences) == 1 && j.OwnerReferences[0].Name == "tick" && jobCondition(&j, batchv1.JobComplete) != nil {
				return true, nil
			}
		}
		return false, nil
	})
}

func TestWorkloadsStatefulSetWithVolumes(t *testing.T) {
	s, cs := startWorkloads(t, 1)
	ctx := context.Background()
	s.mustKubectlStdin(t, `apiVersion: apps/v1
kind: StatefulSet
metadata: {name: db}
spec:
  serviceName: db
  replicas: 3
  selector: {matchLabels: {app: db}}
  template:
    metadata: {labels: {app: db}}
    spec:
      containers: [{name: db, image: postgres}]
  volumeClaimTemplates:
  - metadata: {name: data}
    spec: {accessModes: [ReadWriteOnce], resources: {requests: {storage: 1Gi}}}
`, "apply", "-f", "-")
	s.mustKubectl(t, "rollout", "status", "statefulset/db", "--timeout=60s")
	pods, err := cs.CoreV1().Pods("default").List(ctx, metav1.ListOptions{LabelSelector: "app=db"})
	if err != nil {
		t.Fatal(err)
	}
	if len(pods.Items) != 3 {
		t.Fatalf("%d pods, want 3", len(pods.Items))
	}
	// In order: db-0 was Ready before db-1 was created, db-1 before db-2.
	byName := map[string]corev1.Pod{}
	for _, p := range pods.Items {
		byName[p.Name] = p
	}
	for i := 1; i < 3; i++ {
		prev, cur := byName[fmt.Sprintf("db-%d", i-1)], byName[fmt.Sprintf("db-%d", i)]
		var readyAt metav1.Time
		for _, c := range prev.Status.Conditions {
			if c.Type == corev1.PodReady {
				readyAt = c.LastTransitionTime
			}
		}
		if cur.CreationTimestamp.Before(&readyAt) {
			t.Errorf("%s created at %s, before %s was Ready at %s", cur.Name, cur.CreationTimestamp, prev.Name, readyAt)
		}
	}
	for i := range 3 {
		claim, err := cs.CoreV1().PersistentVolumeClaims("default").Get(ctx, fmt.Sprintf("data-db-%d", i), metav1.GetOptions{})
		if err != nil {
			t.Fatal(err)
		}
		if claim.Status.Phase != corev1.ClaimBound || claim.Spec.VolumeName == "" || utilptr.Deref(claim.Spec.StorageClassName, "") != workloads.DefaultStorageClass {
			t.Errorf("claim %s: phase %s volume %q class %v", claim.Name, claim.Status.Phase, claim.Spec.VolumeName, claim.Spec.StorageClassName)
			continue
		}
		pv, err := cs.CoreV1().PersistentVolumes().Get(ctx, claim.Spec.VolumeName, metav1.GetOptions{})
		if err != nil {
			t.Fatal(err)
		}
		if pv.Status.Phase != corev1.VolumeBound || pv.Spec.ClaimRef == nil || pv.Spec.ClaimRef.UID != claim.UID {
			t.Errorf("volume %s: phase %s claimRef %v", pv.Name, pv.Status.Phase, pv.Spec.ClaimRef)
		}
	}
	// Deleting a claim releases its volume, which the provisioner deletes
	// (reclaim policy Delete).
	s.mustKubectl(t, "delete", "statefulset", "db")
	claim, err := cs.CoreV1().PersistentVolumeClaims("default").Get(ctx, "data-db-0", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	s.mustKubectl(t, "delete", "pvc", "data-db-0")
	waitFor(t, 60*time.Second, "the released volume to be deleted", func(ctx context.Context) (bool, error) {
		_, err := cs.CoreV1().PersistentVolumes().Get(ctx, claim.Spec.VolumeName, metav1.GetOptions{})
		return apierrors.IsNotFound(err), nil
	})
}

func TestWorkloadsDaemonSetOnEveryNode(t *testing.T) {
	s, cs := startWorkloads(t, 3)
	ctx := context.Background()
	s.mustKubectlStdin(t, `apiVersion: apps/v1
kind: DaemonSet
metadata: {name: agent}
spec:
  selector: {matchLabels: {app: agent}}
  template:
    metadata: {labels: {app: agent}}
    spec:
      containers: [{name: agent, image: fluent-bit}]
`, "apply", "-f", "-")
	s.mustKubectl(t, "rollout", "status", "daemonset/agent", "--timeout=60s")
	pods, err := cs.CoreV1().Pods("default").List(ctx, metav1.ListOptions{LabelSelector: "app=agent"})
	if err != nil {
		t.Fatal(err)
	}
	nodes := map[string]bool{}
	for _, p := range pods.Items {
		if p.Status.Phase == corev1.PodRunning {
			nodes[p.Spec.NodeName] = true
		}
	}
	if len(pods.Items) != 3 || len(nodes) != 3 {
		t.Errorf("%d pods on nodes %v, want one Running on each of 3", len(pods.Items), nodes)
	}
}

// TestWorkloadsSchedulingSpreadsAndTaints: kube's scheduler spreads by
// topology (tainted nodes out of the count: nodeTaintsPolicy Honor) and
// keeps pods off tainted nodes unless they tolerate it.
func TestWorkloadsSchedulingSpreadsAndTaints(t *testing.T) {
	s, cs := startWorkloads(t, 3)
	ctx := context.Background()
	// node-3 is tainted: only tolerating pods go there.
	node, err := cs.CoreV1().Nodes().Get(ctx, workloads.NodeName(3), metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	node.Spec.Taints = []corev1.Taint{{Key: "dedicated", Value: "db", Effect: corev1.TaintEffectNoSchedule}}
	if _, err := cs.CoreV1().Nodes().Update(ctx, node, metav1.UpdateOptions{}); err != nil {
		t.Fatal(err)
	}
	s.mustKubectlStdin(t, `apiVersion: apps/v1
kind: Deployment
metadata: {name: spread}
spec:
  replicas: 4
  selector: {matchLabels: {app: spread}}
  template:
    metadata: {labels: {app: spread}}
    spec:
      topologySpreadConstraints:
      - {maxSkew: 1, topologyKey: kubernetes.io/hostname, whenUnsatisfiable: DoNotSchedule, nodeTaintsPolicy: Honor, labelSelector: {matchLabels: {app: spread}}}
      containers: [{name: web, image: nginx}]
---
apiVersion: apps/v1
kind: Deployment
metadata: {name: tolerant}
spec:
  replicas: 1
  selector: {matchLabels: {app: tolerant}}
  template:
    metadata: {labels: {app: tolerant}}
    spec:
      nodeSelector: {kubernetes.io/hostname: node-3}
      tolerations: [{key: dedicated, operator: Equal, value: db, effect: NoSchedule}]
      containers: [{name: db, image: postgres}]
`, "apply", "-f", "-")
	s.mustKubectl(t, "rollout", "status", "deployment/spread", "--timeout=60s")
	s.mustKubectl(t, "rollout", "status", "deployment/tolerant", "--timeout=60s")
	perNode := map[string]int{}
	pods, err := cs.CoreV1().Pods("default").List(ctx, metav1.ListOptions{LabelSelector: "app=spread"})
	if err != nil {
		t.Fatal(err)
	}
	for _, p := range pods.Items {
		perNode[p.Spec.NodeName]++
	}
	if perNode[workloads.NodeName(3)] != 0 || perNode[workloads.NodeName(1)] != 2 || perNode[workloads.NodeName(2)] != 2 {
		t.Errorf("spread pods per node %v: want 2 on node-1, 2 on node-2, none on tainted node-3", perNode)
	}
	pods, err = cs.CoreV1().Pods("default").List(ctx, metav1.ListOptions{LabelSelector: "app=tolerant"})
	if err != nil || len(pods.Items) != 1 || pods.Items[0].Spec.NodeName != workloads.NodeName(3) {
		t.Errorf("tolerating pod: %v (%v), want it on node-3", pods, err)
	}
}

// TestWorkloadsPDBBlocksEviction: kube's disruption controller keeps the
// budget's status, and an eviction that would break it is refused.
func TestWorkloadsPDBBlocksEviction(t *testing.T) {
	s, cs := startWorkloads(t, 1)
	ctx := context.Background()
	s.mustKubectl(t, "create", "deployment", "guarded", "--image=nginx", "--replicas=2")
	s.mustKubectl(t, "rollout", "status", "deployment/guarded", "--timeout=60s")
	s.mustKubectl(t, "create", "poddisruptionbudget", "guarded", "--selector=app=guarded", "--min-available=2")
	waitFor(t, 30*time.Second, "the budget's status", func(ctx context.Context) (bool, error) {
		pdb, err := cs.PolicyV1().PodDisruptionBudgets("default").Get(ctx, "guarded", metav1.GetOptions{})
		if err != nil {
			return false, err
		}
		return pdb.Status.ObservedGeneration == pdb.Generation && pdb.Status.CurrentHealthy == 2 && pdb.Status.ExpectedPods == 2, nil
	})
	pods, err := cs.CoreV1().Pods("default").List(ctx, metav1.ListOptions{LabelSelector: "app=guarded"})
	if err != nil || len(pods.Items) != 2 {
		t.Fatalf("pods: %v (%v)", pods, err)
	}
	victim := pods.Items[0].Name
	evict := func() error {
		return cs.PolicyV1().Evictions("default").Evict(ctx, &policyv1.Eviction{ObjectMeta: metav1.ObjectMeta{Name: victim, Namespace: "default"}})
	}
	err = evict()
	if !apierrors.IsTooManyRequests(err) || !strings.Contains(err.Error(), "disruption budget") {
		t.Fatalf("eviction against a budget allowing none: %v, want 429 naming the disruption budget", err)
	}
	// A looser budget lets one go.
	s.mustKubectl(t, "patch", "poddisruptionbudget", "guarded", "--type=merge", "-p", `{"spec":{"minAvailable":1}}`)
	waitFor(t, 30*time.Second, "the eviction to be allowed", func(ctx context.Context) (bool, error) {
		err := evict()
		if apierrors.IsTooManyRequests(err) {
			return false, nil
		}
		return err == nil, err
	})
	waitFor(t, 30*time.Second, "the evicted pod to go", func(ctx context.Context) (bool, error) {
		_, err := cs.CoreV1().Pods("default").Get(ctx, victim, metav1.GetOptions{})
		return apierrors.IsNotFound(err), nil
	})
}
