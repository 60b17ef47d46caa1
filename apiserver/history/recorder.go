// Package history keeps and serves object history: every stored version
// of an object, read from etcd's MVCC history (kept for the retention the
// compactor follows), with who wrote each, recorded here at write time
// from the request (etcd does not know the user).
package history

import (
	"bytes"
	"context"
	"slices"
	"sync"
	"time"
	"unique"

	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"

	"github.com/devplane/devplane/apiserver/registry"
	"github.com/devplane/devplane/apiserver/request"
)

// Writer is who made one stored write.
type Writer struct {
	Time time.Time
	User string
	// Verb is the request's (create, update, patch, delete,
	// deletecollection), or the store's operation for writes the server
	// made on its own.
	Verb        string
	Subresource string
	// FieldManager is the request's (its fieldManager, or the one derived
	// from its User-Agent, as managedFields name it), or for a write the
	// server made on its own, the managedFields entry it added or changed
	// ("" for a delete).
	FieldManager string
}

// record is a Writer as kept: strings interned (a few distinct users and
// managers write everything), 64 bytes with the key.
type record struct {
	rev, at                          int64
	user, verb, subresource, manager unique.Handle[string]
	// deleted is the key a deletion removed ("" for other writes): how
	// the history of a deleted object is found.
	deleted string
}

// Recorder keeps the writers of the last writes, by etcd revision: those
// within the retention, and at most a bound. It is the registries'
// registry.WriteRecorder.
type Recorder struct {
	retention time.Duration
	max       int
	now       func() time.Time

	mu      sync.Mutex
	records []record // by revision; the live ones from head on
	head    int
}

var _ registry.WriteRecorder = (*Recorder)(nil)

// DefaultMaxWriters bounds the writers kept: about 3 MiB of records.
const DefaultMaxWriters = 50_000

// NewRecorder keeps writers for retention, and at most max of them
// (DefaultMaxWriters when max <= 0).
func NewRecorder(retention time.Duration, max int) *Recorder {
	if max <= 0 {
		max = DefaultMaxWriters
	}
	return &Recorder{retention: retention, max: max, now: time.Now}
}

// RecordWrite implements registry.WriteRecorder.
func (r *Recorder) RecordWrite(ctx context.Context, w *registry.Write) {
	rec := record{rev: w.Revision, at: r.now().UnixNano()}
	verb, sub := w.Operation, w.Subresource
	manager, own := "", false
	// The request's verb and field manager when the write is the
	// request's own (not one it caused elsewhere, as quota admission's
	// status writes).
	if info, ok := request.RequestInfoFrom(ctx); ok && info.IsResourceRequest && info.Resource == w.Resource.Resource {
		verb, sub = info.Verb, info.Subresource
		manager, own = request.FieldManagerFrom(ctx)
	}
	if !own {
		manager, _ = ChangedManager(w.Old, w.New)
	}
	user := ""
	if u, ok := request.UserFrom(ctx); ok {
		user = u.Name
	}
	rec.user, rec.verb, rec.subresource = unique.Make(user), unique.Make(verb), unique.Make(sub)
	rec.manager = unique.Make(manager)
	if w.Operation == registry.WriteDelete {
		rec.deleted = w.Key
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	r.trim(rec.at)
	// Writes finish nearly in revision order: insert from the end.
	i := len(r.records)
	for i > r.head && r.records[i-1].rev > rec.rev {
		i--
	}
	r.records = slices.Insert(r.records, i, rec)
}

// trim forgets the writers past the retention or the bound.
func (r *Recorder) trim(now int64) {
	oldest := now - int64(r.retention)
	for r.head < len(r.records) && (r.records[r.head].at < oldest || len(r.records)-r.head >= r.max) {
		r.records[r.head] = record{}
		r.head++
	}
	// Move the live records down once the forgotten ones are half.
	if r.head > 0 && r.head >= len(r.records)/2 {
		n := copy(r.records, r.records[r.head:])
		clear(r.records[n:])
		r.records = r.records[:n]
		r.head = 0
	}
}

// Writer is who made the write of revision rev, if it is still kept.
func (r *Recorder) Writer(rev int64) (Writer, bool) {
	r.mu.Lock()
	defer r.mu.Unlock()
	live := r.records[r.head:]
	i, found := slices.BinarySearchFunc(live, rev, func(rec record, rev int64) int { return compareInt(rec.rev, rev) })
	if !found {
		return Writer{}, false
	}
	rec := live[i]
	return Writer{Time: time.Unix(0, rec.at), User: rec.user.Value(), Verb: rec.verb.Value(),
		Subresource: rec.subresource.Value(), FieldManager: rec.manager.Value()}, true
}

// Deletions are the revisions that deleted key, newest first.
func (r *Recorder) Deletions(key string) []int64 {
	r.mu.Lock()
	defer r.mu.Unlock()
	var revs []int64
	for i := len(r.records) - 1; i >= r.head; i-- {
		if r.records[i].deleted == key {
			revs = append(revs, r.records[i].rev)
		}
	}
	return revs
}

// Len is how many writers are kept.
func (r *Recorder) Len() int {
	r.mu.Lock()
	defer r.mu.Unlock()
	return len(r.records) - r.head
}

func compareInt(a, b int64) int {
	switch {
	case a < b:
		return -1
	case a > b:
		return 1
	}
	return 0
}

// ChangedManager is the field manager of the write that made cur from old
// (nil: a create): the managedFields entry cur added or changed, the
// latest of them when several did; "" when none did. at is that entry's
// time (kube keeps it to the second).
func ChangedManager(old, cur runtime.Object) (manager string, at time.Time) {
	if cur == nil {
		return "", time.Time{}
	}
	curAcc, err := meta.Accessor(cur)
	if err != nil {
		return "", time.Time{}
	}
	var before []metav1.ManagedFieldsEntry
	if old != nil {
		if oldAcc, err := meta.Accessor(old); err == nil {
			before = oldAcc.GetManagedFields()
		}
	}
	for _, e := range curAcc.GetManagedFields() {
		if unchanged(e, before) {
			continue
		}
		var t time.Time
		if e.Time != nil {
			t = e.Time.Time
		}
		if manager == "" || t.After(at) {
			manager, at = e.Manager, t
		}
	}
	return manager, at
}

// unchanged reports whether before has e as it is.
func unchanged(e metav1.ManagedFieldsEntry, before []metav1.ManagedFieldsEntry) bool {
	for _, b := range before {
		if b.Manager != e.Manager || b.Operation != e.Operation || b.Subresource != e.Subresource || b.APIVersion != e.APIVersion {
			continue
		}
		if !b.Time.Equal(e.Time) {
			return false
		}
		if (b.FieldsV1 == nil) != (e.FieldsV1 == nil) {
			return false
		}
		return b.FieldsV1 == nil || bytes.Equal(b.FieldsV1.Raw, e.FieldsV1.Raw)
	}
	return false
}
