package testenv_test

// Example suite: a controller-runtime reconciler tested against an
// in-process devplane. Each Widget gets a ConfigMap it owns; deleting the
// Widget lets the garbage collector delete the ConfigMap.

import (
	"context"
	"testing"
	"time"

	"github.com/go-logr/logr"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/utils/ptr"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/config"
	"sigs.k8s.io/controller-runtime/pkg/controller/controllerutil"
	metricsserver "sigs.k8s.io/controller-runtime/pkg/metrics/server"

	"github.com/devplane/devplane/apiserver/testenv"
)

// controller-runtime warns loudly when no logger is set.
func init() { ctrl.SetLogger(logr.Discard()) }

func newWidgetObject() *unstructured.Unstructured {
	w := &unstructured.Unstructured{}
	w.SetGroupVersionKind(widgetGVR.GroupVersion().WithKind("Widget"))
	return w
}

// widgetReconciler keeps <widget>-config holding the Widget's message.
type widgetReconciler struct {
	client.Client
	scheme *runtime.Scheme
}

func (r *widgetReconciler) Reconcile(ctx context.Context, req ctrl.Request) (ctrl.Result, error) {
	w := newWidgetObject()
	if err := r.Get(ctx, req.NamespacedName, w); err != nil {
		return ctrl.Result{}, client.IgnoreNotFound(err)
	}
	msg, _, _ := unstructured.NestedString(w.Object, "spec", "message")
	cm := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: w.GetName() + "-config", Namespace: w.GetNamespace()}}
	_, err := controllerutil.CreateOrUpdate(ctx, r.Client, cm, func() error {
		cm.Data = map[string]string{"message": msg}
		return controllerutil.SetControllerReference(w, cm, r.scheme)
	})
	return ctrl.Result{}, err
}

// startManager runs a manager with the reconciler until the test ends.
func startManager(t *testing.T, env *testenv.Instance) {
	t.Helper()
	mgr, err := ctrl.NewManager(env.Config(), ctrl.Options{
		Metrics:                metricsserver.Options{BindAddress: "0"}, // no fixed :8080
		HealthProbeBindAddress: "0",
		// Each test has its own manager with the same controller name.
		Controller: config.Controller{SkipNameValidation: ptr.To(true)},
	})
	if err != nil {
		t.Fatal(err)
	}
	err = ctrl.NewControllerManagedBy(mgr).
		For(newWidgetObject()).
		Owns(&corev1.ConfigMap{}).
		Complete(&widgetReconciler{Client: mgr.GetClient(), scheme: mgr.GetScheme()})
	if err != nil {
		t.Fatal(err)
	}
	// Registered after StartT's cleanup, so it runs before devplane stops.
	runUntilCleanup(t, "manager", mgr.Start)
}

// eventually polls cond every 20ms for up to 20s.
func eventually(t *testing.T, what string, cond func() (bool, error)) {
	t.Helper()
	deadline := time.Now().Add(20 * time.Second)
	var lastErr error
	for time.Now().Before(deadline) {
		ok, err := cond()
		if ok {
			return
		}
		lastErr = err
		time.Sleep(20 * time.Millisecond)
	}
	t.Fatalf("%s: not within 20s (last error: %v)", what, lastErr)
}

func TestExampleReconcilerOwnsConfigMap(t *testing.T) {
	// Skips, naming the missing capability, while devplane serves no CRDs.
	env := testenv.StartT(t, testenv.Options{CRDDirectoryPaths: []string{exampleCRDs}})
	startManager(t, env)
	ctx := t.Context()
	c, err := client.New(env.Config(), client.Options{})
	if err != nil {
		t.Fatal(err)
	}

	w := newWidgetObject()
	w.SetName("hello")
	w.SetNamespace("default")
	_ = unstructured.SetNestedField(w.Object, "hi there", "spec", "message")
	if err := c.Create(ctx, w); err != nil {
		t.Fatal(err)
	}

	cm := &corev1.ConfigMap{}
	key := types.NamespacedName{Namespace: "default", Name: "hello-config"}
	eventually(t, "the reconciler creates hello-config", func() (bool, error) {
		err := c.Get(ctx, key, cm)
		return err == nil && cm.Data["message"] == "hi there", err
	})
	owner := metav1.GetControllerOf(cm)
	if owner == nil || owner.Kind != "Widget" || owner.UID != w.GetUID() {
		t.Fatalf("hello-config's controller = %+v, want the Widget %s", owner, w.GetUID())
	}

	_ = unstructured.SetNestedField(w.Object, "changed", "spec", "message")
	if err := c.Update(ctx, w); err != nil {
		t.Fatal(err)
	}
	eventually(t, "the reconciler updates hello-config", func() (bool, error) {
		err := c.Get(ctx, key, cm)
		return err == nil && cm.Data["message"] == "changed", err
	})

	// Background deletion: the garbage collector removes what the Widget owns.
	if err := c.Delete(ctx, w, client.PropagationPolicy(metav1.DeletePropagationBackground)); err != nil {
		t.Fatal(err)
	}
	eventually(t, "the garbage collector deletes hello-config after its owner (is devplane's GC running?)", func() (bool, error) {
		err := c.Get(ctx, key, &corev1.ConfigMap{})
		return apierrors.IsNotFound(err), err
	})
}
