package controlplane_test

import (
	"context"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"strings"
	"testing"

	certificatesv1 "k8s.io/api/certificates/v1"
	corev1 "k8s.io/api/core/v1"
	policyv1 "k8s.io/api/policy/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/intstr"
	"k8s.io/client-go/kubernetes"
)

// runningPod creates a pod, binds it and reports it Running (and Ready or
// not), as a kubelet would.
func runningPod(t *testing.T, cs kubernetes.Interface, ns, name string, labels map[string]string, ready bool) *corev1.Pod {
	t.Helper()
	ctx := context.Background()
	pods := cs.CoreV1().Pods(ns)
	if _, err := pods.Create(ctx, simplePod(name, labels), metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	if err := pods.Bind(ctx, &corev1.Binding{ObjectMeta: metav1.ObjectMeta{Name: name}, Target: corev1.ObjectReference{Name: "node-a"}}, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	pod, err := pods.Get(ctx, name, metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	status := corev1.ConditionFalse
	if ready {
		status = corev1.ConditionTrue
	}
	pod.Status.Phase = corev1.PodRunning
	pod.Status.Conditions = append(pod.Status.Conditions, corev1.PodCondition{Type: corev1.PodReady, Status: status, LastTransitionTime: metav1.Now()})
	if pod, err = pods.UpdateStatus(ctx, pod, metav1.UpdateOptions{}); err != nil {
		t.Fatal(err)
	}
	return pod
}

func TestPodEvictionHonoursBudgets(t *testing.T) {
	s := startControlPlane(t, "")
	cs := s.clientset(t, false)
	ctx := context.Background()
	ns := createNamespace(t, cs, "eviction")
	app := map[string]string{"app": "web"}
	runningPod(t, cs, ns, "web-1", app, true)
	runningPod(t, cs, ns, "web-2", app, true)
	evict := func(name string) error {
		return cs.PolicyV1().Evictions(ns).Evict(ctx, &policyv1.Eviction{ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: ns}})
	}

	one := intstr.FromInt32(1)
	pdbs := cs.PolicyV1().PodDisruptionBudgets(ns)
	pdb, err := pdbs.Create(ctx, &policyv1.PodDisruptionBudget{ObjectMeta: metav1.ObjectMeta{Name: "web"},
		Spec: policyv1.PodDisruptionBudgetSpec{MinAvailable: &one, Selector: &metav1.LabelSelector{MatchLabels: app}}}, metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	// Before the disruption controller has looked at it, nothing goes.
	err = evict("web-1")
	if !apierrors.IsTooManyRequests(err) || !strings.Contains(err.Error(), "Cannot evict pod as it would violate the pod's disruption budget.") {
		t.Fatalf("eviction with an unprocessed budget: want 429, got %v", err)
	}
	if st, ok := err.(apierrors.APIStatus); !ok || st.Status().Details == nil || len(st.Status().Details.Causes) == 0 ||
		st.Status().Details.Causes[0].Type != "DisruptionBudget" || !strings.Contains(st.Status().Details.Causes[0].Message, "still being processed") {
		t.Errorf("cause: %+v", err)
	}

	// What the disruption controller would write: none may go.
	setBudget := func(allowed int32) {
		t.Helper()
		pdb, err = pdbs.Get(ctx, "web", metav1.GetOptions{})
		if err != nil {
			t.Fatal(err)
		}
		pdb.Status = policyv1.PodDisruptionBudgetStatus{ObservedGeneration: pdb.Generation, DisruptionsAllowed: allowed,
			CurrentHealthy: 1 + allowed, DesiredHealthy: 1, ExpectedPods: 2}
		if pdb, err = pdbs.UpdateStatus(ctx, pdb, metav1.UpdateOptions{}); err != nil {
			t.Fatal(err)
		}
	}
	setBudget(0)
	err = evict("web-1")
	if !apierrors.IsTooManyRequests(err) || !strings.Contains(err.Error(), "violate the pod's disruption budget") {
		t.Fatalf("eviction past the budget: want 429, got %v", err)
	}
	if _, err := cs.CoreV1().Pods(ns).Get(ctx, "web-1", metav1.GetOptions{}); err != nil {
		t.Fatalf("refused eviction deleted the pod: %v", err)
	}

	setBudget(1)
	if err := evict("web-1"); err != nil {
		t.Fatalf("eviction within the budget: %v", err)
	}
	pod, err := cs.CoreV1().Pods(ns).Get(ctx, "web-1", metav1.GetOptions{})
	if err != nil {
		t.Fatalf("evicted running pod, deleted with grace: %v", err)
	}
	if pod.DeletionTimestamp == nil {
		t.Errorf("evicted pod is not being deleted")
	}
	// As kube: the pod is marked a disruption target before it goes.
	if c := findPodCondition(pod, corev1.DisruptionTarget); c == nil || c.Status != corev1.ConditionTrue ||
		c.Reason != "EvictionByEvictionAPI" || c.Message != "Eviction API: evicting" || c.LastTransitionTime.IsZero() {
		t.Errorf("evicted pod's DisruptionTarget condition: %+v", c)
	}
	pdb, _ = pdbs.Get(ctx, "web", metav1.GetOptions{})
	if pdb.Status.DisruptionsAllowed != 0 || pdb.Status.DisruptedPods["web-1"].Time.IsZero() {
		t.Errorf("budget after the eviction: %+v", pdb.Status)
	}
	// A pod no budget covers just goes.
	runningPod(t, cs, ns, "other", map[string]string{"app": "other"}, true)
	if err := evict("other"); err != nil {
		t.Errorf("eviction without a budget: %v", err)
	}
	if err := evict("missing"); !apierrors.IsNotFound(err) {
		t.Errorf("eviction of a missing pod: want 404, got %v", err)
	}
}

func TestPodSubresourcesWithoutARuntime(t *testing.T) {
	s := startControlPlane(t, "")
	cs := s.clientset(t, false)
	ctx := context.Background()
	ns := createNamespace(t, cs, "noruntime")
	runningPod(t, cs, ns, "web", nil, true)

	// kubectl's own commands: a clear message at once, never a hang.
	for _, args := range [][]string{
		{"logs", "web"},
		{"exec", "web", "--", "true"},
		{"attach", "web"},
		{"port-forward", "pod/web", "18080:80"},
	} {
		r := s.kubectl(t, nil, "", append([]string{"-n", ns, "--request-timeout=20s"}, args...)...)
		if r.Code == 0 || !strings.Contains(r.Stderr, "no kubelet or container runtime") {
			t.Errorf("kubectl %s: exit %d, stderr %q", strings.Join(args, " "), r.Code, r.Stderr)
		}
	}
	r := s.kubectl(t, nil, "", "-n", ns, "logs", "nope")
	if r.Code == 0 || !strings.Contains(r.Stderr, "NotFound") && !strings.Contains(r.Stderr, "not found") {
		t.Errorf("kubectl logs of a missing pod: exit %d, %q", r.Code, r.Stderr)
	}
	for _, path := range []string{"/api/v1/nodes/node-a/proxy/", "/api/v1/namespaces/" + ns + "/services/web/proxy/"} {
		err := cs.CoreV1().RESTClient().Get().AbsPath(path).Do(ctx).Error()
		if !apierrors.IsNotFound(err) && !apierrors.IsBadRequest(err) {
			t.Errorf("GET %s: want a Status, got %v", path, err)
		}
	}
	if _, err := cs.CoreV1().Services(ns).Create(ctx, &corev1.Service{ObjectMeta: metav1.ObjectMeta{Name: "web"},
		Spec: corev1.ServiceSpec{Ports: []corev1.ServicePort{{Port: 80}}}}, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	err := cs.CoreV1().RESTClient().Get().AbsPath("/api/v1/namespaces/" + ns + "/services/web/proxy/").Do(ctx).Error()
	if !apierrors.IsBadRequest(err) || !strings.Contains(err.Error(), "no kubelet or container runtime") {
		t.Errorf("services/proxy: %v", err)
	}

	// Ephemeral containers: added, never changed or removed.
	pods := cs.CoreV1().Pods(ns)
	pod, _ := pods.Get(ctx, "web", metav1.GetOptions{})
	pod.Spec.EphemeralContainers = []corev1.EphemeralContainer{{EphemeralContainerCommon: corev1.EphemeralContainerCommon{Name: "debug", Image: "busybox"}}}
	pod, err = pods.UpdateEphemeralContainers(ctx, "web", pod, metav1.UpdateOptions{})
	if err != nil || len(pod.Spec.EphemeralContainers) != 1 || pod.Spec.EphemeralContainers[0].TerminationMessagePolicy == "" {
		t.Fatalf("add an ephemeral container: %v %+v", err, pod.Spec.EphemeralContainers)
	}
	pod.Spec.EphemeralContainers = nil
	_, err = pods.UpdateEphemeralContainers(ctx, "web", pod, metav1.UpdateOptions{})
	wantInvalid(t, "remove an ephemeral container", err, map[string]string{"spec.ephemeralContainers": "may not be changed"})

	// Resize: only resources change, and not the QoS class.
	sized := simplePod("sized", nil)
	sized.Spec.Containers[0].Resources.Requests = corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("100m")}
	if _, err := pods.Create(ctx, sized, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	patch := `{"spec":{"containers":[{"name":"c","image":"other","resources":{"requests":{"cpu":"250m"}}}]}}`
	pod, err = pods.Patch(ctx, "sized", types.StrategicMergePatchType, []byte(patch), metav1.PatchOptions{}, "resize")
	if err != nil {
		t.Fatalf("resize: %v", err)
	}
	if got := pod.Spec.Containers[0]; got.Resources.Requests.Cpu().Cmp(resource.MustParse("250m")) != 0 || got.Image != "busybox" {
		t.Errorf("after resize: resources %v, image %q (want 250m, busybox)", got.Resources, got.Image)
	}
	guaranteed := `{"spec":{"containers":[{"name":"c","resources":{"requests":{"cpu":"1","memory":"1Gi"},"limits":{"cpu":"1","memory":"1Gi"}}}]}}`
	_, err = pods.Patch(ctx, "sized", types.StrategicMergePatchType, []byte(guaranteed), metav1.PatchOptions{}, "resize")
	wantInvalid(t, "resize to another QoS class", err, map[string]string{"spec.containers": "Pod QOS Class may not change"})
}

func TestCertificateApproval(t *testing.T) {
	s := startControlPlane(t, "")
	cs := s.clientset(t, false)
	ctx := context.Background()
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	der, err := x509.CreateCertificateRequest(rand.Reader, &x509.CertificateRequest{Subject: pkix.Name{CommonName: "alice"}}, key)
	if err != nil {
		t.Fatal(err)
	}
	csrPEM := pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE REQUEST", Bytes: der})
	for _, name := range []string{"alice", "bob"} {
		if _, err := cs.CertificatesV1().CertificateSigningRequests().Create(ctx, &certificatesv1.CertificateSigningRequest{
			ObjectMeta: metav1.ObjectMeta{Name: name},
			Spec: certificatesv1.CertificateSigningRequestSpec{Request: csrPEM, SignerName: "example.com/signer",
				Usages: []certificatesv1.KeyUsage{certificatesv1.UsageClientAuth}},
		}, metav1.CreateOptions{}); err != nil {
			t.Fatal(err)
		}
	}
	s.mustKubectl(t, "certificate", "approve", "alice")
	s.mustKubectl(t, "certificate", "deny", "bob")
	for name, want := range map[string]certificatesv1.RequestConditionType{"alice": certificatesv1.CertificateApproved, "bob": certificatesv1.CertificateDenied} {
		csr, err := cs.CertificatesV1().CertificateSigningRequests().Get(ctx, name, metav1.GetOptions{})
		if err != nil || len(csr.Status.Conditions) != 1 || csr.Status.Conditions[0].Type != want {
			t.Errorf("%s: %v %+v", name, err, csr.Status.Conditions)
		}
	}
	// Updating approval is not enough: approving for the signer is needed too.
	s.mustKubectl(t, "create", "clusterrole", "csr-approval", "--verb=get,update", "--resource=certificatesigningrequests,certificatesigningrequests/approval")
	s.mustKubectl(t, "create", "clusterrolebinding", "carol-csr", "--clusterrole=csr-approval", "--user=carol")
	if _, err := cs.CertificatesV1().CertificateSigningRequests().Create(ctx, &certificatesv1.CertificateSigningRequest{
		ObjectMeta: metav1.ObjectMeta{Name: "carol"},
		Spec: certificatesv1.CertificateSigningRequestSpec{Request: csrPEM, SignerName: "example.com/signer",
			Usages: []certificatesv1.KeyUsage{certificatesv1.UsageClientAuth}},
	}, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	r := s.kubectl(t, nil, "", "certificate", "approve", "carol", "--as", "carol")
	if r.Code == 0 || !strings.Contains(r.Stderr, `user not permitted to approve requests with signerName "example.com/signer"`) {
		t.Errorf("approve without the signer's approve verb: exit %d %q", r.Code, r.Stderr)
	}
}

func findPodCondition(pod *corev1.Pod, t corev1.PodConditionType) *corev1.PodCondition {
	for i := range pod.Status.Conditions {
		if pod.Status.Conditions[i].Type == t {
			return &pod.Status.Conditions[i]
		}
	}
	return nil
}
