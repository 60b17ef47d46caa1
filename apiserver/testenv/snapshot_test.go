package testenv_test

import (
	"bytes"
	"context"
	"fmt"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	clientv3 "go.etcd.io/etcd/client/v3"
	admissionregistrationv1 "k8s.io/api/admissionregistration/v1"
	corev1 "k8s.io/api/core/v1"
	apiextensionsclient "k8s.io/apiextensions-apiserver/pkg/client/clientset/clientset"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/client-go/informers"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/tools/cache"

	"github.com/devplane/devplane/apiserver/snapshot"
	"github.com/devplane/devplane/apiserver/testenv"
)

// fixtures are what the snapshot tests load: namespace fixtures with
// ConfigMaps keep, gone and change, and a Widget.
func loadFixtures(t *testing.T, env *testenv.Instance) {
	t.Helper()
	c := clientFor(t, env.Config())
	ctx := t.Context()
	if _, err := c.CoreV1().Namespaces().Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: "fixtures"}}, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	for _, name := range []string{"keep", "gone", "change"} {
		cm := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: name}, Data: map[string]string{"v": "fixture"}}
		if _, err := c.CoreV1().ConfigMaps("fixtures").Create(ctx, cm, metav1.CreateOptions{}); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := widgetClient(t, env, "fixtures").Create(ctx, newWidget("w1", "hello"), metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	// The root CA controller adds kube-root-ca.crt soon after the
	// namespace: wait for it, so that snapshots hold it.
	err := wait.PollUntilContextTimeout(ctx, 5*time.Millisecond, 10*time.Second, true, func(ctx context.Context) (bool, error) {
		_, err := c.CoreV1().ConfigMaps("fixtures").Get(ctx, "kube-root-ca.crt", metav1.GetOptions{})
		return err == nil, nil
	})
	if err != nil {
		t.Fatalf("kube-root-ca.crt: %v", err)
	}
}

// disturb changes the fixtures every way: a delete, an update, a create,
// a new namespace, and the CRD deleted with its Widgets.
func disturb(t *testing.T, env *testenv.Instance) {
	t.Helper()
	c := clientFor(t, env.Config())
	ctx := t.Context()
	if err := c.CoreV1().ConfigMaps("fixtures").Delete(ctx, "gone", metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	cm, err := c.CoreV1().ConfigMaps("fixtures").Get(ctx, "change", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	cm.Data["v"] = "changed"
	if _, err := c.CoreV1().ConfigMaps("fixtures").Update(ctx, cm, metav1.UpdateOptions{}); err != nil {
		t.Fatal(err)
	}
	if _, err := c.CoreV1().ConfigMaps("fixtures").Create(ctx, &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "new"}}, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	if _, err := c.CoreV1().Namespaces().Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: "later"}}, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	crds := apiextensionsclient.NewForConfigOrDie(env.Config()).ApiextensionsV1().CustomResourceDefinitions()
	if err := crds.Delete(ctx, "widgets.examples.devplane.dev", metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	err = wait.PollUntilContextTimeout(ctx, 10*time.Millisecond, 30*time.Second, true, func(ctx context.Context) (bool, error) {
		_, err := crds.Get(ctx, "widgets.examples.devplane.dev", metav1.GetOptions{})
		return apierrors.IsNotFound(err), nil
	})
	if err != nil {
		t.Fatalf("the CRD was not deleted: %v", err)
	}
}

