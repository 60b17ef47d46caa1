package controlplane_test

// End-to-end tests of the core API through client-go, as a controller or
// operator would use it against a real cluster (issue 3).

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"os"
	"slices"
	"sort"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/util/intstr"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/apimachinery/pkg/watch"
	"k8s.io/client-go/informers"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/tools/cache"
	"k8s.io/client-go/tools/pager"
	"k8s.io/client-go/util/retry"

	"github.com/devplane/devplane/apiserver/controlplane/controlplanetest"
	"github.com/devplane/devplane/apiserver/storage"
)

func testCtx(t testing.TB) context.Context {
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	t.Cleanup(cancel)
	return ctx
}

func createNamespace(t testing.TB, cs kubernetes.Interface, name string) string {
	t.Helper()
	_, err := cs.CoreV1().Namespaces().Create(context.Background(),
		&corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: name}}, metav1.CreateOptions{})
	if err != nil {
		t.Fatalf("creating namespace %s: %v", name, err)
	}
	return name
}

func statusCode(err error) int32 {
	if status, ok := err.(apierrors.APIStatus); ok {
		return status.Status().Code
	}
	return 0
}

// crudClient is what every typed client-go resource client offers.
type crudClient[T runtime.Object, L runtime.Object] interface {
	Create(context.Context, T, metav1.CreateOptions) (T, error)
	Get(context.Context, string, metav1.GetOptions) (T, error)
	List(context.Context, metav1.ListOptions) (L, error)
	Update(context.Context, T, metav1.UpdateOptions) (T, error)
	Delete(context.Context, string, metav1.DeleteOptions) error
}

