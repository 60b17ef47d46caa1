package patch

import (
	"encoding/json"
	"reflect"
	"testing"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	coordinationv1 "k8s.io/api/coordination/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/utils/ptr"

	"github.com/devplane/devplane/apiserver/builtin"
)

// viaChain records an update (live nil: a create) the way
// UpdateManagedFields does without shortcuts, on copies.
func viaChain(t *testing.T, f *FieldManager, live, obj runtime.Object, manager string) runtime.Object {
	t.Helper()
	m, err := f.forSubresource("")
	if err != nil {
		t.Fatal(err)
	}
	if live == nil {
		live = f.newEmpty()
	} else {
		live = live.DeepCopyObject()
	}
	out, err := m.Update(live, obj.DeepCopyObject(), manager)
	if err != nil {
		t.Fatal(err)
	}
	return out
}

// updatesAlike checks that manager's update of live to obj ends the same
// through the shortcut (or the chain after it declined) as through the
// chain, and through UpdateManagedFields: the same object, and the entry's
// time stamped in both or kept in both. It reports whether the shortcut
// took the update.
func updatesAlike(t *testing.T, what string, f *FieldManager, live, obj runtime.Object, manager string) bool {
	t.Helper()
	before := time.Now().UTC().Truncate(time.Second)
	want := viaChain(t, f, live, obj, manager)
	liveCopy, got := live.DeepCopyObject(), obj.DeepCopyObject()
	took := f.updateEntry(liveCopy, got, manager)
	if !reflect.DeepEqual(managedFieldsOf(t, liveCopy), managedFieldsOf(t, live)) {
		t.Errorf("%s: live's managedFields changed", what)
	}
	if !took {
		if !reflect.DeepEqual(managedFieldsOf(t, got), managedFieldsOf(t, obj)) {
			t.Errorf("%s: declined, but the object's managedFields changed", what)
		}
		got = viaChain(t, f, liveCopy, got, manager)
	}
	public, err := f.UpdateManagedFields(live.DeepCopyObject(), obj.DeepCopyObject(), manager, "")
	if err != nil {
		t.Fatal(err)
	}
	after := time.Now().UTC()
	liveEntries := managedFieldsOf(t, live)
	for name, o := range map[string]runtime.Object{"shortcut": got, "UpdateManagedFields": public} {
		sameUpdate(t, what+" ("+name+")", want, o, liveEntries, before, after)
	}
	return took
}

// sameUpdate fails on any difference between want and got but entry
// times, and where one's entry kept live's time and the other's did not.
func sameUpdate(t *testing.T, what string, want, got runtime.Object, liveEntries []metav1.ManagedFieldsEntry, from, to time.Time) {
	t.Helper()
	want, got = want.DeepCopyObject(), got.DeepCopyObject()
	kept := func(obj runtime.Object) []string {
		entries := managedFieldsOf(t, obj)
		var out []string
		for i := range entries {
			tm := entries[i].Time
			switch {
			case tm == nil:
				out = append(out, "none")
			case len(liveEntries) > i && liveEntries[i].Time != nil && tm.Equal(liveEntries[i].Time) && tm.Time.Before(from):
				out = append(out, "kept")
			case !tm.Time.Before(from) && !tm.Time.After(to):
				out = append(out, "stamped")
			default:
				out = append(out, "other: "+tm.String())
			}
			entries[i].Time = nil
		}
		if entries != nil {
			obj.(metav1.Object).SetManagedFields(entries)
		}
		return out
	}
	if w, g := kept(want), kept(got); !reflect.DeepEqual(w, g) {
		t.Errorf("%s: entry times %v, the chain's %v", what, g, w)
	}
	wantJSON, _ := json.Marshal(want)
	gotJSON, _ := json.Marshal(got)
	if string(wantJSON) != string(gotJSON) || !reflect.DeepEqual(want, got) {
		t.Errorf("%s: differs from the chain's\nchain:    %s\nshortcut: %s", what, wantJSON, gotJSON)
	}
}