// checkFixtures asserts the fixtures' state right after a restore or a
// fork: no waiting, the first read must see it.
func checkFixtures(t *testing.T, env *testenv.Instance, want map[string]*corev1.ConfigMap) {
	t.Helper()
	c := clientFor(t, env.Config())
	ctx := t.Context()
	list, err := c.CoreV1().ConfigMaps("fixtures").List(ctx, metav1.ListOptions{})
	if err != nil {
		t.Fatal(err)
	}
	got := map[string]corev1.ConfigMap{}
	for _, cm := range list.Items {
		if cm.Name != "kube-root-ca.crt" {
			got[cm.Name] = cm
		}
	}
	if len(got) != len(want) {
		t.Errorf("ConfigMaps %v, want %d of them", keysOf(got), len(want))
	}
	for name, w := range want {
		g, ok := got[name]
		if !ok {
			t.Errorf("ConfigMap %s missing", name)
			continue
		}
		if g.UID != w.UID || g.Data["v"] != w.Data["v"] || !g.CreationTimestamp.Equal(&w.CreationTimestamp) {
			t.Errorf("ConfigMap %s: uid %s data %v created %v, want %s %v %v", name, g.UID, g.Data, g.CreationTimestamp, w.UID, w.Data, w.CreationTimestamp)
		}
	}
	if _, err := c.CoreV1().Namespaces().Get(ctx, "later", metav1.GetOptions{}); !apierrors.IsNotFound(err) {
		t.Errorf("namespace later: %v, want NotFound", err)
	}
	w, err := widgetClient(t, env, "fixtures").Get(ctx, "w1", metav1.GetOptions{})
	if err != nil {
		t.Fatalf("the Widget after the restore: %v", err)
	}
	if msg, _, _ := unstructuredString(w.Object, "spec", "message"); msg != "hello" {
		t.Errorf("Widget spec.message %q, want hello", msg)
	}
}

func unstructuredString(obj map[string]any, fields ...string) (string, bool, error) {
	var cur any = obj
	for _, f := range fields {
		m, ok := cur.(map[string]any)
		if !ok {
			return "", false, nil
		}
		cur = m[f]
	}
	s, ok := cur.(string)
	return s, ok, nil
}

func keysOf[V any](m map[string]V) []string {
	var out []string
	for k := range m {
		out = append(out, k)
	}
	return out
}

func fixtureConfigMaps(t *testing.T, env *testenv.Instance) map[string]*corev1.ConfigMap {
	t.Helper()
	list, err := clientFor(t, env.Config()).CoreV1().ConfigMaps("fixtures").List(t.Context(), metav1.ListOptions{})
	if err != nil {
		t.Fatal(err)
	}
	out := map[string]*corev1.ConfigMap{}
	for i := range list.Items {
		if cm := &list.Items[i]; cm.Name != "kube-root-ca.crt" {
			out[cm.Name] = cm
		}
	}
	return out
}

