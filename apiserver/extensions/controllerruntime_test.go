package extensions_test

import (
	"context"
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	clientgoscheme "k8s.io/client-go/kubernetes/scheme"
	"sigs.k8s.io/controller-runtime/pkg/client"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
)

// CronTab is the typed Go form of testdata/crontab-crd.yaml, as an operator
// would declare it.
type CronTab struct {
	metav1.TypeMeta   `json:",inline"`
	metav1.ObjectMeta `json:"metadata,omitempty"`
	Spec              CronTabSpec   `json:"spec"`
	Status            CronTabStatus `json:"status,omitempty"`
}

type CronTabSpec struct {
	CronSpec          string `json:"cronSpec"`
	Image             string `json:"image"`
	Replicas          *int64 `json:"replicas,omitempty"`
	MaxReplicas       *int64 `json:"maxReplicas,omitempty"`
	ConcurrencyPolicy string `json:"concurrencyPolicy,omitempty"`
}

type CronTabStatus struct {
	Replicas int64 `json:"replicas,omitempty"`
}

type CronTabList struct {
	metav1.TypeMeta `json:",inline"`
	metav1.ListMeta `json:"metadata,omitempty"`
	Items           []CronTab `json:"items"`
}

func (in *CronTab) DeepCopyInto(out *CronTab) {
	*out = *in
	out.TypeMeta = in.TypeMeta
	in.ObjectMeta.DeepCopyInto(&out.ObjectMeta)
	if in.Spec.Replicas != nil {
		v := *in.Spec.Replicas
		out.Spec.Replicas = &v
	}
	if in.Spec.MaxReplicas != nil {
		v := *in.Spec.MaxReplicas
		out.Spec.MaxReplicas = &v
	}
}

func (in *CronTab) DeepCopy() *CronTab {
	out := &CronTab{}
	in.DeepCopyInto(out)
	return out
}

func (in *CronTab) DeepCopyObject() runtime.Object { return in.DeepCopy() }

func (in *CronTabList) DeepCopyObject() runtime.Object {
	out := &CronTabList{TypeMeta: in.TypeMeta}
	in.ListMeta.DeepCopyInto(&out.ListMeta)
	if in.Items != nil {
		out.Items = make([]CronTab, len(in.Items))
		for i := range in.Items {
			in.Items[i].DeepCopyInto(&out.Items[i])
		}
	}
	return out
}

var cronTabGV = schema.GroupVersion{Group: "stable.example.com", Version: "v1"}

