package history

import (
	"context"
	"slices"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/devplane/devplane/apiserver/registry"
	"github.com/devplane/devplane/apiserver/request"
)

var configMaps = schema.GroupResource{Resource: "configmaps"}

// managed is a ConfigMap whose managedFields are entries of manager@second.
func managed(entries ...metav1.ManagedFieldsEntry) *corev1.ConfigMap {
	return &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "a", ManagedFields: entries}}
}

func entry(manager string, second int64, fields string) metav1.ManagedFieldsEntry {
	t := metav1.NewTime(time.Unix(second, 0))
	return metav1.ManagedFieldsEntry{Manager: manager, Operation: metav1.ManagedFieldsOperationUpdate, APIVersion: "v1",
		Time: &t, FieldsType: "FieldsV1", FieldsV1: &metav1.FieldsV1{Raw: []byte(fields)}}
}

func TestChangedManager(t *testing.T) {
	kubectl := entry("kubectl", 100, `{"f:data":{}}`)
	for _, c := range []struct {
		name     string
		old, cur runtime.Object
		want     string
		at       int64
	}{
		{"create", nil, managed(kubectl), "kubectl", 100},
		{"a new manager", managed(kubectl), managed(kubectl, entry("labeller", 200, `{"f:metadata":{}}`)), "labeller", 200},
		{"the same manager later", managed(kubectl), managed(entry("kubectl", 300, `{"f:data":{}}`)), "kubectl", 300},
		{"the same manager, other fields, same second", managed(kubectl), managed(entry("kubectl", 100, `{"f:data":{},"f:metadata":{}}`)), "kubectl", 100},
		{"no entry changed", managed(kubectl), managed(kubectl), "", 0},
		{"the latest of two", nil, managed(entry("a", 100, "{}"), entry("b", 150, "{}")), "b", 150},
		{"a delete", managed(kubectl), nil, "", 0},
	} {
		got, at := ChangedManager(c.old, c.cur)
		wantAt := time.Time{}
		if c.at != 0 {
			wantAt = time.Unix(c.at, 0)
		}
		if got != c.want || !at.Equal(wantAt) {
			t.Errorf("%s: %q at %v, want %q at %v", c.name, got, at, c.want, wantAt)
		}
	}
}

// write records a write of revision rev by user at now.
func write(r *Recorder, rev int64, user, op, key string) {
	ctx := request.WithUser(context.Background(), &request.User{Name: user})
	ctx = request.WithRequestInfo(ctx, &request.RequestInfo{IsResourceRequest: true, Verb: "patch", Resource: "configmaps"})
	obj := managed(entry(user+"-manager", rev, "{}"))
	w := &registry.Write{Resource: configMaps, Key: key, Revision: rev, Operation: op, New: obj}
	if op == registry.WriteDelete {
		w.Old, w.New = obj, nil
	}
	r.RecordWrite(ctx, w)
}

