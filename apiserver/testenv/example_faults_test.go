package testenv_test

// Example suite: a reconciler's unhappy paths, driven by faults devplane
// injects at its API rather than by a mocked client. The reconciler keeps
// each labelled ConfigMap's "greeting" in step with its "name"; every
// third of its updates is refused with kube's 409 conflict, and its
// watch is ended with 410 Gone, as kube ends a watch it cannot continue.

import (
	"context"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/utils/ptr"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/cache"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/config"
	metricsserver "sigs.k8s.io/controller-runtime/pkg/metrics/server"

	"github.com/devplane/devplane/apiserver/testenv"
)

// greeter is the user the reconciler runs as, so faults hit it alone.
const greeter = "greeter"

// greetingReconciler sets data.greeting from data.name. ignoreErrors
// makes it the buggy kind that drops its update's error.
type greetingReconciler struct {
	client.Client
	ignoreErrors bool
}

func greetingFor(cm *corev1.ConfigMap) string { return "hello, " + cm.Data["name"] }

func (r *greetingReconciler) Reconcile(ctx context.Context, req ctrl.Request) (ctrl.Result, error) {
	cm := &corev1.ConfigMap{}
	if err := r.Get(ctx, req.NamespacedName, cm); err != nil {
		return ctrl.Result{}, client.IgnoreNotFound(err)
	}
	if cm.Labels["example"] != "greeting" || cm.Data["greeting"] == greetingFor(cm) {
		return ctrl.Result{}, nil
	}
	cm.Data["greeting"] = greetingFor(cm)
	err := r.Update(ctx, cm)
	if r.ignoreErrors {
		return ctrl.Result{}, nil // the bug: a conflict is never retried
	}
	// A conflict comes back as an error: controller-runtime requeues the
	// request, and the next Reconcile starts from the newer object.
	return ctrl.Result{}, err
}

// startGreeter runs the reconciler as greeter on namespace ns until t ends.
func startGreeter(t *testing.T, env *testenv.Instance, ns string, ignoreErrors bool) {
	t.Helper()
	mgr, err := ctrl.NewManager(quiet(env.ConfigFor(greeter, "system:masters")), ctrl.Options{
		Metrics:                metricsserver.Options{BindAddress: "0"},
		HealthProbeBindAddress: "0",
		Controller:             config.Controller{SkipNameValidation: ptr.To(true)},
		Cache:                  cache.Options{DefaultNamespaces: map[string]cache.Config{ns: {}}},
	})
	if err != nil {
		t.Fatal(err)
	}
	err = ctrl.NewControllerManagedBy(mgr).For(&corev1.ConfigMap{}).
		Complete(&greetingReconciler{Client: mgr.GetClient(), ignoreErrors: ignoreErrors})
	if err != nil {
		t.Fatal(err)
	}
	runUntilCleanup(t, "manager", mgr.Start)
}

// greetingEnv starts devplane with namespace ns and a client for the test.
func greetingEnv(t *testing.T, ns string) (*testenv.Instance, client.Client) {
	t.Helper()
	env, cs := faultEnv(t)
	makeNamespace(t, cs, ns)
	c, err := client.New(quiet(env.Config()), client.Options{})
	if err != nil {
		t.Fatal(err)
	}
	return env, c
}

func createNamed(t *testing.T, c client.Client, ns, name, value string) {
	t.Helper()
	cm := &corev1.ConfigMap{
		ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: ns, Labels: map[string]string{"example": "greeting"}},
		Data:       map[string]string{"name": value},
	}
	if err := c.Create(t.Context(), cm); err != nil {
		t.Fatal(err)
	}
}

// greeted reports whether the ConfigMap's greeting matches its name.
func greeted(t *testing.T, c client.Client, ns, name string) (bool, error) {
	cm := &corev1.ConfigMap{}
	if err := c.Get(t.Context(), types.NamespacedName{Namespace: ns, Name: name}, cm); err != nil {
		return false, err
	}
	return cm.Data["greeting"] == greetingFor(cm), nil
}

// everyThirdUpdateConflicts refuses every third update greeter makes.
func everyThirdUpdateConflicts(t *testing.T, env *testenv.Instance) *testenv.InjectedFault {
	return env.InjectFault(t, testenv.Fault{
		Name:      "every-third-update-conflicts",
		Users:     []string{greeter},
		Verbs:     []string{"update"},
		Resources: []string{"configmaps"},
		Error:     409,
		Every:     3,
	})
}

func TestExampleReconcilerRetriesConflictsAndRelistsAfterGone(t *testing.T) {
	const ns = "greetings"
	env, c := greetingEnv(t, ns)
	conflicts := everyThirdUpdateConflicts(t, env)
	// The reconciler's first watch ends with 410 after one event: its
	// informer must list again and watch from there.
	gone := env.InjectFault(t, testenv.Fault{
		Name:      "first-watch-gone",
		Users:     []string{greeter},
		Resources: []string{"configmaps"},
		Watch:     &testenv.WatchEnd{AfterEvents: 1, Gone: true},
		Times:     1,
	})
	startGreeter(t, env, ns, false)

	for _, name := range []string{"ann", "bob", "cy"} {
		createNamed(t, c, ns, name, name)
		eventually(t, name+" greeted", func() (bool, error) { return greeted(t, c, ns, name) })
	}
	if len(conflicts.Hits()) == 0 {
		t.Fatal("no update was refused: the test proves nothing")
	}
	if len(gone.Hits()) != 1 {
		t.Fatalf("the watch was ended %d times, want once", len(gone.Hits()))
	}
	// Changes after the relist reach the reconciler too.
	cm := &corev1.ConfigMap{}
	if err := c.Get(t.Context(), types.NamespacedName{Namespace: ns, Name: "ann"}, cm); err != nil {
		t.Fatal(err)
	}
	cm.Data["name"] = "Ann"
	if err := c.Update(t.Context(), cm); err != nil {
		t.Fatal(err)
	}
	createNamed(t, c, ns, "dee", "dee")
	for _, name := range []string{"ann", "dee"} {
		eventually(t, name+" greeted after the relist", func() (bool, error) { return greeted(t, c, ns, name) })
	}
}

func TestExampleReconcilerIgnoringUpdateErrorsLeavesObjectWrong(t *testing.T) {
	const ns = "careless"
	env, c := greetingEnv(t, ns)
	conflicts := everyThirdUpdateConflicts(t, env)
	startGreeter(t, env, ns, true)

	// Its first two updates go through; the third is refused and dropped.
	for _, name := range []string{"ann", "bob"} {
		createNamed(t, c, ns, name, name)
		eventually(t, name+" greeted", func() (bool, error) { return greeted(t, c, ns, name) })
	}
	createNamed(t, c, ns, "cy", "cy")
	eventually(t, "cy's update refused", func() (bool, error) { return len(conflicts.Hits()) == 1, nil })
	// Nothing will requeue cy: it stays wrong.
	deadline := time.Now().Add(time.Second)
	for time.Now().Before(deadline) {
		if ok, err := greeted(t, c, ns, "cy"); ok || err != nil {
			t.Fatalf("cy greeted (%v) although its only update was refused", err)
		}
		time.Sleep(50 * time.Millisecond)
	}
}