// exerciseCRUD creates obj, reads it back, lists it, updates it with mutate
// (checked by check), refuses a stale update with 409 and deletes it.
func exerciseCRUD[T runtime.Object, L runtime.Object](t *testing.T, c crudClient[T, L], obj T,
	mutate func(T), check func(T) error) {
	t.Helper()
	ctx := testCtx(t)
	created, err := c.Create(ctx, obj, metav1.CreateOptions{})
	if err != nil {
		t.Fatalf("create: %v", err)
	}
	cm, _ := meta.Accessor(created)
	name := cm.GetName()
	if cm.GetUID() == "" || cm.GetResourceVersion() == "" || cm.GetCreationTimestamp().Time.IsZero() {
		t.Fatalf("created object lacks uid/resourceVersion/creationTimestamp: %+v", cm)
	}
	got, err := c.Get(ctx, name, metav1.GetOptions{})
	if err != nil {
		t.Fatalf("get: %v", err)
	}
	gm, _ := meta.Accessor(got)
	if gm.GetUID() != cm.GetUID() || gm.GetResourceVersion() != cm.GetResourceVersion() {
		t.Fatalf("get returned uid %s rv %s, created uid %s rv %s", gm.GetUID(), gm.GetResourceVersion(), cm.GetUID(), cm.GetResourceVersion())
	}
	list, err := c.List(ctx, metav1.ListOptions{})
	if err != nil {
		t.Fatalf("list: %v", err)
	}
	items, err := meta.ExtractList(list)
	if err != nil {
		t.Fatal(err)
	}
	found := false
	for _, it := range items {
		if a, _ := meta.Accessor(it); a.GetName() == name {
			found = true
		}
	}
	if lm, _ := meta.ListAccessor(list); !found || lm.GetResourceVersion() == "" {
		t.Fatalf("list (rv %q) of %d items lacks %s", lm.GetResourceVersion(), len(items), name)
	}

	mutate(got)
	updated, err := c.Update(ctx, got, metav1.UpdateOptions{})
	if err != nil {
		t.Fatalf("update: %v", err)
	}
	um, _ := meta.Accessor(updated)
	if um.GetResourceVersion() == cm.GetResourceVersion() {
		t.Errorf("update kept resourceVersion %s", um.GetResourceVersion())
	}
	reread, err := c.Get(ctx, name, metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if err := check(reread); err != nil {
		t.Errorf("after update: %v", err)
	}
	// got still carries the old resourceVersion: a lost update is refused.
	stale := got.DeepCopyObject().(T)
	sm, _ := meta.Accessor(stale)
	sm.SetResourceVersion(cm.GetResourceVersion())
	if _, err := c.Update(ctx, stale, metav1.UpdateOptions{}); !apierrors.IsConflict(err) {
		t.Errorf("update with stale resourceVersion: want 409 Conflict, got %v", err)
	}

	if err := c.Delete(ctx, name, metav1.DeleteOptions{}); err != nil {
		t.Fatalf("delete: %v", err)
	}
	after, err := c.Get(ctx, name, metav1.GetOptions{})
	switch {
	case apierrors.IsNotFound(err):
	case err == nil:
		// Namespaces (and objects with finalizers) linger while terminating.
		if am, _ := meta.Accessor(after); am.GetDeletionTimestamp() == nil {
			t.Errorf("after delete the object exists without deletionTimestamp")
		}
	default:
		t.Errorf("get after delete: %v", err)
	}
}

// contentTypes records the Content-Type of requests sent and responses
// received by a client.
type contentTypes struct {
	mu        sync.Mutex
	sent, got map[string]int
}

func (c *contentTypes) RoundTrip(next http.RoundTripper) http.RoundTripper {
	return roundTripperFunc(func(r *http.Request) (*http.Response, error) {
		resp, err := next.RoundTrip(r)
		c.mu.Lock()
		defer c.mu.Unlock()
		if ct := r.Header.Get("Content-Type"); ct != "" {
			c.sent[strings.Split(ct, ";")[0]]++
		}
		if err == nil && resp.StatusCode < 300 {
			c.got[strings.Split(resp.Header.Get("Content-Type"), ";")[0]]++
		}
		return resp, err
	})
}

type roundTripperFunc func(*http.Request) (*http.Response, error)

func (f roundTripperFunc) RoundTrip(r *http.Request) (*http.Response, error) { return f(r) }

func TestCoreE2ECRUD(t *testing.T) {
	s := startControlPlane(t, "")
	for _, protobuf := range []bool{false, true} {
		name := map[bool]string{false: "json", true: "protobuf"}[protobuf]
		t.Run(name, func(t *testing.T) {
			cfg := s.restConfig(protobuf)
			seen := &contentTypes{sent: map[string]int{}, got: map[string]int{}}
			cfg.WrapTransport = seen.RoundTrip
			cs, err := kubernetes.NewForConfig(cfg)
			if err != nil {
				t.Fatal(err)
			}
			ns := createNamespace(t, cs, "crud-"+name)

			t.Run("configmaps", func(t *testing.T) {
				exerciseCRUD(t, cs.CoreV1().ConfigMaps(ns), &corev1.ConfigMap{
					ObjectMeta: metav1.ObjectMeta{Name: "cm", Labels: map[string]string{"a": "b"}},
					Data:       map[string]string{"k": "v"}, BinaryData: map[string][]byte{"bin": {0, 1, 2}},
				}, func(c *corev1.ConfigMap) { c.Data["k"] = "v2" }, func(c *corev1.ConfigMap) error {
					if c.Data["k"] != "v2" || !bytes.Equal(c.BinaryData["bin"], []byte{0, 1, 2}) {
						return fmt.Errorf("data %v binaryData %v", c.Data, c.BinaryData)
					}
					return nil
				})
			})
			t.Run("secrets", func(t *testing.T) {
				exerciseCRUD(t, cs.CoreV1().Secrets(ns), &corev1.Secret{
					ObjectMeta: metav1.ObjectMeta{Name: "s"},
					StringData: map[string]string{"password": "hunter2"},
				}, func(s *corev1.Secret) { s.Data["token"] = []byte("t0k3n") }, func(s *corev1.Secret) error {
					if string(s.Data["password"]) != "hunter2" || string(s.Data["token"]) != "t0k3n" || s.Type != corev1.SecretTypeOpaque || len(s.StringData) != 0 {
						return fmt.Errorf("secret type %q data %q stringData %q", s.Type, s.Data, s.StringData)
					}
					return nil
				})
			})
			t.Run("services", func(t *testing.T) {
				// Headless: independent of cluster-IP allocation (tested apart).
				exerciseCRUD(t, cs.CoreV1().Services(ns), &corev1.Service{
					ObjectMeta: metav1.ObjectMeta{Name: "svc"},
					Spec: corev1.ServiceSpec{ClusterIP: corev1.ClusterIPNone, Selector: map[string]string{"app": "x"},
						Ports: []corev1.ServicePort{{Name: "http", Port: 80, TargetPort: intstr.FromInt32(8080)}}},
				}, func(s *corev1.Service) { s.Spec.Selector["app"] = "y" }, func(s *corev1.Service) error {
					if s.Spec.Selector["app"] != "y" || s.Spec.Ports[0].Protocol != corev1.ProtocolTCP || s.Spec.ClusterIP != corev1.ClusterIPNone {
						return fmt.Errorf("spec %+v", s.Spec)
					}
					return nil
				})
			})
			t.Run("deployments", func(t *testing.T) {
				exerciseCRUD(t, cs.AppsV1().Deployments(ns), testDeployment("web", 2),
					func(d *appsv1.Deployment) { d.Spec.Replicas = ptr(int32(5)) },
					func(d *appsv1.Deployment) error {
						if *d.Spec.Replicas != 5 || d.Generation != 2 || d.Spec.Strategy.Type != appsv1.RollingUpdateDeploymentStrategyType ||
							d.Spec.RevisionHistoryLimit == nil || *d.Spec.RevisionHistoryLimit != 10 {
							return fmt.Errorf("replicas %d generation %d strategy %+v revisionHistoryLimit %v",
								*d.Spec.Replicas, d.Generation, d.Spec.Strategy, d.Spec.RevisionHistoryLimit)
						}
						return nil
					})
			})
			t.Run("namespaces", func(t *testing.T) {
				exerciseCRUD(t, cs.CoreV1().Namespaces(), &corev1.Namespace{
					ObjectMeta: metav1.ObjectMeta{Name: "crud-ns-" + name},
				}, func(n *corev1.Namespace) { n.Labels = map[string]string{"team": "a"} }, func(n *corev1.Namespace) error {
					if n.Labels["team"] != "a" || n.Labels["kubernetes.io/metadata.name"] != "crud-ns-"+name ||
						n.Status.Phase != corev1.NamespaceActive || len(n.Spec.Finalizers) != 1 {
						return fmt.Errorf("labels %v phase %q finalizers %v", n.Labels, n.Status.Phase, n.Spec.Finalizers)
					}
					return nil
				})
			})

			seen.mu.Lock()
			defer seen.mu.Unlock()
			want := "application/json"
			if protobuf {
				want = "application/vnd.kubernetes.protobuf"
			}
			for ct, n := range seen.sent {
				if ct != want {
					t.Errorf("%d requests sent as %s, want all %s", n, ct, want)
				}
			}
			for ct, n := range seen.got {
				if ct != want {
					t.Errorf("%d responses came as %s, want all %s", n, ct, want)
				}
			}
			if seen.sent[want] == 0 || seen.got[want] == 0 {
				t.Errorf("no %s traffic: sent %v got %v", want, seen.sent, seen.got)
			}
		})
	}
}

func ptr[T any](v T) *T { return &v }

func testDeployment(name string, replicas int32) *appsv1.Deployment {
	labels := map[string]string{"app": name}
	return &appsv1.Deployment{
		ObjectMeta: metav1.ObjectMeta{Name: name},
		Spec: appsv1.DeploymentSpec{
			Replicas: ptr(replicas),
			Selector: &metav1.LabelSelector{MatchLabels: labels},
			Template: corev1.PodTemplateSpec{
				ObjectMeta: metav1.ObjectMeta{Labels: labels},
				Spec:       corev1.PodSpec{Containers: []corev1.Container{{Name: "c", Image: "nginx:1.27"}}},
			},
		},
	}
}

// informerEvents collects an informer's notifications as "ADD name",
// "UPDATE name" and "DELETE name".
type informerEvents struct {
	ch chan string
}

func newInformerEvents(t testing.TB, inf cache.SharedIndexInformer) *informerEvents {
	e := &informerEvents{ch: make(chan string, 10000)}
	name := func(obj any) string {
		if d, ok := obj.(cache.DeletedFinalStateUnknown); ok {
			obj = d.Obj
		}
		a, err := meta.Accessor(obj)
		if err != nil {
			return fmt.Sprintf("%T", obj)
		}
		return a.GetName()
	}
	_, err := inf.AddEventHandler(cache.ResourceEventHandlerFuncs{
		AddFunc:    func(obj any) { e.ch <- "ADD " + name(obj) },
		UpdateFunc: func(_, obj any) { e.ch <- "UPDATE " + name(obj) },
		DeleteFunc: func(obj any) { e.ch <- "DELETE " + name(obj) },
	})
	if err != nil {
		t.Fatal(err)
	}
	return e
}

// expect waits (bounded) for the event want, skipping others.
func (e *informerEvents) expect(t testing.TB, want string) {
	t.Helper()
	timeout := time.After(15 * time.Second)
	var skipped []string
	for {
		select {
		case got := <-e.ch:
			if got == want {
				return
			}
			skipped = append(skipped, got)
		case <-timeout:
			t.Fatalf("informer: no %q within 15s (saw %v)", want, skipped)
		}
	}
}

// storeMatchesServer reports whether the informer's store holds exactly
// the server's configmaps of ns, at the same resourceVersions.
func storeMatchesServer(ctx context.Context, cs kubernetes.Interface, store cache.Store, ns string) (bool, string) {
	list, err := cs.CoreV1().ConfigMaps(ns).List(ctx, metav1.ListOptions{})
	if err != nil {
		return false, err.Error()
	}
	want := map[string]string{}
	for _, cm := range list.Items {
		want[cm.Name] = cm.ResourceVersion
	}
	got := map[string]string{}
	for _, obj := range store.List() {
		cm := obj.(*corev1.ConfigMap)
		got[cm.Name] = cm.ResourceVersion
	}
	if len(got) != len(want) {
		return false, fmt.Sprintf("informer has %d objects, server %d", len(got), len(want))
	}
	for name, rv := range want {
		if got[name] != rv {
			return false, fmt.Sprintf("%s: informer rv %q, server rv %q", name, got[name], rv)
		}
	}
	return true, ""
}

func TestCoreE2EInformer(t *testing.T) {
	s := startControlPlane(t, "")
	ctx := testCtx(t)
	cs := s.clientset(t, true)
	ns := createNamespace(t, cs, "informer")
	cms := cs.CoreV1().ConfigMaps(ns)
	if _, err := cms.Create(ctx, &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "pre-existing"}}, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}

	factory := informers.NewSharedInformerFactoryWithOptions(cs, 0, informers.WithNamespace(ns))
	inf := factory.Core().V1().ConfigMaps().Informer()
	var watchErrs sync.Map
	if err := inf.SetWatchErrorHandler(func(_ *cache.Reflector, err error) { watchErrs.Store(err.Error(), true) }); err != nil {
		t.Fatal(err)
	}
	events := newInformerEvents(t, inf)
	stop := make(chan struct{})
	factory.Start(stop)
	defer func() { close(stop); factory.Shutdown() }()
	syncCtx, cancel := context.WithTimeout(ctx, 30*time.Second)
	defer cancel()
	if !cache.WaitForCacheSync(syncCtx.Done(), inf.HasSynced) {
		t.Fatal("informer did not sync within 30s")
	}
	events.expect(t, "ADD pre-existing")

	cm, err := cms.Create(ctx, &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "a"}, Data: map[string]string{"v": "1"}}, metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	events.expect(t, "ADD a")
	cm.Data["v"] = "2"
	if _, err := cms.Update(ctx, cm, metav1.UpdateOptions{}); err != nil {
		t.Fatal(err)
	}
	events.expect(t, "UPDATE a")
	if err := cms.Delete(ctx, "a", metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	events.expect(t, "DELETE a")
	lister := factory.Core().V1().ConfigMaps().Lister()
	if _, err := lister.ConfigMaps(ns).Get("a"); !apierrors.IsNotFound(err) {
		t.Errorf("lister still has deleted configmap: %v", err)
	}

	// Churn around two forced compactions: whatever the informer's watch
	// was behind on, it must converge to the server's state.
	for round := range 2 {
		for i := range 40 {
			name := fmt.Sprintf("churn-%02d", i)
			obj := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: name}, Data: map[string]string{"round": strconv.Itoa(round)}}
			if round == 0 {
				_, err = cms.Create(ctx, obj, metav1.CreateOptions{})
			} else if i%2 == 0 {
				err = cms.Delete(ctx, name, metav1.DeleteOptions{})
			} else {
				_, err = cms.Update(ctx, obj, metav1.UpdateOptions{})
			}
			if err != nil {
				t.Fatal(err)
			}
			if i == 20 {
				if _, err := storage.CompactNow(ctx, s.cp.Etcd.Client()); err != nil {
					t.Fatal(err)
				}
			}
		}
	}
	if _, err := storage.CompactNow(ctx, s.cp.Etcd.Client()); err != nil {
		t.Fatal(err)
	}
	if _, err := cms.Create(ctx, &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "after-compaction"}}, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	events.expect(t, "ADD after-compaction")
	controlplanetest.Eventually(t, 30*time.Second, "informer converges after compaction", func() (bool, string) {
		return storeMatchesServer(ctx, cs, inf.GetStore(), ns)
	})
	watchErrs.Range(func(k, _ any) bool { t.Logf("informer watch error (recovered): %s", k); return true })
}