func TestRecorderKeepsTheRetentionAndTheBound(t *testing.T) {
	now := time.Unix(1000, 0)
	r := NewRecorder(time.Minute, 100)
	r.now = func() time.Time { return now }

	write(r, 10, "alice", registry.WriteCreate, "/registry/configmaps/ns/a")
	write(r, 12, "bob", registry.WriteUpdate, "/registry/configmaps/ns/a")
	write(r, 11, "carol", registry.WriteUpdate, "/registry/configmaps/ns/b") // finished after 12
	w, ok := r.Writer(11)
	if !ok || w.User != "carol" || w.Verb != "patch" || w.FieldManager != "carol-manager" || !w.Time.Equal(now) {
		t.Fatalf("writer of 11: %+v %v", w, ok)
	}
	if _, ok := r.Writer(13); ok {
		t.Fatal("a writer for a revision never written")
	}
	write(r, 13, "dave", registry.WriteDelete, "/registry/configmaps/ns/a")
	write(r, 20, "erin", registry.WriteDelete, "/registry/configmaps/ns/a")
	write(r, 21, "erin", registry.WriteDelete, "/registry/configmaps/ns/b")
	if got := r.Deletions("/registry/configmaps/ns/a"); !slices.Equal(got, []int64{20, 13}) {
		t.Fatalf("deletions of a: %v, want [20 13]", got)
	}
	if w, _ := r.Writer(13); w.FieldManager != "" || w.Verb != "patch" {
		t.Errorf("a deletion's writer: %+v (no field manager)", w)
	}

	// A minute later, the first six are past the retention.
	now = now.Add(time.Minute + time.Second)
	write(r, 30, "frank", registry.WriteCreate, "/registry/configmaps/ns/c")
	if r.Len() != 1 {
		t.Fatalf("%d writers kept after the retention, want 1", r.Len())
	}
	if _, ok := r.Writer(10); ok {
		t.Error("writer of 10 kept past the retention")
	}
	// The bound keeps the newest 100.
	for rev := int64(31); rev < 331; rev++ {
		write(r, rev, "gina", registry.WriteUpdate, "/registry/configmaps/ns/c")
	}
	if r.Len() != 100 {
		t.Fatalf("%d writers kept, want the bound of 100", r.Len())
	}
	if _, ok := r.Writer(230); ok {
		t.Error("writer of 230 kept beyond the bound")
	}
	if w, ok := r.Writer(330); !ok || w.User != "gina" {
		t.Errorf("newest writer: %+v %v", w, ok)
	}
	if cap(r.records) > 400 {
		t.Errorf("records' capacity grew to %d for 100 kept", cap(r.records))
	}
}

// A write a request caused elsewhere (quota admission's status update)
// is the store's operation, not the request's verb.
func TestRecorderVerbOfAnotherResource(t *testing.T) {
	r := NewRecorder(time.Minute, 0)
	ctx := request.WithUser(context.Background(), &request.User{Name: "alice"})
	ctx = request.WithRequestInfo(ctx, &request.RequestInfo{IsResourceRequest: true, Verb: "create", Resource: "pods"})
	r.RecordWrite(ctx, &registry.Write{Resource: schema.GroupResource{Resource: "resourcequotas"}, Revision: 5,
		Operation: registry.WriteUpdate, Subresource: "status", New: managed()})
	if w, ok := r.Writer(5); !ok || w.Verb != "update" || w.Subresource != "status" || w.User != "alice" {
		t.Errorf("writer: %+v %v", w, ok)
	}
}

// A request's own write is its field manager's, even where managedFields
// do not show it (a scale, a no-op on managedFields).
func TestRecorderTakesTheRequestsFieldManager(t *testing.T) {
	r := NewRecorder(time.Minute, 0)
	ctx := request.WithUser(context.Background(), &request.User{Name: "alice"})
	ctx = request.WithRequestInfo(ctx, &request.RequestInfo{IsResourceRequest: true, Verb: "patch", Resource: "deployments", Subresource: "scale"})
	ctx = request.WithFieldManager(ctx, "kubectl")
	old := managed(entry("kubectl-create", 100, "{}"))
	r.RecordWrite(ctx, &registry.Write{Resource: schema.GroupResource{Group: "apps", Resource: "deployments"}, Revision: 7,
		Operation: registry.WriteUpdate, Subresource: "scale", Old: old, New: old})
	if w, ok := r.Writer(7); !ok || w.FieldManager != "kubectl" || w.Verb != "patch" || w.Subresource != "scale" {
		t.Errorf("writer: %+v %v", w, ok)
	}
}

// BenchmarkRecordWrite is what recording one write costs the write path
// (a create's request takes some hundreds of microseconds).
func BenchmarkRecordWrite(b *testing.B) {
	r := NewRecorder(time.Hour, 0)
	ctx := request.WithUser(context.Background(), &request.User{Name: "devplane-admin"})
	ctx = request.WithRequestInfo(ctx, &request.RequestInfo{IsResourceRequest: true, Verb: "create", Resource: "configmaps"})
	ctx = request.WithFieldManager(ctx, "kubectl-create")
	obj := managed(entry("kubectl-create", 100, "{}"))
	b.ReportAllocs()
	rev := int64(0)
	for b.Loop() {
		rev++
		r.RecordWrite(ctx, &registry.Write{Resource: configMaps, Key: "/registry/configmaps/default/a", Revision: rev,
			Operation: registry.WriteCreate, New: obj})
	}
}
