package controlplane_test

import (
	"context"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	schedulingv1 "k8s.io/api/scheduling/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"

	"github.com/devplane/devplane/apiserver/controlplane/controlplanetest"
)

// The resource quota controller fills a new quota's status at once and
// counts usage down after deletes, as kube-controller-manager's does.
func TestResourceQuotaStatus(t *testing.T) {
	s := startControlPlane(t, "")
	cs := s.clientset(t, false)
	ctx := context.Background()
	testNamespace(t, cs, "quota-status", nil)
	hard := corev1.ResourceList{
		"configmaps":                   resource.MustParse("10"),
		"pods":                         resource.MustParse("4"),
		"requests.cpu":                 resource.MustParse("2"),
		"count/deployments.apps":       resource.MustParse("3"),
		"services.loadbalancers":       resource.MustParse("1"),
		"count/widgets.example.com":    resource.MustParse("1"), // not served: left out of used, as kube does
		"count/persistentvolumeclaims": resource.MustParse("2"),
	}
	if _, err := cs.CoreV1().ResourceQuotas("quota-status").Create(ctx, &corev1.ResourceQuota{
		ObjectMeta: metav1.ObjectMeta{Name: "q"}, Spec: corev1.ResourceQuotaSpec{Hard: hard}}, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	used := func(want map[string]string) {
		t.Helper()
		controlplanetest.Eventually(t, 15*time.Second, fmt.Sprintf("status.used %v", want), func() (bool, string) {
			q, err := cs.CoreV1().ResourceQuotas("quota-status").Get(ctx, "q", metav1.GetOptions{})
			if err != nil {
				return false, err.Error()
			}
			if _, ok := q.Status.Used["count/widgets.example.com"]; ok || len(q.Status.Hard) != len(hard) || len(q.Status.Used) != len(hard)-1 {
				return false, fmt.Sprintf("hard %v used %v", q.Status.Hard, q.Status.Used)
			}
			for name, v := range want {
				if got := q.Status.Used[corev1.ResourceName(name)]; got.String() != v {
					return false, fmt.Sprintf("used %v", q.Status.Used)
				}
			}
			return true, ""
		})
	}
	// kube-root-ca.crt is in every namespace: one ConfigMap from the start.
	used(map[string]string{"configmaps": "1", "pods": "0", "requests.cpu": "0", "count/deployments.apps": "0"})

	for i := range 2 {
		if _, err := cs.CoreV1().ConfigMaps("quota-status").Create(ctx, configMap(fmt.Sprintf("c%d", i), nil), metav1.CreateOptions{}); err != nil {
			t.Fatal(err)
		}
	}
	pod := simplePod("p", nil)
	pod.Spec.Containers[0].Resources.Requests = corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("500m")}
	if _, err := cs.CoreV1().Pods("quota-status").Create(ctx, pod, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	replicas := int32(1)
	dep := &appsv1.Deployment{ObjectMeta: metav1.ObjectMeta{Name: "d"}, Spec: appsv1.DeploymentSpec{Replicas: &replicas,
		Selector: &metav1.LabelSelector{MatchLabels: map[string]string{"app": "d"}},
		Template: corev1.PodTemplateSpec{ObjectMeta: metav1.ObjectMeta{Labels: map[string]string{"app": "d"}}, Spec: pod.Spec}}}
	if _, err := cs.AppsV1().Deployments("quota-status").Create(ctx, dep, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	used(map[string]string{"configmaps": "3", "pods": "1", "requests.cpu": "500m", "count/deployments.apps": "1"})

	// Deletes are counted down.
	if err := cs.CoreV1().ConfigMaps("quota-status").Delete(ctx, "c0", metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	if err := cs.CoreV1().Pods("quota-status").Delete(ctx, "p", metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	used(map[string]string{"configmaps": "2", "pods": "0", "requests.cpu": "0", "count/deployments.apps": "1"})
}

// startInNamespace starts a devplane and makes namespace in it, for a test
// that needs only the one.
func startInNamespace(t *testing.T, namespace string) (kubernetes.Interface, context.Context) {
	t.Helper()
	cs := startControlPlane(t, "").clientset(t, false)
	testNamespace(t, cs, namespace, nil)
	return cs, context.Background()
}

// createQuota creates a quota and waits for the controller's first status,
// as kube's e2e tests do: until then quota admission refuses what it
// limits ("status unknown for quota").
func createQuota(t testing.TB, cs kubernetes.Interface, namespace string, q *corev1.ResourceQuota) {
	t.Helper()
	ctx := context.Background()
	if _, err := cs.CoreV1().ResourceQuotas(namespace).Create(ctx, q, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	controlplanetest.Eventually(t, 15*time.Second, "quota "+q.Name+" status", func() (bool, string) {
		got, err := cs.CoreV1().ResourceQuotas(namespace).Get(ctx, q.Name, metav1.GetOptions{})
		if err != nil {
			return false, err.Error()
		}
		return len(got.Status.Hard) == len(q.Spec.Hard), fmt.Sprintf("status %v", got.Status)
	})
}

// quotaUsed waits until quota name's status.used shows want.
func quotaUsed(t *testing.T, cs kubernetes.Interface, namespace, name string, want map[string]string) {
	t.Helper()
	controlplanetest.Eventually(t, 15*time.Second, fmt.Sprintf("%s status.used %v", name, want), func() (bool, string) {
		q, err := cs.CoreV1().ResourceQuotas(namespace).Get(context.Background(), name, metav1.GetOptions{})
		if err != nil {
			return false, err.Error()
		}
		for res, v := range want {
			if got, ok := q.Status.Used[corev1.ResourceName(res)]; !ok || got.String() != v {
				return false, fmt.Sprintf("used %v", q.Status.Used)
			}
		}
		return true, ""
	})
}

// expectForbidden checks err is a 403 worded want.
func expectForbidden(t *testing.T, err error, want string) {
	t.Helper()
	if !apierrors.IsForbidden(err) || err.Error() != want {
		t.Errorf("got  %v\nwant %s", err, want)
	}
}

func podWith(name string, requests, limits corev1.ResourceList) *corev1.Pod {
	p := simplePod(name, nil)
	p.Spec.Containers[0].Resources = corev1.ResourceRequirements{Requests: requests, Limits: limits}
	return p
}

func cpu(q string) corev1.ResourceList {
	return corev1.ResourceList{corev1.ResourceCPU: resource.MustParse(q)}
}

// A scoped quota counts and limits only the pods its scopes or scope
// selector take in, in admission and in the status the controller writes.
func TestResourceQuotaScopes(t *testing.T) {
	s := startControlPlane(t, "")
	cs := s.clientset(t, false)
	ctx := context.Background()
	pods := func(n string) corev1.ResourceList { return corev1.ResourceList{"pods": resource.MustParse(n)} }
	create := func(ns string, p *corev1.Pod) error {
		_, err := cs.CoreV1().Pods(ns).Create(ctx, p, metav1.CreateOptions{})
		return err
	}

	t.Run("BestEffort and NotBestEffort", func(t *testing.T) {
		ns := "quota-besteffort"
		testNamespace(t, cs, ns, nil)
		if err := create(ns, simplePod("before", nil)); err != nil {
			t.Fatal(err)
		}
		createQuota(t, cs, ns, &corev1.ResourceQuota{ObjectMeta: metav1.ObjectMeta{Name: "be"},
			Spec: corev1.ResourceQuotaSpec{Hard: pods("1"), Scopes: []corev1.ResourceQuotaScope{corev1.ResourceQuotaScopeBestEffort}}})
		createQuota(t, cs, ns, &corev1.ResourceQuota{ObjectMeta: metav1.ObjectMeta{Name: "nbe"},
			Spec: corev1.ResourceQuotaSpec{Hard: pods("1"), Scopes: []corev1.ResourceQuotaScope{corev1.ResourceQuotaScopeNotBestEffort}}})
		// The controller counts the best-effort pod for "be" only.
		quotaUsed(t, cs, ns, "be", map[string]string{"pods": "1"})
		quotaUsed(t, cs, ns, "nbe", map[string]string{"pods": "0"})

		expectForbidden(t, create(ns, simplePod("be2", nil)),
			`pods "be2" is forbidden: exceeded quota: be, requested: pods=1, used: pods=1, limited: pods=1`)
		if err := create(ns, podWith("nbe1", cpu("100m"), nil)); err != nil {
			t.Fatalf("a pod with requests under a full BestEffort quota: %v", err)
		}
		expectForbidden(t, create(ns, podWith("nbe2", cpu("100m"), nil)),
			`pods "nbe2" is forbidden: exceeded quota: nbe, requested: pods=1, used: pods=1, limited: pods=1`)
		quotaUsed(t, cs, ns, "nbe", map[string]string{"pods": "1"})

		// A delete is counted down in its quota only.
		if err := cs.CoreV1().Pods(ns).Delete(ctx, "nbe1", metav1.DeleteOptions{}); err != nil {
			t.Fatal(err)
		}
		quotaUsed(t, cs, ns, "nbe", map[string]string{"pods": "0"})
		quotaUsed(t, cs, ns, "be", map[string]string{"pods": "1"})
	})

	t.Run("Terminating and NotTerminating", func(t *testing.T) {
		ns := "quota-terminating"
		testNamespace(t, cs, ns, nil)
		createQuota(t, cs, ns, &corev1.ResourceQuota{ObjectMeta: metav1.ObjectMeta{Name: "term"},
			Spec: corev1.ResourceQuotaSpec{Hard: pods("1"), Scopes: []corev1.ResourceQuotaScope{corev1.ResourceQuotaScopeTerminating}}})
		createQuota(t, cs, ns, &corev1.ResourceQuota{ObjectMeta: metav1.ObjectMeta{Name: "nonterm"},
			Spec: corev1.ResourceQuotaSpec{Hard: pods("1"), Scopes: []corev1.ResourceQuotaScope{corev1.ResourceQuotaScopeNotTerminating}}})
		deadline := func(name string) *corev1.Pod {
			p := simplePod(name, nil)
			p.Spec.ActiveDeadlineSeconds = ptrTo(int64(3600))
			return p
		}
		if err := create(ns, deadline("t1")); err != nil {
			t.Fatal(err)
		}
		expectForbidden(t, create(ns, deadline("t2")),
			`pods "t2" is forbidden: exceeded quota: term, requested: pods=1, used: pods=1, limited: pods=1`)
		if err := create(ns, simplePod("n1", nil)); err != nil {
			t.Fatalf("a pod without a deadline under a full Terminating quota: %v", err)
		}
		expectForbidden(t, create(ns, simplePod("n2", nil)),
			`pods "n2" is forbidden: exceeded quota: nonterm, requested: pods=1, used: pods=1, limited: pods=1`)
		quotaUsed(t, cs, ns, "term", map[string]string{"pods": "1"})
		quotaUsed(t, cs, ns, "nonterm", map[string]string{"pods": "1"})
	})

	t.Run("PriorityClass scope selector", func(t *testing.T) {
		ns := "quota-priority"
		testNamespace(t, cs, ns, nil)
		if _, err := cs.SchedulingV1().PriorityClasses().Create(ctx, &schedulingv1.PriorityClass{
			ObjectMeta: metav1.ObjectMeta{Name: "quota-high"}, Value: 1000}, metav1.CreateOptions{}); err != nil {
			t.Fatal(err)
		}
		createQuota(t, cs, ns, &corev1.ResourceQuota{ObjectMeta: metav1.ObjectMeta{Name: "high"},
			Spec: corev1.ResourceQuotaSpec{Hard: pods("1"), ScopeSelector: &corev1.ScopeSelector{
				MatchExpressions: []corev1.ScopedResourceSelectorRequirement{{ScopeName: corev1.ResourceQuotaScopePriorityClass,
					Operator: corev1.ScopeSelectorOpIn, Values: []string{"quota-high"}}}}}})
		high := func(name string) *corev1.Pod {
			p := simplePod(name, nil)
			p.Spec.PriorityClassName = "quota-high"
			return p
		}
		for _, name := range []string{"plain1", "plain2"} {
			if err := create(ns, simplePod(name, nil)); err != nil {
				t.Fatalf("a pod outside the selector: %v", err)
			}
		}
		if err := createUntil(t, "high-priority pod", func() error { return create(ns, high("h1")) },
			func(err error) bool { return err == nil }); err != nil {
			t.Fatal(err)
		}
		expectForbidden(t, create(ns, high("h2")),
			`pods "h2" is forbidden: exceeded quota: high, requested: pods=1, used: pods=1, limited: pods=1`)
		quotaUsed(t, cs, ns, "high", map[string]string{"pods": "1"})
	})
}

// A pod's ephemeral-storage requests and limits are counted, under both
// of kube's names for the request.
func TestResourceQuotaEphemeralStorage(t *testing.T) {
	ns := "quota-ephemeral"
	cs, ctx := startInNamespace(t, ns)
	createQuota(t, cs, ns, &corev1.ResourceQuota{ObjectMeta: metav1.ObjectMeta{Name: "q"}, Spec: corev1.ResourceQuotaSpec{Hard: corev1.ResourceList{
		"ephemeral-storage": resource.MustParse("1Gi"), "requests.ephemeral-storage": resource.MustParse("1Gi"),
		"limits.ephemeral-storage": resource.MustParse("2Gi")}}})
	storage := func(q string) corev1.ResourceList {
		return corev1.ResourceList{corev1.ResourceEphemeralStorage: resource.MustParse(q)}
	}
	if _, err := cs.CoreV1().Pods(ns).Create(ctx, podWith("e1", storage("600Mi"), storage("1Gi")), metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	quotaUsed(t, cs, ns, "q", map[string]string{"ephemeral-storage": "600Mi", "requests.ephemeral-storage": "600Mi", "limits.ephemeral-storage": "1Gi"})
	_, err := cs.CoreV1().Pods(ns).Create(ctx, podWith("e2", storage("600Mi"), storage("1Gi")), metav1.CreateOptions{})
	expectForbidden(t, err, `pods "e2" is forbidden: exceeded quota: q, requested: ephemeral-storage=600Mi,requests.ephemeral-storage=600Mi, `+
		`used: ephemeral-storage=600Mi,requests.ephemeral-storage=600Mi, limited: ephemeral-storage=1Gi,requests.ephemeral-storage=1Gi`)
}

// A LoadBalancer Service takes node ports too, as kube counts them.
func TestResourceQuotaLoadBalancerNodePorts(t *testing.T) {
	ns := "quota-nodeports"
	cs, ctx := startInNamespace(t, ns)
	createQuota(t, cs, ns, &corev1.ResourceQuota{ObjectMeta: metav1.ObjectMeta{Name: "q"}, Spec: corev1.ResourceQuotaSpec{Hard: corev1.ResourceList{
		"services.nodeports": resource.MustParse("2"), "services.loadbalancers": resource.MustParse("1")}}})
	svc := func(name string, typ corev1.ServiceType, ports ...int32) *corev1.Service {
		s := &corev1.Service{ObjectMeta: metav1.ObjectMeta{Name: name}, Spec: corev1.ServiceSpec{Type: typ, Selector: map[string]string{"app": name}}}
		for _, p := range ports {
			s.Spec.Ports = append(s.Spec.Ports, corev1.ServicePort{Name: fmt.Sprint("p", p), Port: p})
		}
		return s
	}
	if _, err := cs.CoreV1().Services(ns).Create(ctx, svc("lb", corev1.ServiceTypeLoadBalancer, 80, 443), metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	quotaUsed(t, cs, ns, "q", map[string]string{"services.nodeports": "2", "services.loadbalancers": "1"})
	_, err := cs.CoreV1().Services(ns).Create(ctx, svc("np", corev1.ServiceTypeNodePort, 8080), metav1.CreateOptions{})
	expectForbidden(t, err, `services "np" is forbidden: exceeded quota: q, requested: services.nodeports=1, used: services.nodeports=2, limited: services.nodeports=2`)
}

// Parallel creates never get past a quota: each is checked against the
// usage the one before it charged.
func TestResourceQuotaConcurrentCreates(t *testing.T) {
	s := startControlPlane(t, "")
	cs := s.clientset(t, false)
	ctx := context.Background()
	const rounds, parallel = 5, 6
	for round := range rounds {
		ns := fmt.Sprintf("quota-race-%d", round)
		testNamespace(t, cs, ns, nil)
		createQuota(t, cs, ns, &corev1.ResourceQuota{ObjectMeta: metav1.ObjectMeta{Name: "q"},
			Spec: corev1.ResourceQuotaSpec{Hard: corev1.ResourceList{"pods": resource.MustParse("2")}}})
		var wg sync.WaitGroup
		errs := make([]error, parallel)
		for i := range parallel {
			wg.Add(1)
			go func() {
				defer wg.Done()
				_, errs[i] = cs.CoreV1().Pods(ns).Create(ctx, simplePod(fmt.Sprint("p", i), nil), metav1.CreateOptions{})
			}()
		}
		wg.Wait()
		admitted := 0
		for _, err := range errs {
			switch {
			case err == nil:
				admitted++
			case !apierrors.IsForbidden(err) || !strings.Contains(err.Error(), "exceeded quota: q"):
				t.Errorf("round %d: %v", round, err)
			}
		}
		list, err := cs.CoreV1().Pods(ns).List(ctx, metav1.ListOptions{})
		if err != nil {
			t.Fatal(err)
		}
		if admitted != 2 || len(list.Items) != 2 {
			t.Errorf("round %d: %d of %d parallel creates admitted, %d pods stored under pods=2", round, admitted, parallel, len(list.Items))
		}
		quotaUsed(t, cs, ns, "q", map[string]string{"pods": "2"})
	}
}

// A quota's scopes, scope selector and hard resources are validated as
// kube validates them, and its scopes cannot change.
func TestResourceQuotaValidation(t *testing.T) {
	ns := "quota-validation"
	cs, ctx := startInNamespace(t, ns)
	quotas := cs.CoreV1().ResourceQuotas(ns)
	create := func(name string, spec corev1.ResourceQuotaSpec) error {
		_, err := quotas.Create(ctx, &corev1.ResourceQuota{ObjectMeta: metav1.ObjectMeta{Name: name}, Spec: spec}, metav1.CreateOptions{})
		return err
	}
	invalid := func(err error, want string) {
		t.Helper()
		if !apierrors.IsInvalid(err) || err.Error() != want {
			t.Errorf("got  %v\nwant %s", err, want)
		}
	}
	hard := func(name, q string) corev1.ResourceList {
		return corev1.ResourceList{corev1.ResourceName(name): resource.MustParse(q)}
	}
	invalid(create("cpu-besteffort", corev1.ResourceQuotaSpec{Hard: hard("requests.cpu", "1"),
		Scopes: []corev1.ResourceQuotaScope{corev1.ResourceQuotaScopeBestEffort}}),
		`ResourceQuota "cpu-besteffort" is invalid: spec.scopes: Invalid value: ["BestEffort"]: unsupported scope applied to resource`)
	invalid(create("conflicting", corev1.ResourceQuotaSpec{Hard: hard("pods", "1"),
		Scopes: []corev1.ResourceQuotaScope{corev1.ResourceQuotaScopeTerminating, corev1.ResourceQuotaScopeNotTerminating}}),
		`ResourceQuota "conflicting" is invalid: spec.scopes: Invalid value: ["Terminating","NotTerminating"]: conflicting scopes`)
	invalid(create("operator", corev1.ResourceQuotaSpec{Hard: hard("pods", "1"), ScopeSelector: &corev1.ScopeSelector{
		MatchExpressions: []corev1.ScopedResourceSelectorRequirement{{ScopeName: corev1.ResourceQuotaScopeTerminating,
			Operator: corev1.ScopeSelectorOpIn, Values: []string{"x"}}}}}),
		`ResourceQuota "operator" is invalid: spec.scopeSelector.matchExpressions.operator: Invalid value: "In": must be 'Exists' when scope is any of `+
			`ResourceQuotaScopeTerminating, ResourceQuotaScopeNotTerminating, ResourceQuotaScopeBestEffort, ResourceQuotaScopeNotBestEffort or ResourceQuotaScopeCrossNamespacePodAffinity`)
	invalid(create("fraction", corev1.ResourceQuotaSpec{Hard: hard("pods", "1500m")}),
		`ResourceQuota "fraction" is invalid: spec.hard[pods]: Invalid value: "1500m": must be an integer`)
	invalid(create("unknown", corev1.ResourceQuotaSpec{Hard: hard("widgets", "1")}),
		`ResourceQuota "unknown" is invalid: [spec.hard[widgets]: Invalid value: "widgets": must be a standard resource type or fully qualified, `+
			`spec.hard[widgets]: Invalid value: "widgets": must be a standard resource for quota]`)

	// Once the controller has written its status, the quota stays put.
	createQuota(t, cs, ns, &corev1.ResourceQuota{ObjectMeta: metav1.ObjectMeta{Name: "scoped"}, Spec: corev1.ResourceQuotaSpec{
		Hard: hard("pods", "1"), Scopes: []corev1.ResourceQuotaScope{corev1.ResourceQuotaScopeBestEffort}}})
	q, err := quotas.Get(ctx, "scoped", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	q.Spec.Scopes = []corev1.ResourceQuotaScope{corev1.ResourceQuotaScopeNotBestEffort}
	_, err = quotas.Update(ctx, q, metav1.UpdateOptions{})
	invalid(err, `ResourceQuota "scoped" is invalid: spec.scopes: Invalid value: ["NotBestEffort"]: field is immutable`)
}

// Claims are counted per storage class, updates that change what a quota
// counts are charged, and a pod in a terminal phase no longer counts as a
// pod (but still as an object), as kube's evaluators have it.
func TestResourceQuotaEvaluators(t *testing.T) {
	s := startControlPlane(t, "")
	cs := s.clientset(t, false)
	ctx := context.Background()

	t.Run("claims per storage class", func(t *testing.T) {
		ns := "quota-claims"
		testNamespace(t, cs, ns, nil)
		createQuota(t, cs, ns, &corev1.ResourceQuota{ObjectMeta: metav1.ObjectMeta{Name: "q"}, Spec: corev1.ResourceQuotaSpec{Hard: corev1.ResourceList{
			"requests.storage": resource.MustParse("3Gi"),
			"standard.storageclass.storage.k8s.io/requests.storage": resource.MustParse("1Gi")}}})
		claim := func(name, class, size string) error {
			_, err := cs.CoreV1().PersistentVolumeClaims(ns).Create(ctx, &corev1.PersistentVolumeClaim{ObjectMeta: metav1.ObjectMeta{Name: name},
				Spec: corev1.PersistentVolumeClaimSpec{StorageClassName: &class, AccessModes: []corev1.PersistentVolumeAccessMode{corev1.ReadWriteOnce},
					Resources: corev1.VolumeResourceRequirements{Requests: corev1.ResourceList{corev1.ResourceStorage: resource.MustParse(size)}}}}, metav1.CreateOptions{})
			return err
		}
		if err := claim("s1", "standard", "1Gi"); err != nil {
			t.Fatal(err)
		}
		expectForbidden(t, claim("s2", "standard", "1Gi"), `persistentvolumeclaims "s2" is forbidden: exceeded quota: q, `+
			`requested: standard.storageclass.storage.k8s.io/requests.storage=1Gi, used: standard.storageclass.storage.k8s.io/requests.storage=1Gi, `+
			`limited: standard.storageclass.storage.k8s.io/requests.storage=1Gi`)
		if err := claim("o1", "other", "2Gi"); err != nil {
			t.Fatalf("a claim of another class: %v", err)
		}
		expectForbidden(t, claim("o2", "other", "1Gi"), `persistentvolumeclaims "o2" is forbidden: exceeded quota: q, `+
			`requested: requests.storage=1Gi, used: requests.storage=3Gi, limited: requests.storage=3Gi`)
		quotaUsed(t, cs, ns, "q", map[string]string{"requests.storage": "3Gi", "standard.storageclass.storage.k8s.io/requests.storage": "1Gi"})
	})

	t.Run("an update is charged", func(t *testing.T) {
		ns := "quota-updates"
		testNamespace(t, cs, ns, nil)
		createQuota(t, cs, ns, &corev1.ResourceQuota{ObjectMeta: metav1.ObjectMeta{Name: "q"},
			Spec: corev1.ResourceQuotaSpec{Hard: corev1.ResourceList{"services.nodeports": resource.MustParse("1")}}})
		svc, err := cs.CoreV1().Services(ns).Create(ctx, &corev1.Service{ObjectMeta: metav1.ObjectMeta{Name: "web"},
			Spec: corev1.ServiceSpec{Selector: map[string]string{"app": "web"},
				Ports: []corev1.ServicePort{{Name: "http", Port: 80}, {Name: "https", Port: 443}}}}, metav1.CreateOptions{})
		if err != nil {
			t.Fatal(err)
		}
		svc.Spec.Type = corev1.ServiceTypeNodePort
		_, err = cs.CoreV1().Services(ns).Update(ctx, svc, metav1.UpdateOptions{})
		expectForbidden(t, err, `services "web" is forbidden: exceeded quota: q, requested: services.nodeports=2, used: services.nodeports=0, limited: services.nodeports=1`)
	})

	t.Run("a finished pod", func(t *testing.T) {
		ns := "quota-finished"
		testNamespace(t, cs, ns, nil)
		createQuota(t, cs, ns, &corev1.ResourceQuota{ObjectMeta: metav1.ObjectMeta{Name: "q"}, Spec: corev1.ResourceQuotaSpec{Hard: corev1.ResourceList{
			"pods": resource.MustParse("1"), "count/pods": resource.MustParse("5"), "requests.cpu": resource.MustParse("1")}}})
		pod, err := cs.CoreV1().Pods(ns).Create(ctx, podWith("done", cpu("500m"), nil), metav1.CreateOptions{})
		if err != nil {
			t.Fatal(err)
		}
		pod.Status.Phase = corev1.PodSucceeded
		if _, err := cs.CoreV1().Pods(ns).UpdateStatus(ctx, pod, metav1.UpdateOptions{}); err != nil {
			t.Fatal(err)
		}
		quotaUsed(t, cs, ns, "q", map[string]string{"pods": "0", "requests.cpu": "0", "count/pods": "1"})
		// A quota on requests.cpu wants every pod to say its cpu request.
		_, err = cs.CoreV1().Pods(ns).Create(ctx, simplePod("unsaid", nil), metav1.CreateOptions{})
		expectForbidden(t, err, `pods "unsaid" is forbidden: failed quota: q: must specify requests.cpu for: c`)
		if _, err := cs.CoreV1().Pods(ns).Create(ctx, podWith("next", cpu("500m"), nil), metav1.CreateOptions{}); err != nil {
			t.Fatalf("a pod in the place of a finished one: %v", err)
		}
	})
}