// rawWatch opens GET path?watch=1&resourceVersion=rv and returns the HTTP
// status and, for a 200, the first event.
func rawWatch(t *testing.T, s *started, path, rv string) (int, *metav1.WatchEvent, string) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 15*time.Second)
	defer cancel()
	req, _ := http.NewRequestWithContext(ctx, http.MethodGet, s.cp.URL()+path+"?watch=1&resourceVersion="+url.QueryEscape(rv), nil)
	resp, err := s.client(t, true).Do(req)
	if err != nil {
		t.Fatalf("watch %s from %s: %v", path, rv, err)
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		body, _ := io.ReadAll(resp.Body)
		return resp.StatusCode, nil, string(body)
	}
	var ev metav1.WatchEvent
	if err := json.NewDecoder(resp.Body).Decode(&ev); err != nil {
		t.Fatalf("decoding the first watch event: %v", err)
	}
	return resp.StatusCode, &ev, string(ev.Object.Raw)
}

// expectExpired checks that a raw watch from rv is refused with 410 Gone
// (Expired), either as the HTTP status or as the stream's ERROR event, as
// kube-apiserver does.
func expectExpired(t *testing.T, s *started, path, rv string) {
	t.Helper()
	code, ev, body := rawWatch(t, s, path, rv)
	if code == http.StatusOK {
		if ev.Type != string(watch.Error) {
			t.Fatalf("watch from %s: first event %s %s, want ERROR 410", rv, ev.Type, body)
		}
		code = 0
		var st metav1.Status
		if json.Unmarshal(ev.Object.Raw, &st) == nil {
			code = int(st.Code)
		}
	}
	var st metav1.Status
	_ = json.Unmarshal([]byte(body), &st)
	if code != http.StatusGone || st.Reason != metav1.StatusReasonExpired {
		t.Fatalf("watch from %s: want 410 Expired, got %d: %s", rv, code, body)
	}
}

func TestCoreE2ERestartSameDataDir(t *testing.T) {
	dir := t.TempDir()
	s1 := startControlPlaneAt(t, dir, 0)
	port := s1.cp.Port()
	ctx := testCtx(t)
	cs := s1.clientset(t, false)
	ns := createNamespace(t, cs, "restart")
	cms := cs.CoreV1().ConfigMaps(ns)
	for _, name := range []string{"keep", "change", "gone"} {
		if _, err := cms.Create(ctx, &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: name}, Data: map[string]string{"v": "1"}}, metav1.CreateOptions{}); err != nil {
			t.Fatal(err)
		}
	}
	oldList, err := cms.List(ctx, metav1.ListOptions{})
	if err != nil {
		t.Fatal(err)
	}
	oldRV := oldList.ResourceVersion

	factory := informers.NewSharedInformerFactoryWithOptions(cs, 0, informers.WithNamespace(ns))
	oldInf := factory.Core().V1().ConfigMaps().Informer()
	stop := make(chan struct{})
	factory.Start(stop)
	defer func() { close(stop); factory.Shutdown() }()
	syncCtx, cancel := context.WithTimeout(ctx, 30*time.Second)
	defer cancel()
	if !cache.WaitForCacheSync(syncCtx.Done(), oldInf.HasSynced) {
		t.Fatal("informer did not sync")
	}

	s1.stop()
	s2 := startControlPlaneAt(t, dir, port)
	cs2 := s2.clientset(t, false)
	got, err := cs2.CoreV1().ConfigMaps(ns).List(ctx, metav1.ListOptions{})
	if err != nil {
		t.Fatal(err)
	}
	uids := map[string]string{}
	for _, cm := range got.Items {
		uids[cm.Name] = string(cm.UID)
	}
	for _, cm := range oldList.Items {
		if uids[cm.Name] != string(cm.UID) {
			t.Errorf("%s after restart: uid %q, before %q", cm.Name, uids[cm.Name], cm.UID)
		}
	}

	cms2 := cs2.CoreV1().ConfigMaps(ns)
	if _, err := cms2.Update(ctx, &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "change"}, Data: map[string]string{"v": "2"}}, metav1.UpdateOptions{}); err != nil {
		t.Fatal(err)
	}
	if err := cms2.Delete(ctx, "gone", metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	if _, err := cms2.Create(ctx, &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "new"}}, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	if _, err := storage.CompactNow(ctx, s2.cp.Etcd.Client()); err != nil {
		t.Fatal(err)
	}

	t.Run("old resourceVersion watch is 410 Expired", func(t *testing.T) {
		expectExpired(t, s2, "/api/v1/namespaces/"+ns+"/configmaps", oldRV)
	})
	t.Run("informer from before the restart converges", func(t *testing.T) {
		controlplanetest.Eventually(t, 60*time.Second, "pre-restart informer converges", func() (bool, string) {
			return storeMatchesServer(ctx, cs2, oldInf.GetStore(), ns)
		})
	})
	t.Run("new informer syncs", func(t *testing.T) {
		f2 := informers.NewSharedInformerFactoryWithOptions(cs2, 0, informers.WithNamespace(ns))
		inf2 := f2.Core().V1().ConfigMaps().Informer()
		stop2 := make(chan struct{})
		f2.Start(stop2)
		defer func() { close(stop2); f2.Shutdown() }()
		syncCtx, cancel := context.WithTimeout(ctx, 30*time.Second)
		defer cancel()
		if !cache.WaitForCacheSync(syncCtx.Done(), inf2.HasSynced) {
			t.Fatal("new informer did not sync")
		}
		if ok, detail := storeMatchesServer(ctx, cs2, inf2.GetStore(), ns); !ok {
			t.Fatal(detail)
		}
	})
}