func TestSnapshotRestoreRoundTrip(t *testing.T) {
	env := testenv.StartT(t, testenv.Options{CRDDirectoryPaths: []string{exampleCRDs}})
	loadFixtures(t, env)
	want := fixtureConfigMaps(t, env)
	snap, err := env.Snapshot(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	disturb(t, env)
	before := want["change"].ResourceVersion

	if err := env.Restore(t.Context(), snap); err != nil {
		t.Fatal(err)
	}
	checkFixtures(t, env, want)
	// Time moved forward: the restored object has a new resourceVersion.
	got := fixtureConfigMaps(t, env)["change"]
	if rv, _ := strconv.ParseInt(got.ResourceVersion, 10, 64); rv <= mustInt(t, before) || rv <= snap.Revision() {
		t.Errorf("restored ConfigMap resourceVersion %s, want above %s and the snapshot's %d", got.ResourceVersion, before, snap.Revision())
	}
	// The restored state works as any other: writes go on from it.
	got.Data["v"] = "after"
	if _, err := clientFor(t, env.Config()).CoreV1().ConfigMaps("fixtures").Update(t.Context(), got, metav1.UpdateOptions{}); err != nil {
		t.Errorf("updating a restored ConfigMap: %v", err)
	}
	// A second restore puts back only what changed since.
	if err := env.Restore(t.Context(), snap); err != nil {
		t.Fatal(err)
	}
	checkFixtures(t, env, want)
}

func mustInt(t *testing.T, s string) int64 {
	t.Helper()
	n, err := strconv.ParseInt(s, 10, 64)
	if err != nil {
		t.Fatal(err)
	}
	return n
}

// An informer running across a restore is brought to the restored state
// by ordinary events: it never relists, and the resourceVersions it sees
// only go up.
func TestRestoreInformerFollowsWithEvents(t *testing.T) {
	env := testenv.StartT(t, testenv.Options{CRDDirectoryPaths: []string{exampleCRDs}})
	loadFixtures(t, env)
	snap, err := env.Snapshot(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	want := fixtureConfigMaps(t, env)

	c := clientFor(t, env.Config())
	factory := informers.NewSharedInformerFactoryWithOptions(c, 0, informers.WithNamespace("fixtures"))
	inf := factory.Core().V1().ConfigMaps().Informer()
	var mu sync.Mutex
	var synced bool
	var lastRV int64
	var backwards []string
	events := map[string]int{}
	record := func(kind string, obj any) {
		if d, ok := obj.(cache.DeletedFinalStateUnknown); ok {
			obj = d.Obj
			kind = "delete-unknown"
		}
		cm := obj.(*corev1.ConfigMap)
		rv, _ := strconv.ParseInt(cm.ResourceVersion, 10, 64)
		mu.Lock()
		defer mu.Unlock()
		events[kind]++
		// The initial list comes in any order; watch events in the order
		// of their revisions (a restore's transaction gives several one).
		if synced && rv < lastRV {
			backwards = append(backwards, fmt.Sprintf("%s %s: %d after %d", kind, cm.Name, rv, lastRV))
		}
		lastRV = max(lastRV, rv)
	}
	if _, err := inf.AddEventHandler(cache.ResourceEventHandlerFuncs{
		AddFunc:    func(obj any) { record("add", obj) },
		UpdateFunc: func(_, obj any) { record("update", obj) },
		DeleteFunc: func(obj any) { record("delete", obj) },
	}); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(t.Context())
	defer cancel()
	factory.Start(ctx.Done())
	if !cache.WaitForCacheSync(ctx.Done(), inf.HasSynced) {
		t.Fatal("informer not synced")
	}
	mu.Lock()
	synced = true
	mu.Unlock()

	disturb(t, env)
	if err := env.Restore(t.Context(), snap); err != nil {
		t.Fatal(err)
	}
	// The informer reaches the restored state.
	err = wait.PollUntilContextTimeout(t.Context(), 5*time.Millisecond, 10*time.Second, true, func(context.Context) (bool, error) {
		items := inf.GetStore().List()
		names := map[string]string{}
		for _, o := range items {
			cm := o.(*corev1.ConfigMap)
			names[cm.Name] = cm.Data["v"]
		}
		for name, cm := range want {
			if names[name] != cm.Data["v"] {
				return false, nil
			}
		}
		_, hasNew := names["new"]
		return !hasNew, nil
	})
	if err != nil {
		t.Fatalf("the informer did not reach the restored state: %v (store %v)", err, inf.GetStore().ListKeys())
	}
	mu.Lock()
	defer mu.Unlock()
	if len(backwards) > 0 {
		t.Errorf("resourceVersions went back: %v", backwards)
	}
	// disturb: delete gone, update change, add new; restore: add gone
	// back, update change back, delete new. One initial add per fixture
	// (and kube-root-ca.crt) before that.
	if events["delete-unknown"] > 0 {
		t.Errorf("the informer lost track (DeletedFinalStateUnknown): %v", events)
	}
	if events["delete"] != 2 || events["update"] < 2 || events["add"] < len(want)+2 {
		t.Errorf("events %v, want 2 deletes, 2+ updates, %d+ adds", events, len(want)+2)
	}
}

func TestForkStartsOnTheSnapshot(t *testing.T) {
	parent := testenv.StartT(t, testenv.Options{CRDDirectoryPaths: []string{exampleCRDs}})
	loadFixtures(t, parent)
	want := fixtureConfigMaps(t, parent)
	// A client certificate issued by the parent before the snapshot.
	alice := parent.ConfigFor("alice", "system:masters")
	snap, err := parent.Snapshot(t.Context())
	if err != nil {
		t.Fatal(err)
	}

	// Parallel specs, each on a copy of its own.
	const forks = 3
	t.Run("forks", func(t *testing.T) {
		for n := range forks {
			t.Run(fmt.Sprintf("fork-%d", n), func(t *testing.T) {
				t.Parallel()
				fork := testenv.StartT(t, testenv.Options{From: snap})
				if fork.URL() == parent.URL() {
					t.Fatal("the fork is the parent")
				}
				checkFixtures(t, fork, want)
				// Its own copy: a change here is not seen by the parent.
				c := clientFor(t, fork.Config())
				if err := c.CoreV1().ConfigMaps("fixtures").Delete(t.Context(), "keep", metav1.DeleteOptions{}); err != nil {
					t.Fatal(err)
				}
				// The shared CA: the parent's certificate authenticates.
				cfg := fork.Config()
				cfg.CertData, cfg.KeyData = alice.CertData, alice.KeyData
				if _, err := kubernetes.NewForConfigOrDie(cfg).CoreV1().Namespaces().Get(t.Context(), "fixtures", metav1.GetOptions{}); err != nil {
					t.Errorf("the parent's client certificate in the fork: %v", err)
				}
				// Reset brings a fork back to the snapshot.
				if err := fork.Reset(t.Context(), false); err != nil {
					t.Fatal(err)
				}
				checkFixtures(t, fork, want)
			})
		}
	})
	if _, err := clientFor(t, parent.Config()).CoreV1().ConfigMaps("fixtures").Get(t.Context(), "keep", metav1.GetOptions{}); err != nil {
		t.Errorf("the parent lost what a fork deleted: %v", err)
	}
}

// A snapshot file (as `devplane snapshot save` writes) forks an instance
// with certificates of its own; a damaged file is refused.
func TestSnapshotFileRoundTrip(t *testing.T) {
	parent := testenv.StartT(t, testenv.Options{CRDDirectoryPaths: []string{exampleCRDs}})
	loadFixtures(t, parent)
	want := fixtureConfigMaps(t, parent)
	snap, err := parent.Snapshot(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	var file bytes.Buffer
	if _, err := snap.WriteTo(&file); err != nil {
		t.Fatal(err)
	}
	read, err := testenv.ReadSnapshot(bytes.NewReader(file.Bytes()))
	if err != nil {
		t.Fatal(err)
	}
	if read.Objects() != snap.Objects() || read.Revision() != snap.Revision() {
		t.Fatalf("read %d objects at %d, wrote %d at %d", read.Objects(), read.Revision(), snap.Objects(), snap.Revision())
	}
	fork := testenv.StartT(t, testenv.Options{From: read})
	checkFixtures(t, fork, want)
	if bytes.Equal(fork.CAData(), parent.CAData()) {
		t.Error("a fork from a file shares the parent's CA; it should make its own")
	}

	damaged := bytes.Clone(file.Bytes())
	damaged[len(damaged)/2] ^= 0xff
	for name, data := range map[string][]byte{"damaged": damaged, "truncated": file.Bytes()[:file.Len()-10], "empty": nil} {
		if _, err := testenv.ReadSnapshot(bytes.NewReader(data)); err == nil {
			t.Errorf("a %s file was read", name)
		}
	}
}

// The endpoint serves cluster admins only; a bad body is a 400 Status.
func TestSnapshotEndpoint(t *testing.T) {
	env := testenv.StartT(t, testenv.Options{CRDDirectoryPaths: []string{exampleCRDs}})
	loadFixtures(t, env)
	want := fixtureConfigMaps(t, env)
	admin := clientFor(t, env.Config()).CoreV1().RESTClient()
	ctx := t.Context()
	raw, err := admin.Get().AbsPath(snapshot.Path).DoRaw(ctx)
	if err != nil {
		t.Fatal(err)
	}
	disturb(t, env)
	if err := admin.Put().AbsPath(snapshot.Path).Body(raw).Do(ctx).Error(); err != nil {
		t.Fatalf("PUT the snapshot back: %v", err)
	}
	checkFixtures(t, env, want)

	bob := clientFor(t, env.ConfigFor("bob", "system:authenticated")).CoreV1().RESTClient()
	if err := bob.Get().AbsPath(snapshot.Path).Do(ctx).Error(); !apierrors.IsForbidden(err) {
		t.Errorf("bob's GET: %v, want Forbidden", err)
	}
	if err := bob.Put().AbsPath(snapshot.Path).Body(raw).Do(ctx).Error(); !apierrors.IsForbidden(err) {
		t.Errorf("bob's PUT: %v, want Forbidden", err)
	}
	err = admin.Put().AbsPath(snapshot.Path).Body([]byte("not a snapshot")).Do(ctx).Error()
	if !apierrors.IsBadRequest(err) {
		t.Errorf("PUT garbage: %v, want a 400 Status", err)
	}
	if err := admin.Post().AbsPath(snapshot.Path).Body(raw).Do(ctx).Error(); err == nil {
		t.Error("POST accepted")
	}
}

// What lives beside the objects follows a restore: a cluster IP allocated
// since is free again, and an admission policy created since no longer
// denies, from the first request after Restore returns.
func TestRestoreFreesAllocationsAndAdmission(t *testing.T) {
	env := testenv.StartT(t, testenv.Options{})
	ctx := t.Context()
	c := clientFor(t, env.Config())
	snap, err := env.Snapshot(ctx)
	if err != nil {
		t.Fatal(err)
	}
	svc := &corev1.Service{ObjectMeta: metav1.ObjectMeta{Name: "web"}, Spec: corev1.ServiceSpec{
		ClusterIP: "10.0.0.42", Ports: []corev1.ServicePort{{Port: 80, NodePort: 30080}}, Type: corev1.ServiceTypeNodePort}}
	if _, err := c.CoreV1().Services("default").Create(ctx, svc, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	deny := &admissionregistrationv1.ValidatingAdmissionPolicy{ObjectMeta: metav1.ObjectMeta{Name: "no-configmaps"},
		Spec: admissionregistrationv1.ValidatingAdmissionPolicySpec{
			MatchConstraints: &admissionregistrationv1.MatchResources{ResourceRules: []admissionregistrationv1.NamedRuleWithOperations{{
				RuleWithOperations: admissionregistrationv1.RuleWithOperations{Operations: []admissionregistrationv1.OperationType{"CREATE"},
					Rule: admissionregistrationv1.Rule{APIGroups: []string{""}, APIVersions: []string{"v1"}, Resources: []string{"configmaps"}}}}}},
			Validations: []admissionregistrationv1.Validation{{Expression: "false", Message: "no ConfigMaps"}},
		}}
	binding := &admissionregistrationv1.ValidatingAdmissionPolicyBinding{ObjectMeta: metav1.ObjectMeta{Name: "no-configmaps"},
		Spec: admissionregistrationv1.ValidatingAdmissionPolicyBindingSpec{PolicyName: "no-configmaps",
			ValidationActions: []admissionregistrationv1.ValidationAction{admissionregistrationv1.Deny}}}
	vap := c.AdmissionregistrationV1()
	if _, err := vap.ValidatingAdmissionPolicies().Create(ctx, deny, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	if _, err := vap.ValidatingAdmissionPolicyBindings().Create(ctx, binding, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	cm := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "c"}}
	err = wait.PollUntilContextTimeout(ctx, 5*time.Millisecond, 10*time.Second, true, func(ctx context.Context) (bool, error) {
		_, err := c.CoreV1().ConfigMaps("default").Create(ctx, cm, metav1.CreateOptions{DryRun: []string{metav1.DryRunAll}})
		return apierrors.IsInvalid(err) || apierrors.IsForbidden(err), nil
	})
	if err != nil {
		t.Fatalf("the policy never denied: %v", err)
	}

	if err := env.Restore(ctx, snap); err != nil {
		t.Fatal(err)
	}
	if _, err := c.CoreV1().ConfigMaps("default").Create(ctx, cm, metav1.CreateOptions{}); err != nil {
		t.Errorf("a create right after the restore: %v (the policy is gone with it)", err)
	}
	if _, err := c.CoreV1().Services("default").Create(ctx, svc, metav1.CreateOptions{}); err != nil {
		t.Errorf("the same cluster IP and node port again: %v", err)
	}
}

// A fork given the Webhooks its parent had points them at its own server,
// in place of the parent's in the snapshot.
func TestForkWithWebhooksPointsThemAtItself(t *testing.T) {
	validating, err := readWebhookConfig(t)
	if err != nil {
		t.Fatal(err)
	}
	opts := testenv.Options{Webhooks: testenv.WebhookOptions{Validating: validating}}
	parent := testenv.StartT(t, opts)
	snap, err := parent.Snapshot(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	opts.From = snap
	fork := testenv.StartT(t, opts)
	_, forkPort := fork.WebhookAddr()
	_, parentPort := parent.WebhookAddr()
	got, err := clientFor(t, fork.Config()).AdmissionregistrationV1().ValidatingWebhookConfigurations().Get(t.Context(), validating[0].Name, metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	url := *got.Webhooks[0].ClientConfig.URL
	if !strings.Contains(url, fmt.Sprintf(":%d/", forkPort)) || forkPort == parentPort {
		t.Errorf("the fork's webhook URL %s, want the fork's port %d (the parent's is %d)", url, forkPort, parentPort)
	}
}

// A fork's etcd is loaded by several writers at once (snapshot.Load):
// every key of the snapshot is there, whatever batch it went in. Load on
// a store that holds keys already restores as Restore does.
func TestSnapshotLoadWritesEveryKey(t *testing.T) {
	parent := testenv.StartT(t, testenv.Options{CRDDirectoryPaths: []string{exampleCRDs}})
	loadFixtures(t, parent)
	client := parent.ControlPlane().Etcd.Client()
	state, err := snapshot.Take(t.Context(), client)
	if err != nil {
		t.Fatal(err)
	}
	snap, err := parent.Snapshot(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	if snap.Objects() <= 200 {
		t.Fatalf("%d keys: too few for several transactions of 100", snap.Objects())
	}
	fork := testenv.StartT(t, testenv.Options{From: snap})
	forkClient := fork.ControlPlane().Etcd.Client()
	for _, kv := range state.KVs {
		// Leases are the servers' own, renewed or collected as they run.
		if strings.HasPrefix(kv.Key, "/registry/leases/") {
			continue
		}
		resp, err := forkClient.Get(t.Context(), kv.Key, clientv3.WithCountOnly())
		if err != nil {
			t.Fatal(err)
		}
		if resp.Count != 1 {
			t.Errorf("the fork lacks %s", kv.Key)
		}
	}

	// On a store with keys, Load restores.
	c := clientFor(t, parent.Config())
	if err := c.CoreV1().ConfigMaps("fixtures").Delete(t.Context(), "gone", metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	if _, err := c.CoreV1().ConfigMaps("fixtures").Create(t.Context(), &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "new"}}, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	res, err := snapshot.Load(t.Context(), client, state)
	if err != nil {
		t.Fatal(err)
	}
	if res.Put < 1 || res.Deleted < 1 {
		t.Errorf("Load on a store with keys put %d and deleted %d, want the restore of gone and the delete of new", res.Put, res.Deleted)
	}
	for name, want := range map[string]int64{"gone": 1, "new": 0} {
		resp, err := client.Get(t.Context(), "/registry/configmaps/fixtures/"+name, clientv3.WithCountOnly())
		if err != nil {
			t.Fatal(err)
		}
		if resp.Count != want {
			t.Errorf("ConfigMap %s: %d stored, want %d", name, resp.Count, want)
		}
	}
}