// aged sets every entry's time an hour back, so that a stamp shows.
func aged(obj runtime.Object) runtime.Object {
	entries := obj.(metav1.Object).GetManagedFields()
	for i := range entries {
		entries[i].Time = &metav1.Time{Time: time.Now().Add(-time.Hour).UTC().Truncate(time.Second)}
	}
	return obj
}

func TestUpdateShortcutMatchesChain(t *testing.T) {
	f := BuiltinFieldManager(configMapGVK)
	created := aged(viaChain(t, f, nil, &corev1.ConfigMap{
		ObjectMeta: metav1.ObjectMeta{Name: "cfg", Namespace: "default", Labels: map[string]string{"app": "x"}, ResourceVersion: "5"},
		Data:       map[string]string{"a": "1", "b": "2"},
	}, "m")).(*corev1.ConfigMap)
	edit := func(mutate func(*corev1.ConfigMap)) *corev1.ConfigMap {
		c := created.DeepCopy()
		mutate(c)
		return c
	}
	for _, tc := range []struct {
		name     string
		obj      *corev1.ConfigMap
		manager  string
		shortcut bool
	}{
		{"a value changed", edit(func(c *corev1.ConfigMap) { c.Data["a"] = "changed" }), "m", true},
		{"nothing changed", edit(func(c *corev1.ConfigMap) {}), "m", true},
		{"a value changed, managedFields not sent", edit(func(c *corev1.ConfigMap) { c.Data["b"] = ""; c.ManagedFields = nil }), "m", true},
		{"a label changed", edit(func(c *corev1.ConfigMap) { c.Labels["app"] = "y" }), "m", true},
		{"only stripped fields changed", edit(func(c *corev1.ConfigMap) { c.ResourceVersion = "9"; c.Generation = 3; c.UID = "u" }), "m", true},
		{"a key added", edit(func(c *corev1.ConfigMap) { c.Data["c"] = "3" }), "m", true},
		{"a key removed", edit(func(c *corev1.ConfigMap) { delete(c.Data, "b") }), "m", true},
		{"a key added, one removed", edit(func(c *corev1.ConfigMap) { delete(c.Data, "a"); c.Data["c"] = "3" }), "m", true},
		{"a field added", edit(func(c *corev1.ConfigMap) { c.Immutable = ptr.To(false) }), "m", true},
		{"a map added", edit(func(c *corev1.ConfigMap) { c.Annotations = map[string]string{"note": "n"} }), "m", true},
		{"a map removed", edit(func(c *corev1.ConfigMap) { c.Labels = nil }), "m", true},
		{"a map emptied", edit(func(c *corev1.ConfigMap) { c.Labels = map[string]string{} }), "m", true},
		{"a stripped field added", edit(func(c *corev1.ConfigMap) { c.Generation = 2; c.Data["c"] = "3" }), "m", true},
		{"every field removed", edit(func(c *corev1.ConfigMap) { c.Labels = nil; c.Data = nil }), "m", false},
		{"a field added by another manager", edit(func(c *corev1.ConfigMap) { c.Data["c"] = "3" }), "other", false},
		{"another manager", edit(func(c *corev1.ConfigMap) { c.Data["a"] = "other" }), "other", false},
		{"managedFields edited", edit(func(c *corev1.ConfigMap) { c.ManagedFields[0].Manager = "renamed" }), "m", false},
		{"managedFields reset", edit(func(c *corev1.ConfigMap) { c.ManagedFields = []metav1.ManagedFieldsEntry{{}} }), "m", false},
	} {
		if took := updatesAlike(t, tc.name, f, created, tc.obj, tc.manager); took != tc.shortcut {
			t.Errorf("%s: shortcut took it %v, want %v", tc.name, took, tc.shortcut)
		}
	}
	// Two managers: the chain.
	shared := aged(viaChain(t, f, created, edit(func(c *corev1.ConfigMap) { c.Data["c"] = "3" }), "other"))
	changed := shared.DeepCopyObject().(*corev1.ConfigMap)
	changed.Data["a"] = "again"
	if updatesAlike(t, "two managers", f, shared, changed, "m") {
		t.Error("two managers: the shortcut took it")
	}
	// Unnamed managers are "unknown", in the entry and when matching it.
	unnamed := aged(viaChain(t, f, nil, &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "u"}, Data: map[string]string{"a": "1"}}, ""))
	again := unnamed.DeepCopyObject().(*corev1.ConfigMap)
	again.Data["a"] = "2"
	if !updatesAlike(t, "unnamed manager", f, unnamed, again, "") {
		t.Error("unnamed manager: the chain was used")
	}
}