func TestCoreE2EWatchFromCompactedRevision(t *testing.T) {
	s := startControlPlane(t, "")
	ctx := testCtx(t)
	cs := s.clientset(t, false)
	ns := createNamespace(t, cs, "compacted")
	cms := cs.CoreV1().ConfigMaps(ns)
	cm, err := cms.Create(ctx, &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "c"}, Data: map[string]string{"n": "0"}}, metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	oldRV := cm.ResourceVersion
	// Past the watch cache's event window too (kube serves recent history
	// from its cache even after etcd compacted it).
	for i := 1; i <= 1100; i++ {
		cm.Data["n"] = strconv.Itoa(i)
		if cm, err = cms.Update(ctx, cm, metav1.UpdateOptions{}); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := storage.CompactNow(ctx, s.cp.Etcd.Client()); err != nil {
		t.Fatal(err)
	}
	t.Run("raw watch", func(t *testing.T) {
		expectExpired(t, s, "/api/v1/namespaces/"+ns+"/configmaps", oldRV)
	})
	t.Run("client-go watch", func(t *testing.T) {
		w, err := cms.Watch(ctx, metav1.ListOptions{ResourceVersion: oldRV})
		if err != nil {
			if !apierrors.IsResourceExpired(err) && !apierrors.IsGone(err) {
				t.Fatalf("watch: want 410, got %v", err)
			}
			return
		}
		defer w.Stop()
		select {
		case ev := <-w.ResultChan():
			st, ok := ev.Object.(*metav1.Status)
			if ev.Type != watch.Error || !ok || st.Code != http.StatusGone {
				t.Fatalf("first event %s %#v, want ERROR 410", ev.Type, ev.Object)
			}
		case <-time.After(15 * time.Second):
			t.Fatal("no event within 15s")
		}
	})
	t.Run("exact list at a compacted revision", func(t *testing.T) {
		_, err := cms.List(ctx, metav1.ListOptions{ResourceVersion: oldRV, ResourceVersionMatch: metav1.ResourceVersionMatchExact})
		if statusCode(err) != http.StatusGone {
			t.Fatalf("list at compacted rv %s: want 410, got %v", oldRV, err)
		}
	})
	t.Run("watch from the current revision works", func(t *testing.T) {
		w, err := cms.Watch(ctx, metav1.ListOptions{ResourceVersion: cm.ResourceVersion})
		if err != nil {
			t.Fatal(err)
		}
		defer w.Stop()
		if err := cms.Delete(ctx, "c", metav1.DeleteOptions{}); err != nil {
			t.Fatal(err)
		}
		select {
		case ev := <-w.ResultChan():
			if ev.Type != watch.Deleted {
				t.Fatalf("event %s %#v, want DELETED", ev.Type, ev.Object)
			}
		case <-time.After(15 * time.Second):
			t.Fatal("no event within 15s")
		}
	})
}

// createConfigMaps creates n configmaps name-0000... in ns with 8 workers.
func createConfigMaps(t testing.TB, cs kubernetes.Interface, ns string, n int, labels map[string]string) {
	t.Helper()
	ctx := context.Background()
	var next atomic.Int64
	errs := make(chan error, 8)
	var wg sync.WaitGroup
	for range 8 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for {
				i := int(next.Add(1)) - 1
				if i >= n {
					return
				}
				_, err := cs.CoreV1().ConfigMaps(ns).Create(ctx, &corev1.ConfigMap{
					ObjectMeta: metav1.ObjectMeta{Name: fmt.Sprintf("cm-%04d", i), Labels: labels},
					Data:       map[string]string{"i": strconv.Itoa(i)},
				}, metav1.CreateOptions{})
				if err != nil {
					errs <- err
					return
				}
			}
		}()
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Fatalf("creating configmaps: %v", err)
	}
}