func TestControllerRuntimeTypedClient(t *testing.T) {
	d := start(t)
	ctx := context.Background()
	ext := d.apiext(t)
	if _, err := ext.ApiextensionsV1().CustomResourceDefinitions().Create(ctx, readCRD(t, "crontab-crd.yaml"), metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	waitEstablished(t, ext, "crontabs.stable.example.com")

	scheme := runtime.NewScheme()
	if err := clientgoscheme.AddToScheme(scheme); err != nil {
		t.Fatal(err)
	}
	scheme.AddKnownTypes(cronTabGV, &CronTab{}, &CronTabList{})
	metav1.AddToGroupVersion(scheme, cronTabGV)
	c, err := client.New(d.config, client.Options{Scheme: scheme})
	if err != nil {
		t.Fatal(err)
	}

	ct := &CronTab{ObjectMeta: metav1.ObjectMeta{Name: "typed", Namespace: "default", Labels: map[string]string{"app": "typed"}},
		Spec: CronTabSpec{CronSpec: "*/5 * * * *", Image: "busybox"}}
	if err := c.Create(ctx, ct); err != nil {
		t.Fatal(err)
	}
	// The response (with server defaults) is decoded into ct.
	if ct.Spec.ConcurrencyPolicy != "Allow" || ct.Spec.Replicas == nil || *ct.Spec.Replicas != 1 || ct.UID == "" {
		t.Errorf("created: %+v", ct)
	}
	got := &CronTab{}
	if err := c.Get(ctx, client.ObjectKey{Namespace: "default", Name: "typed"}, got); err != nil {
		t.Fatal(err)
	}
	if got.Spec.Image != "busybox" || got.ResourceVersion != ct.ResourceVersion {
		t.Errorf("get: %+v", got)
	}
	list := &CronTabList{}
	if err := c.List(ctx, list, client.InNamespace("default"), client.MatchingLabels{"app": "typed"}); err != nil {
		t.Fatal(err)
	}
	if len(list.Items) != 1 || list.Items[0].Name != "typed" {
		t.Errorf("list: %+v", list.Items)
	}

	three := int64(3)
	got.Spec.Replicas = &three
	if err := c.Update(ctx, got); err != nil {
		t.Fatal(err)
	}
	if got.Generation != 2 {
		t.Errorf("generation after update: %d", got.Generation)
	}
	// A stale update conflicts.
	stale := ct.DeepCopy()
	stale.Spec.Image = "stale"
	if err := c.Update(ctx, stale); !apierrors.IsConflict(err) {
		t.Errorf("stale update: %v", err)
	}

	base := got.DeepCopy()
	got.Spec.Image = "alpine"
	got.Labels["tier"] = "batch"
	if err := c.Patch(ctx, got, client.MergeFrom(base)); err != nil {
		t.Fatal(err)
	}
	if got.Spec.Image != "alpine" || *got.Spec.Replicas != 3 || got.Labels["tier"] != "batch" {
		t.Errorf("after merge patch: %+v", got)
	}
	// A patch past the CEL rule is refused with the rule's message.
	base = got.DeepCopy()
	eleven := int64(11)
	got.Spec.Replicas = &eleven
	if err := c.Patch(ctx, got, client.MergeFrom(base)); !apierrors.IsInvalid(err) {
		t.Errorf("patch past maxReplicas: %v", err)
	}
	got.Status.Replicas = 3
	if err := c.Status().Update(ctx, base); err != nil {
		t.Fatal(err)
	}

	if err := c.Delete(ctx, &CronTab{ObjectMeta: metav1.ObjectMeta{Name: "typed", Namespace: "default"}}); err != nil {
		t.Fatal(err)
	}
	if err := c.Get(ctx, client.ObjectKey{Namespace: "default", Name: "typed"}, &CronTab{}); !apierrors.IsNotFound(err) {
		t.Errorf("get after delete: %v", err)
	}
}

func TestDynamicClientApplyCustomResource(t *testing.T) {
	d := start(t)
	ctx := context.Background()
	ext := d.apiext(t)
	if _, err := ext.ApiextensionsV1().CustomResourceDefinitions().Create(ctx, readCRD(t, "crontab-crd.yaml"), metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	waitEstablished(t, ext, "crontabs.stable.example.com")
	c := d.dynamic(t).Resource(crontabs).Namespace("default")
	apply := func(manager string, spec map[string]any, force bool) (*unstructured.Unstructured, error) {
		u := &unstructured.Unstructured{Object: map[string]any{"apiVersion": "stable.example.com/v1", "kind": "CronTab",
			"metadata": map[string]any{"name": "applied"}, "spec": spec}}
		return c.Apply(ctx, "applied", u, metav1.ApplyOptions{FieldManager: manager, Force: force})
	}
	out, err := apply("alpha", map[string]any{"cronSpec": "* * * * *", "image": "nginx", "replicas": int64(2)}, false)
	if err != nil {
		t.Fatal(err)
	}
	if p, _, _ := unstructured.NestedString(out.Object, "spec", "concurrencyPolicy"); p != "Allow" {
		t.Errorf("applied object not defaulted: %v", out.Object["spec"])
	}
	if mf := out.GetManagedFields(); len(mf) != 1 || mf[0].Manager != "alpha" || mf[0].Operation != metav1.ManagedFieldsOperationApply {
		t.Errorf("managedFields after apply: %+v", mf)
	}
	// Another manager setting the same field conflicts, unless forced.
	if _, err := apply("beta", map[string]any{"cronSpec": "* * * * *", "image": "nginx", "replicas": int64(4)}, false); !apierrors.IsConflict(err) {
		t.Errorf("conflicting apply: %v", err)
	}
	out, err = apply("beta", map[string]any{"cronSpec": "* * * * *", "image": "nginx", "replicas": int64(4)}, true)
	if err != nil {
		t.Fatal(err)
	}
	if r, _, _ := unstructured.NestedInt64(out.Object, "spec", "replicas"); r != 4 {
		t.Errorf("forced apply: replicas %d", r)
	}
	// Re-applying the values beta now owns, without replicas, is no
	// conflict: both managers co-own what they agree on.
	out, err = apply("alpha", map[string]any{"cronSpec": "* * * * *", "image": "nginx"}, false)
	if err != nil {
		t.Fatal(err)
	}
	if r, _, _ := unstructured.NestedInt64(out.Object, "spec", "replicas"); r != 4 || len(out.GetManagedFields()) != 2 {
		t.Errorf("after alpha's second apply: replicas %d, managedFields %+v", r, out.GetManagedFields())
	}
	// Changing a co-owned field conflicts again.
	if _, err := apply("alpha", map[string]any{"cronSpec": "0 * * * *", "image": "nginx"}, false); !apierrors.IsConflict(err) {
		t.Errorf("changing a co-owned field: %v", err)
	}
}