// A field the empty object also has (a ControllerRevision's revision, not
// omitted when 0) set back to its empty value: the field leaves the
// objects' field set, so an entry that already lacked it (managedFields
// written so) must not pass for live's fields; the chain keeps it owned.
func TestUpdateShortcutFieldBackToEmpty(t *testing.T) {
	gvk := appsv1.SchemeGroupVersion.WithKind("ControllerRevision")
	f := BuiltinFieldManager(gvk)
	revision := func(n int64) *appsv1.ControllerRevision {
		return &appsv1.ControllerRevision{ObjectMeta: metav1.ObjectMeta{Name: "r", Namespace: "default",
			Labels: map[string]string{"app": "x"}}, Revision: n}
	}
	withoutRevision := viaChain(t, f, nil, revision(0), "m").(*appsv1.ControllerRevision)
	live := aged(viaChain(t, f, nil, revision(5), "m")).(*appsv1.ControllerRevision)
	if string(withoutRevision.ManagedFields[0].FieldsV1.Raw) == string(live.ManagedFields[0].FieldsV1.Raw) {
		t.Fatalf("revision 0 and 5 own the same fields: %s", live.ManagedFields[0].FieldsV1.Raw)
	}
	live.ManagedFields[0].FieldsV1 = withoutRevision.ManagedFields[0].FieldsV1
	if updatesAlike(t, "revision back to 0", f, live, revision(0), "m") {
		t.Error("the shortcut took an update whose live object has a field its entry lacks")
	}
}

// A Deployment: a scalar's change, and changes inside lists whose items
// SMD matches by key (containers, their env), all alike.
func TestUpdateShortcutDeployment(t *testing.T) {
	f := BuiltinFieldManager(deploymentGVK)
	d := testDeployment()
	kindDefaulter(deploymentGVK).Default(d)
	created := aged(viaChain(t, f, nil, d, "kubectl-create")).(*appsv1.Deployment)
	scaled := created.DeepCopy()
	scaled.Spec.Replicas = ptr.To(*scaled.Spec.Replicas + 2)
	if !updatesAlike(t, "replicas", f, created, scaled, "kubectl-create") {
		t.Error("replicas: the chain was used")
	}
	image := created.DeepCopy()
	image.Spec.Template.Spec.Containers[0].Image = "other:2"
	if !updatesAlike(t, "image", f, created, image, "kubectl-create") {
		t.Error("image: the chain was used")
	}
	env := created.DeepCopy()
	env.Spec.Template.Spec.Containers[0].Env = append(env.Spec.Template.Spec.Containers[0].Env, corev1.EnvVar{Name: "ADDED", Value: "1"})
	if !updatesAlike(t, "env added", f, created, env, "kubectl-create") {
		t.Error("env added: the chain was used")
	}
	sidecar := created.DeepCopy()
	sidecar.Spec.Template.Spec.Containers = append(sidecar.Spec.Template.Spec.Containers, corev1.Container{Name: "sidecar", Image: "s:1"})
	if !updatesAlike(t, "container added", f, created, sidecar, "kubectl-create") {
		t.Error("container added: the chain was used")
	}
	withSidecar := aged(viaChain(t, f, created, sidecar, "kubectl-create"))
	removed := created.DeepCopy()
	removed.ManagedFields = nil // as not sent: the shortcut keeps live's
	if !updatesAlike(t, "container removed", f, withSidecar, removed, "kubectl-create") {
		t.Error("container removed: the chain was used")
	}
}