func TestCoreE2EPagination(t *testing.T) {
	s := startControlPlane(t, "")
	ctx := testCtx(t)
	cs := s.clientset(t, true)
	ns := createNamespace(t, cs, "paging")
	createConfigMaps(t, cs, ns, 1000, nil)
	cms := cs.CoreV1().ConfigMaps(ns)
	// Every name the namespace holds: the 1,000 and what controllers add
	// (kube-root-ca.crt), as a real cluster has.
	full, err := cms.List(ctx, metav1.ListOptions{})
	if err != nil {
		t.Fatal(err)
	}
	all := map[string]bool{}
	for _, cm := range full.Items {
		all[cm.Name] = true
	}
	total := len(all)
	if total < 1000 {
		t.Fatalf("namespace holds %d configmaps after creating 1000", total)
	}

	t.Run("client-go pager", func(t *testing.T) {
		pages := 0
		p := pager.New(pager.SimplePageFunc(func(opts metav1.ListOptions) (runtime.Object, error) {
			pages++
			if opts.Limit != 100 {
				return nil, fmt.Errorf("pager asked for limit %d", opts.Limit)
			}
			return cms.List(ctx, opts)
		}))
		p.PageSize = 100
		seen := map[string]int{}
		err := p.EachListItem(ctx, metav1.ListOptions{}, func(obj runtime.Object) error {
			seen[obj.(*corev1.ConfigMap).Name]++
			return nil
		})
		if err != nil {
			t.Fatal(err)
		}
		checkEachOnce(t, seen, all)
		if want := (total + 99) / 100; pages != want {
			t.Errorf("pager fetched %d pages, want %d", pages, want)
		}
	})

	t.Run("raw continue tokens", func(t *testing.T) {
		seen := map[string]int{}
		opts := metav1.ListOptions{Limit: 100}
		var snapshotRV string
		for page := 0; ; page++ {
			if page > total/100 {
				t.Fatalf("more than %d pages", total/100+1)
			}
			list, err := cms.List(ctx, opts)
			if err != nil {
				t.Fatalf("page %d: %v", page, err)
			}
			if want := min(100, total-len(seen)); len(list.Items) != want {
				t.Fatalf("page %d has %d items, want %d", page, len(list.Items), want)
			}
			if page == 0 {
				snapshotRV = list.ResourceVersion
				// Not part of the snapshot being paged through.
				if _, err := cms.Create(ctx, &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "cm-zzzz-late"}}, metav1.CreateOptions{}); err != nil {
					t.Fatal(err)
				}
			} else if list.ResourceVersion != snapshotRV {
				t.Errorf("page %d at resourceVersion %s, first page at %s", page, list.ResourceVersion, snapshotRV)
			}
			for _, cm := range list.Items {
				seen[cm.Name]++
			}
			remaining := total - len(seen)
			if remaining == 0 {
				if list.Continue != "" || (list.RemainingItemCount != nil && *list.RemainingItemCount != 0) {
					t.Errorf("last page: continue %q remainingItemCount %s", list.Continue, fmtCount(list.RemainingItemCount))
				}
				break
			}
			if list.Continue == "" {
				t.Fatalf("page %d: no continue token with %d items left", page, remaining)
			}
			if list.RemainingItemCount == nil || *list.RemainingItemCount != int64(remaining) {
				t.Errorf("page %d: remainingItemCount %s, want %d", page, fmtCount(list.RemainingItemCount), remaining)
			}
			opts.Continue = list.Continue
		}
		checkEachOnce(t, seen, all)
	})

	t.Run("continue token after compaction is 410", func(t *testing.T) {
		list, err := cms.List(ctx, metav1.ListOptions{Limit: 100})
		if err != nil {
			t.Fatal(err)
		}
		if _, err := cms.Create(ctx, &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "cm-zzzz-later"}}, metav1.CreateOptions{}); err != nil {
			t.Fatal(err)
		}
		if _, err := storage.CompactNow(ctx, s.cp.Etcd.Client()); err != nil {
			t.Fatal(err)
		}
		_, err = cms.List(ctx, metav1.ListOptions{Limit: 100, Continue: list.Continue})
		if !apierrors.IsResourceExpired(err) || statusCode(err) != http.StatusGone {
			t.Fatalf("continue after compaction: want 410 Expired, got %v", err)
		}
	})
}

func checkEachOnce(t *testing.T, seen map[string]int, all map[string]bool) {
	t.Helper()
	if len(seen) != len(all) {
		t.Errorf("saw %d distinct configmaps, want %d", len(seen), len(all))
	}
	for name := range all {
		if seen[name] != 1 {
			t.Errorf("%s seen %d times", name, seen[name])
		}
	}
	for name := range seen {
		if !all[name] {
			t.Errorf("%s, created after the first page, was returned", name)
		}
	}
}

func fmtCount(n *int64) string {
	if n == nil {
		return "nil"
	}
	return strconv.FormatInt(*n, 10)
}

func TestCoreE2EConcurrentUpdates(t *testing.T) {
	s := startControlPlane(t, "")
	ctx := testCtx(t)
	cs := s.clientset(t, false)
	ns := createNamespace(t, cs, "conflicts")
	cms := cs.CoreV1().ConfigMaps(ns)
	if _, err := cms.Create(ctx, &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "counter"}, Data: map[string]string{"n": "0"}}, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	const workers, perWorker = 8, 25
	var conflicts, attempts atomic.Int64
	var start sync.WaitGroup
	start.Add(workers)
	increment := func(first bool) error {
		cm, err := cms.Get(ctx, "counter", metav1.GetOptions{})
		if err != nil {
			return err
		}
		if first {
			// Everybody read the same version: all but one update is stale.
			start.Done()
			start.Wait()
		}
		n, _ := strconv.Atoi(cm.Data["n"])
		cm.Data["n"] = strconv.Itoa(n + 1)
		attempts.Add(1)
		_, err = cms.Update(ctx, cm, metav1.UpdateOptions{})
		if apierrors.IsConflict(err) {
			conflicts.Add(1)
		}
		return err
	}
	// Retry every 1-2ms for up to ~2s: eight writers on one object can lose
	// many rounds in a row on a loaded machine. (No Cap: reaching it ends a
	// wait.Backoff, which once made a worker give up here.)
	backoff := wait.Backoff{Steps: 1000, Duration: time.Millisecond, Factor: 1, Jitter: 1}
	var wg sync.WaitGroup
	errs := make(chan error, workers)
	for w := range workers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range perWorker {
				first := i == 0
				err := retry.RetryOnConflict(backoff, func() error {
					err := increment(first)
					first = false
					return err
				})
				if err != nil {
					errs <- fmt.Errorf("worker %d increment %d: %w", w, i, err)
					return
				}
			}
		}()
	}
	wg.Wait()
	close(errs)
	failed := false
	for err := range errs {
		t.Error(err)
		failed = true
	}
	if failed {
		return // a worker stopped early: the counter cannot add up
	}
	cm, err := cms.Get(ctx, "counter", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if cm.Data["n"] != strconv.Itoa(workers*perWorker) {
		t.Errorf("counter = %s after %d increments: lost updates", cm.Data["n"], workers*perWorker)
	}
	if conflicts.Load() < workers-1 {
		t.Errorf("%d conflicts, want at least %d (all workers updated the same version first)", conflicts.Load(), workers-1)
	}
	t.Logf("%d attempts, %d conflicts (409) for %d increments", attempts.Load(), conflicts.Load(), workers*perWorker)
}

