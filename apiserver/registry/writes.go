package registry

import (
	"context"
	"strconv"

	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/devplane/devplane/apiserver/storage"
)

// WriteRecorder learns of every write the stores make to etcd, in the
// context of the request that made it: etcd keeps each version of an
// object, but not who wrote it (object history, apiserver/history).
type WriteRecorder interface {
	RecordWrite(ctx context.Context, w *Write)
}

// The store operations a Write reports.
const (
	WriteCreate = "create"
	WriteUpdate = "update"
	WriteDelete = "delete"
)

// Write is one write a store made.
type Write struct {
	Resource schema.GroupResource
	// Key is the object's etcd key.
	Key string
	// Revision is the etcd revision the write made (the stored object's
	// resourceVersion; a deletion's own revision).
	Revision int64
	// Operation is WriteCreate, WriteUpdate or WriteDelete; the request's
	// verb may say more (patch, a delete that only marked the object).
	Operation string
	// Subresource is the one the store wrote through ("status", "scale",
	// "binding"...; "" for the object itself).
	Subresource string
	// Old is the object before the write (nil for a create), New the one
	// stored (nil for a delete). Both are read-only.
	Old, New runtime.Object
}

// writeRecorderHolder boxes a WriteRecorder for the atomic pointer.
type writeRecorderHolder struct{ rec WriteRecorder }

// SetWriteRecorder makes every store of the registry, including resources
// added later, tell rec of their writes (nil: none).
func (r *Registry) SetWriteRecorder(rec WriteRecorder) {
	if rec == nil {
		r.writes.Store(nil)
		return
	}
	r.writes.Store(&writeRecorderHolder{rec: rec})
}

func (s *Store) writeRecorder() WriteRecorder {
	if s.registry == nil {
		return nil
	}
	if h := s.registry.writes.Load(); h != nil {
		return h.rec
	}
	return nil
}

// record tells rec of a write whose stored result is out.
func (s *Store) record(ctx context.Context, rec WriteRecorder, key, op, subresource string, old, out runtime.Object) {
	acc := metaOf(out)
	if acc == nil {
		return
	}
	rev, err := strconv.ParseInt(acc.GetResourceVersion(), 10, 64)
	if err != nil || rev == 0 {
		return
	}
	w := &Write{Resource: s.Resource, Key: key, Revision: rev, Operation: op, Subresource: subresource, Old: old, New: out}
	if op == WriteDelete {
		w.Old, w.New = out, nil
	}
	rec.RecordWrite(ctx, w)
}

// storageCreate is Storage.Create, recorded.
func (s *Store) storageCreate(ctx context.Context, key string, obj, out runtime.Object) error {
	if err := s.Storage.Create(ctx, key, obj, out, s.TTL); err != nil {
		return err
	}
	if rec := s.writeRecorder(); rec != nil {
		s.record(ctx, rec, key, WriteCreate, "", nil, out)
	}
	return nil
}

// storageUpdate is Storage.GuaranteedUpdate, recorded when it wrote: an
// update that changes nothing keeps the revision it started from.
func (s *Store) storageUpdate(ctx context.Context, key string, out runtime.Object, ignoreNotFound bool,
	pre *storage.Preconditions, subresource string, tryUpdate storage.UpdateFunc) error {
	rec := s.writeRecorder()
	if rec == nil {
		return s.Storage.GuaranteedUpdate(ctx, key, out, ignoreNotFound, pre, tryUpdate)
	}
	var last runtime.Object // what the write that won started from
	err := s.Storage.GuaranteedUpdate(ctx, key, out, ignoreNotFound, pre, func(current runtime.Object) (runtime.Object, error) {
		last = current
		return tryUpdate(current)
	})
	if err != nil || last == nil {
		return err
	}
	before := metaOf(last)
	if before == nil || before.GetResourceVersion() == metaOf(out).GetResourceVersion() {
		return nil // nothing written
	}
	if before.GetResourceVersion() == "" || before.GetResourceVersion() == "0" {
		s.record(ctx, rec, key, WriteCreate, subresource, nil, out) // created on update
		return nil
	}
	s.record(ctx, rec, key, WriteUpdate, subresource, last, out)
	return nil
}

// storageDelete is Storage.Delete, recorded.
func (s *Store) storageDelete(ctx context.Context, key string, out runtime.Object, pre *storage.Preconditions) error {
	if err := s.Storage.Delete(ctx, key, out, pre, nil); err != nil {
		return err
	}
	if rec := s.writeRecorder(); rec != nil {
		s.record(ctx, rec, key, WriteDelete, "", nil, out)
	}
	return nil
}