// Every built-in kind, populated, created, then its labels changed: the
// same outcome whichever way it goes, and the shortcut takes some.
func TestUpdateShortcutEveryBuiltinKind(t *testing.T) {
	taken := 0
	for _, k := range builtin.Kinds() {
		gvk := k.GroupVersion.WithKind(k.Kind)
		populated := populatedObject(gvk)
		if populated == nil {
			continue
		}
		if _, ok := populated.(*unstructured.Unstructured); ok {
			continue
		}
		f := BuiltinFieldManager(gvk)
		populated.(metav1.Object).SetManagedFields(nil)
		m, err := f.forSubresource("")
		if err != nil {
			t.Fatal(err)
		}
		created, err := m.Update(f.newEmpty(), populated.DeepCopyObject(), "m")
		if err != nil {
			continue // populated objects some kinds cannot type: the create test covers them
		}
		aged(created)
		relabeled := created.DeepCopyObject()
		labels := map[string]string{}
		for key := range relabeled.(metav1.Object).GetLabels() {
			labels[key] = "relabeled"
		}
		relabeled.(metav1.Object).SetLabels(labels)
		if updatesAlike(t, k.Kind+" relabeled", f, created, relabeled, "m") {
			taken++
		}
		updatesAlike(t, k.Kind+" unchanged", f, created, created.DeepCopyObject(), "m")
		added := created.DeepCopyObject()
		added.(metav1.Object).SetLabels(map[string]string{"added": "1"})
		if updatesAlike(t, k.Kind+" labels replaced", f, created, added, "m") {
			taken++
		}
		emptied := created.DeepCopyObject()
		emptied.(metav1.Object).SetLabels(nil)
		emptied.(metav1.Object).SetAnnotations(nil)
		updatesAlike(t, k.Kind+" labels and annotations removed", f, created, emptied, "m")
		populatedAgain := created.DeepCopyObject()
		populatedAgain.(metav1.Object).SetManagedFields(nil)
		updatesAlike(t, k.Kind+" back to populated", f, aged(viaChain(t, f, created, emptied, "m")), populatedAgain, "m")
	}
	if taken == 0 {
		t.Error("no kind's update took the shortcut")
	}
	t.Logf("%d of %d kinds' updates took the shortcut", taken, 2*len(builtin.Kinds()))
}