func TestCoreE2EFieldSelectors(t *testing.T) {
	s := startControlPlane(t, "")
	ctx := testCtx(t)
	cs := s.clientset(t, false)
	ns := createNamespace(t, cs, "fields")

	names := func(list runtime.Object) string {
		items, _ := meta.ExtractList(list)
		var out []string
		for _, it := range items {
			a, _ := meta.Accessor(it)
			out = append(out, a.GetName())
		}
		sort.Strings(out)
		return strings.Join(out, ",")
	}
	check := func(t *testing.T, what string, list runtime.Object, err error, want string) {
		t.Helper()
		if err != nil {
			t.Fatalf("%s: %v", what, err)
		}
		if got := names(list); got != want {
			t.Errorf("%s = [%s], want [%s]", what, got, want)
		}
	}

	t.Run("pods", func(t *testing.T) {
		pods := cs.CoreV1().Pods(ns)
		for _, p := range []struct{ name, node string }{{"p1", "node-a"}, {"p2", "node-b"}, {"p3", "node-a"}} {
			_, err := pods.Create(ctx, &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: p.name},
				Spec: corev1.PodSpec{NodeName: p.node, Containers: []corev1.Container{{Name: "c", Image: "busybox"}}}}, metav1.CreateOptions{})
			if err != nil {
				t.Fatal(err)
			}
		}
		p2, err := pods.Get(ctx, "p2", metav1.GetOptions{})
		if err != nil {
			t.Fatal(err)
		}
		if p2.Status.Phase != corev1.PodPending {
			t.Errorf("new pod phase %q, want Pending", p2.Status.Phase)
		}
		p2.Status.Phase = corev1.PodRunning
		if _, err := pods.UpdateStatus(ctx, p2, metav1.UpdateOptions{}); err != nil {
			t.Fatal(err)
		}
		list, err := pods.List(ctx, metav1.ListOptions{FieldSelector: "spec.nodeName=node-a"})
		check(t, "spec.nodeName=node-a", list, err, "p1,p3")
		list, err = pods.List(ctx, metav1.ListOptions{FieldSelector: "status.phase=Running"})
		check(t, "status.phase=Running", list, err, "p2")
		list, err = pods.List(ctx, metav1.ListOptions{FieldSelector: "status.phase!=Running,spec.nodeName=node-a,metadata.name!=p1"})
		check(t, "status.phase!=Running,spec.nodeName=node-a,metadata.name!=p1", list, err, "p3")
		// Served from the watch cache (resourceVersion=0) the same way.
		list, err = pods.List(ctx, metav1.ListOptions{FieldSelector: "spec.nodeName=node-b", ResourceVersion: "0"})
		check(t, "spec.nodeName=node-b (rv=0)", list, err, "p2")
	})

	t.Run("secrets", func(t *testing.T) {
		secrets := cs.CoreV1().Secrets(ns)
		for name, typ := range map[string]corev1.SecretType{"opaque": corev1.SecretTypeOpaque, "custom": "example.com/custom"} {
			if _, err := secrets.Create(ctx, &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Name: name}, Type: typ}, metav1.CreateOptions{}); err != nil {
				t.Fatal(err)
			}
		}
		list, err := secrets.List(ctx, metav1.ListOptions{FieldSelector: "type=example.com/custom"})
		check(t, "type=example.com/custom", list, err, "custom")
		list, err = secrets.List(ctx, metav1.ListOptions{FieldSelector: "type=Opaque"})
		check(t, "type=Opaque", list, err, "opaque")
	})

	t.Run("events", func(t *testing.T) {
		events := cs.CoreV1().Events(ns)
		for i, target := range []string{"web-1", "web-2", "web-1"} {
			now := metav1.Now()
			_, err := events.Create(ctx, &corev1.Event{
				ObjectMeta:     metav1.ObjectMeta{Name: fmt.Sprintf("ev-%d", i)},
				InvolvedObject: corev1.ObjectReference{Kind: "Pod", Namespace: ns, Name: target, APIVersion: "v1"},
				Reason:         "Started", Message: "started container", Type: corev1.EventTypeNormal,
				Source:         corev1.EventSource{Component: "kubelet"},
				FirstTimestamp: now, LastTimestamp: now, Count: 1,
			}, metav1.CreateOptions{})
			if err != nil {
				t.Fatal(err)
			}
		}
		list, err := events.List(ctx, metav1.ListOptions{FieldSelector: "involvedObject.name=web-1"})
		check(t, "involvedObject.name=web-1", list, err, "ev-0,ev-2")
		list, err = events.List(ctx, metav1.ListOptions{FieldSelector: "involvedObject.kind=Pod,involvedObject.name=web-2,reason=Started"})
		check(t, "involvedObject.kind=Pod,involvedObject.name=web-2,reason=Started", list, err, "ev-1")
	})

	t.Run("unsupported field is 400 naming it", func(t *testing.T) {
		_, err := cs.CoreV1().ConfigMaps(ns).List(ctx, metav1.ListOptions{FieldSelector: "spec.foo=bar"})
		if !apierrors.IsBadRequest(err) || !strings.Contains(err.Error(), `"spec.foo"`) && !strings.Contains(err.Error(), "spec.foo") {
			t.Fatalf("want 400 naming spec.foo, got %v", err)
		}
		_, err = cs.CoreV1().Pods(ns).Watch(ctx, metav1.ListOptions{FieldSelector: "spec.bogus=1"})
		if !apierrors.IsBadRequest(err) || !strings.Contains(err.Error(), "spec.bogus") {
			t.Fatalf("watch: want 400 naming spec.bogus, got %v", err)
		}
	})
}

func TestCoreE2EWriteSemantics(t *testing.T) {
	s := startControlPlane(t, "")
	ctx := testCtx(t)
	cs := s.clientset(t, false)
	ns := createNamespace(t, cs, "writes")
	cms := cs.CoreV1().ConfigMaps(ns)

	t.Run("finalizers hold deletion until removed", func(t *testing.T) {
		_, err := cms.Create(ctx, &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "held", Finalizers: []string{"example.com/hold"}}}, metav1.CreateOptions{})
		if err != nil {
			t.Fatal(err)
		}
		w, err := cms.Watch(ctx, metav1.ListOptions{FieldSelector: "metadata.name=held"})
		if err != nil {
			t.Fatal(err)
		}
		defer w.Stop()
		if err := cms.Delete(ctx, "held", metav1.DeleteOptions{}); err != nil {
			t.Fatal(err)
		}
		cm, err := cms.Get(ctx, "held", metav1.GetOptions{})
		if err != nil {
			t.Fatalf("object with a finalizer gone after delete: %v", err)
		}
		if cm.DeletionTimestamp == nil || cm.DeletionGracePeriodSeconds == nil || *cm.DeletionGracePeriodSeconds != 0 {
			t.Fatalf("deletionTimestamp %v gracePeriod %v", cm.DeletionTimestamp, cm.DeletionGracePeriodSeconds)
		}
		// New finalizers may not be added while deleting; data may change.
		cm.Finalizers = nil
		if _, err := cms.Update(ctx, cm, metav1.UpdateOptions{}); err != nil {
			t.Fatal(err)
		}
		if _, err := cms.Get(ctx, "held", metav1.GetOptions{}); !apierrors.IsNotFound(err) {
			t.Fatalf("after removing the last finalizer: want NotFound, got %v", err)
		}
		var types []watch.EventType
		timeout := time.After(15 * time.Second)
		for len(types) < 4 {
			select {
			case ev := <-w.ResultChan():
				types = append(types, ev.Type)
			case <-timeout:
				t.Fatalf("watch saw only %v", types)
			}
		}
		// kube writes the finalizer removal, then deletes.
		if fmt.Sprint(types) != "[ADDED MODIFIED MODIFIED DELETED]" {
			t.Errorf("watch saw %v, want [ADDED MODIFIED MODIFIED DELETED]", types)
		}
	})

	t.Run("deletecollection with a label selector", func(t *testing.T) {
		for i := range 6 {
			app := map[bool]string{true: "a", false: "b"}[i%2 == 0]
			_, err := cms.Create(ctx, &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: fmt.Sprintf("dc-%d", i),
				Labels: map[string]string{"app": app, "dc": "yes"}}}, metav1.CreateOptions{})
			if err != nil {
				t.Fatal(err)
			}
		}
		if err := cms.DeleteCollection(ctx, metav1.DeleteOptions{}, metav1.ListOptions{LabelSelector: "app=a,dc=yes"}); err != nil {
			t.Fatal(err)
		}
		list, err := cms.List(ctx, metav1.ListOptions{LabelSelector: "dc=yes"})
		if err != nil {
			t.Fatal(err)
		}
		var left []string
		for _, cm := range list.Items {
			left = append(left, cm.Name)
		}
		if fmt.Sprint(left) != "[dc-1 dc-3 dc-5]" {
			t.Errorf("left after deletecollection app=a: %v", left)
		}
	})

	t.Run("dryRun=All persists nothing", func(t *testing.T) {
		dry := []string{metav1.DryRunAll}
		out, err := cms.Create(ctx, &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "dry"}, Data: map[string]string{"v": "1"}}, metav1.CreateOptions{DryRun: dry})
		if err != nil || out.Name != "dry" || out.Data["v"] != "1" || out.UID == "" || out.CreationTimestamp.IsZero() {
			t.Fatalf("dry-run create = %+v, %v", out, err)
		}
		if _, err := cms.Get(ctx, "dry", metav1.GetOptions{}); !apierrors.IsNotFound(err) {
			t.Fatalf("dry-run create persisted: %v", err)
		}
		real, err := cms.Create(ctx, &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "dry"}, Data: map[string]string{"v": "1"}}, metav1.CreateOptions{})
		if err != nil {
			t.Fatal(err)
		}
		change := real.DeepCopy()
		change.Data["v"] = "2"
		out, err = cms.Update(ctx, change, metav1.UpdateOptions{DryRun: dry})
		if err != nil || out.Data["v"] != "2" {
			t.Fatalf("dry-run update = %+v, %v", out, err)
		}
		if err := cms.Delete(ctx, "dry", metav1.DeleteOptions{DryRun: dry}); err != nil {
			t.Fatalf("dry-run delete: %v", err)
		}
		if err := cms.DeleteCollection(ctx, metav1.DeleteOptions{DryRun: dry}, metav1.ListOptions{}); err != nil {
			t.Fatalf("dry-run deletecollection: %v", err)
		}
		got, err := cms.Get(ctx, "dry", metav1.GetOptions{})
		if err != nil {
			t.Fatalf("dry-run delete removed the object: %v", err)
		}
		if got.Data["v"] != "1" || got.ResourceVersion != real.ResourceVersion {
			t.Errorf("dry-run update persisted: data %v rv %s (was %s)", got.Data, got.ResourceVersion, real.ResourceVersion)
		}
		if _, err := cms.Create(ctx, &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "dry"}}, metav1.CreateOptions{DryRun: dry}); !apierrors.IsAlreadyExists(err) {
			t.Errorf("dry-run create of an existing name: want AlreadyExists, got %v", err)
		}
		_, err = cms.Create(ctx, &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "Bad_Name"}}, metav1.CreateOptions{DryRun: dry})
		if !apierrors.IsInvalid(err) {
			t.Errorf("dry-run create validates: want 422, got %v", err)
		}
		_, err = cms.Update(ctx, real, metav1.UpdateOptions{DryRun: []string{"Some"}})
		// kube: UpdateOptions.meta.k8s.io "" is invalid: dryRun: Unsupported value: []string{"Some"}: supported values: "All"
		if !apierrors.IsInvalid(err) || !strings.Contains(err.Error(), "dryRun: Unsupported value") || !strings.Contains(err.Error(), `"Some"`) {
			t.Errorf("dryRun=Some: want kube's 422 (dryRun: Unsupported value), got %v", err)
		}
	})

	t.Run("generateName", func(t *testing.T) {
		names := map[string]bool{}
		for range 5 {
			cm, err := cms.Create(ctx, &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{GenerateName: "gen-"}}, metav1.CreateOptions{})
			if err != nil {
				t.Fatal(err)
			}
			if !strings.HasPrefix(cm.Name, "gen-") || len(cm.Name) != len("gen-")+5 || cm.GenerateName != "gen-" {
				t.Errorf("generated name %q (generateName %q)", cm.Name, cm.GenerateName)
			}
			names[cm.Name] = true
		}
		if len(names) != 5 {
			t.Errorf("generated names not distinct: %v", names)
		}
	})

	t.Run("4 MiB body is 413", func(t *testing.T) {
		big := strings.Repeat("x", 4<<20)
		_, err := cms.Create(ctx, &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "big"}, Data: map[string]string{"big": big}}, metav1.CreateOptions{})
		if !apierrors.IsRequestEntityTooLargeError(err) || statusCode(err) != http.StatusRequestEntityTooLarge {
			t.Fatalf("want 413, got %v", err)
		}
		if _, err := cms.Get(ctx, "big", metav1.GetOptions{}); !apierrors.IsNotFound(err) {
			t.Errorf("oversized object stored: %v", err)
		}
	})
}

// dialGate lets a test cut a client off the server and keep it off.
type dialGate struct {
	mu     sync.Mutex
	paused bool
	conns  []net.Conn
}

func (g *dialGate) DialContext(ctx context.Context, network, addr string) (net.Conn, error) {
	g.mu.Lock()
	defer g.mu.Unlock()
	if g.paused {
		// Connection refused: client-go's reflector keeps its resourceVersion
		// and retries the watch instead of relisting.
		return nil, &net.OpError{Op: "dial", Net: network, Err: os.NewSyscallError("connect", syscall.ECONNREFUSED)}
	}
	c, err := (&net.Dialer{Timeout: 5 * time.Second}).DialContext(ctx, network, addr)
	if err == nil {
		g.conns = append(g.conns, c)
	}
	return c, err
}

func (g *dialGate) cut() {
	g.mu.Lock()
	defer g.mu.Unlock()
	g.paused = true
	for _, c := range g.conns {
		_ = c.Close()
	}
	g.conns = nil
}

func (g *dialGate) restore() {
	g.mu.Lock()
	defer g.mu.Unlock()
	g.paused = false
}