// Updates that change only scalars set in both objects (a node Lease's
// renewal) are decided by one walk of the Go values, alike the chain;
// every other change of the same Lease is left to the typed path, alike too.
func TestUpdateShortcutScalarChanges(t *testing.T) {
	f := BuiltinFieldManager(coordinationv1.SchemeGroupVersion.WithKind("Lease"))
	renewed := metav1.NewMicroTime(time.Date(2026, 11, 27, 10, 0, 0, 0, time.UTC))
	created := aged(viaChain(t, f, nil, &coordinationv1.Lease{
		TypeMeta: metav1.TypeMeta{APIVersion: "coordination.k8s.io/v1", Kind: "Lease"},
		ObjectMeta: metav1.ObjectMeta{Name: "node-1", Namespace: "kube-node-lease", ResourceVersion: "7",
			OwnerReferences: []metav1.OwnerReference{{APIVersion: "v1", Kind: "Node", Name: "node-1", UID: "u-1"}}},
		Spec: coordinationv1.LeaseSpec{HolderIdentity: ptr.To("node-1"), LeaseDurationSeconds: ptr.To[int32](40), RenewTime: &renewed},
	}, "kubelet")).(*coordinationv1.Lease)
	edit := func(mutate func(*coordinationv1.Lease)) *coordinationv1.Lease {
		l := created.DeepCopy()
		mutate(l)
		return l
	}
	later := func(d time.Duration) *metav1.MicroTime { m := metav1.NewMicroTime(renewed.Add(d)); return &m }
	for _, tc := range []struct {
		name    string
		obj     *coordinationv1.Lease
		scalars bool // decided by the walk of Go values
	}{
		{"renewed", edit(func(l *coordinationv1.Lease) { l.Spec.RenewTime = later(10 * time.Second) }), true},
		{"renewed, managedFields not sent", edit(func(l *coordinationv1.Lease) { l.Spec.RenewTime = later(time.Second); l.ManagedFields = nil }), true},
		{"renewed within the same microsecond", edit(func(l *coordinationv1.Lease) { l.Spec.RenewTime = later(100 * time.Nanosecond) }), true},
		{"nothing changed", edit(func(l *coordinationv1.Lease) {}), true},
		{"holder and duration changed", edit(func(l *coordinationv1.Lease) {
			l.Spec.HolderIdentity, l.Spec.LeaseDurationSeconds = ptr.To("node-2"), ptr.To[int32](15)
		}), true},
		{"a field set", edit(func(l *coordinationv1.Lease) { l.Spec.AcquireTime = later(0) }), false},
		{"a field cleared", edit(func(l *coordinationv1.Lease) { l.Spec.LeaseDurationSeconds = nil }), false},
		{"a list item changed", edit(func(l *coordinationv1.Lease) { l.OwnerReferences[0].Name = "node-9" }), false},
		{"a label added", edit(func(l *coordinationv1.Lease) { l.Labels = map[string]string{"a": "b"} }), false},
		{"only a stripped field changed", edit(func(l *coordinationv1.Lease) { l.ResourceVersion = "8" }), false},
	} {
		live, obj := created.DeepCopy(), tc.obj.DeepCopy()
		live.ManagedFields, obj.ManagedFields = nil, nil
		if _, ok := f.scalarsChangedWithin(created.ManagedFields[0].FieldsV1.Raw, live, obj); ok != tc.scalars {
			t.Errorf("%s: decided by the walk %v, want %v", tc.name, ok, tc.scalars)
		}
		if !updatesAlike(t, tc.name, f, created, tc.obj, "kubelet") && tc.scalars {
			t.Errorf("%s: the shortcut declined", tc.name)
		}
	}
	// A changed scalar the manager's set lacks is not the walk's to decide.
	withoutHolder := created.DeepCopy()
	withoutHolder.Spec.HolderIdentity, withoutHolder.ManagedFields = nil, nil
	lacking := viaChain(t, f, nil, withoutHolder, "kubelet").(*coordinationv1.Lease).ManagedFields[0].FieldsV1.Raw
	live, obj := created.DeepCopy(), edit(func(l *coordinationv1.Lease) { l.Spec.HolderIdentity = ptr.To("node-2") })
	live.ManagedFields, obj.ManagedFields = nil, nil
	if _, ok := f.scalarsChangedWithin(lacking, live, obj); ok {
		t.Error("a change outside the manager's set was decided by the walk")
	}
}

// BenchmarkRenewLeaseManagedFields measures the managedFields of a node
// Lease's renewal, a hundred a second for a thousand simulated nodes.
func BenchmarkRenewLeaseManagedFields(b *testing.B) {
	f := BuiltinFieldManager(coordinationv1.SchemeGroupVersion.WithKind("Lease"))
	now := metav1.NowMicro()
	live, err := f.UpdateManagedFields(nil, &coordinationv1.Lease{
		TypeMeta:   metav1.TypeMeta{APIVersion: "coordination.k8s.io/v1", Kind: "Lease"},
		ObjectMeta: metav1.ObjectMeta{Name: "node-1", Namespace: "kube-node-lease"},
		Spec: coordinationv1.LeaseSpec{HolderIdentity: ptr.To("node-1"), LeaseDurationSeconds: ptr.To[int32](40),
			RenewTime: &now},
	}, "kubelet", "")
	if err != nil {
		b.Fatal(err)
	}
	b.ReportAllocs()
	for i := 0; b.Loop(); i++ {
		renewed := live.DeepCopyObject().(*coordinationv1.Lease)
		later := metav1.NewMicroTime(now.Add(time.Duration(i+1) * 10 * time.Second))
		renewed.Spec.RenewTime = &later
		if _, err := f.UpdateManagedFields(live.DeepCopyObject(), renewed, "kubelet", ""); err != nil {
			b.Fatal(err)
		}
	}
	b.ReportMetric(float64(b.Elapsed().Nanoseconds())/1000/float64(b.N), "µs/op")
}