// TestCoreE2EInformerBehindCompaction cuts an informer off, moves the
// configmaps past the watch cache's window and compacts etcd, so its
// re-watch from its last resourceVersion gets 410 and it must relist.
func TestCoreE2EInformerBehindCompaction(t *testing.T) {
	s := startControlPlane(t, "")
	ctx := testCtx(t)
	writer := s.clientset(t, true)
	ns := createNamespace(t, writer, "behind")
	cms := writer.CoreV1().ConfigMaps(ns)
	for i := range 20 {
		if _, err := cms.Create(ctx, &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: fmt.Sprintf("cm-%02d", i)}}, metav1.CreateOptions{}); err != nil {
			t.Fatal(err)
		}
	}

	gate := &dialGate{}
	var lists atomic.Int64   // full lists: plain GETs or watch-lists
	var expired atomic.Int64 // resumed watches answered 410 (HTTP status)
	cfg := s.restConfig(true)
	cfg.Dial = gate.DialContext
	cfg.WrapTransport = func(next http.RoundTripper) http.RoundTripper {
		return roundTripperFunc(func(r *http.Request) (*http.Response, error) {
			q := r.URL.Query()
			if strings.HasSuffix(r.URL.Path, "/configmaps") && (q.Get("watch") == "" || q.Get("sendInitialEvents") == "true") {
				lists.Add(1)
			}
			resp, err := next.RoundTrip(r)
			if err == nil && resp.StatusCode == http.StatusGone {
				expired.Add(1)
			}
			return resp, err
		})
	}
	reader, err := kubernetes.NewForConfig(cfg)
	if err != nil {
		t.Fatal(err)
	}
	factory := informers.NewSharedInformerFactoryWithOptions(reader, 0, informers.WithNamespace(ns))
	inf := factory.Core().V1().ConfigMaps().Informer()
	stop := make(chan struct{})
	factory.Start(stop)
	defer func() { close(stop); factory.Shutdown() }()
	syncCtx, cancel := context.WithTimeout(ctx, 30*time.Second)
	defer cancel()
	if !cache.WaitForCacheSync(syncCtx.Done(), inf.HasSynced) {
		t.Fatal("informer did not sync")
	}
	// The watch must have delivered an event and lasted over a second, so
	// client-go takes its end for a normal close and resumes it from its
	// resourceVersion (not a relist).
	if _, err := cms.Create(ctx, &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "seen-by-watch"}}, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	controlplanetest.Eventually(t, 15*time.Second, "informer sees the first configmaps", func() (bool, string) {
		return storeMatchesServer(ctx, writer, inf.GetStore(), ns)
	})
	time.Sleep(1100 * time.Millisecond)
	listsBefore := lists.Load()

	gate.cut()
	// More events than the watch cache keeps (1,024), then compaction.
	for i := range 1100 {
		_, err := cms.Update(ctx, &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: fmt.Sprintf("cm-%02d", i%20)},
			Data: map[string]string{"i": strconv.Itoa(i)}}, metav1.UpdateOptions{})
		if err != nil {
			t.Fatal(err)
		}
	}
	for i := range 5 {
		if err := cms.Delete(ctx, fmt.Sprintf("cm-%02d", i), metav1.DeleteOptions{}); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := cms.Create(ctx, &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "while-away"}}, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	if _, err := storage.CompactNow(ctx, s.cp.Etcd.Client()); err != nil {
		t.Fatal(err)
	}
	gate.restore()

	controlplanetest.Eventually(t, 90*time.Second, "informer converges after 410 and relist", func() (bool, string) {
		return storeMatchesServer(ctx, writer, inf.GetStore(), ns)
	})
	// Only the 410 of its resumed watch makes the informer list again
	// (kube sends it as an ERROR event, devplane may as the HTTP status).
	if lists.Load() <= listsBefore {
		t.Errorf("informer converged without relisting (%d lists before the cut, %d after)", listsBefore, lists.Load())
	}
	t.Logf("%d relists, %d watch requests answered with HTTP 410", lists.Load()-listsBefore, expired.Load())
}

// A create sets no status through a kind with a status subresource, as
// kube's create strategies drop it (an object read back with -o yaml and
// created again comes up fresh): the initial status is the kind's own
// (a Namespace Active, a Pod Pending). Nodes are created with their
// status, as kubelets register them. Custom resources with a status
// subresource lose theirs too; without one, status is plain content.
func TestCoreE2ECreateDropsStatus(t *testing.T) {
	s := startControlPlane(t, "")
	ctx := testCtx(t)
	cs := s.clientset(t, false)
	ns := createNamespace(t, cs, "fresh")

	d := testDeployment("stale", 1)
	d.Status = appsv1.DeploymentStatus{Replicas: 7, ReadyReplicas: 7, ObservedGeneration: 9,
		Conditions: []appsv1.DeploymentCondition{{Type: appsv1.DeploymentAvailable, Status: corev1.ConditionTrue}}}
	created, err := cs.AppsV1().Deployments(ns).Create(ctx, d, metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if created.Status.Replicas != 0 || created.Status.ReadyReplicas != 0 || created.Status.ObservedGeneration != 0 || len(created.Status.Conditions) != 0 {
		t.Errorf("deployment created with status %+v", created.Status)
	}

	pod := simplePod("stale", nil)
	pod.Status = corev1.PodStatus{Phase: corev1.PodSucceeded, PodIP: "10.9.9.9", Message: "done"}
	createdPod, err := cs.CoreV1().Pods(ns).Create(ctx, pod, metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if createdPod.Status.Phase != corev1.PodPending || createdPod.Status.PodIP != "" || createdPod.Status.Message != "" || createdPod.Status.QOSClass == "" {
		t.Errorf("pod created with status %+v", createdPod.Status)
	}

	terminating, err := cs.CoreV1().Namespaces().Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: "born-terminating"},
		Status: corev1.NamespaceStatus{Phase: corev1.NamespaceTerminating}}, metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if terminating.Status.Phase != corev1.NamespaceActive || !slices.Contains(terminating.Spec.Finalizers, corev1.FinalizerKubernetes) {
		t.Errorf("namespace created as %q with finalizers %v", terminating.Status.Phase, terminating.Spec.Finalizers)
	}

	node, err := cs.CoreV1().Nodes().Create(ctx, &corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: "registered"},
		Status: corev1.NodeStatus{Capacity: corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("4")},
			Conditions: []corev1.NodeCondition{{Type: corev1.NodeReady, Status: corev1.ConditionTrue}}}}, metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if node.Status.Capacity.Cpu().String() != "4" || len(node.Status.Conditions) != 1 {
		t.Errorf("node registered without its status: %+v", node.Status)
	}

	// Custom resources, with and without a status subresource.
	s.mustKubectlStdin(t, `apiVersion: apiextensions.k8s.io/v1
kind: CustomResourceDefinition
metadata: {name: widgets.fresh.example.com}
spec:
  group: fresh.example.com
  names: {kind: Widget, plural: widgets}
  scope: Namespaced
  versions:
  - name: v1
    served: true
    storage: true
    subresources: {status: {}}
    schema: {openAPIV3Schema: {type: object, x-kubernetes-preserve-unknown-fields: true}}
---
apiVersion: apiextensions.k8s.io/v1
kind: CustomResourceDefinition
metadata: {name: plains.fresh.example.com}
spec:
  group: fresh.example.com
  names: {kind: Plain, plural: plains}
  scope: Namespaced
  versions:
  - name: v1
    served: true
    storage: true
    schema: {openAPIV3Schema: {type: object, x-kubernetes-preserve-unknown-fields: true}}
`, "apply", "-f", "-")
	s.mustKubectl(t, "wait", "--for=condition=Established", "crd/widgets.fresh.example.com", "crd/plains.fresh.example.com", "--timeout=10s")
	out := s.mustKubectlStdin(t, `apiVersion: fresh.example.com/v1
kind: Widget
metadata: {name: w}
spec: {size: 1}
status: {ready: true}
`, "create", "-n", ns, "-f", "-", "-o", "json")
	if strings.Contains(out, `"status"`) || !strings.Contains(out, `"size": 1`) {
		t.Errorf("custom resource created with its status:\n%s", out)
	}
	out = s.mustKubectlStdin(t, `apiVersion: fresh.example.com/v1
kind: Plain
metadata: {name: p}
status: {ready: true}
`, "create", "-n", ns, "-f", "-", "-o", "json")
	if !strings.Contains(out, `"ready": true`) {
		t.Errorf("a custom resource without a status subresource lost its status field:\n%s", out)
	}
}
