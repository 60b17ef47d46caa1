package storage

import (
	"context"
	"errors"

	"go.etcd.io/etcd/api/v3/v3rpc/rpctypes"
	clientv3 "go.etcd.io/etcd/client/v3"
	"k8s.io/apimachinery/pkg/runtime"
)

// Version is one stored state of an object, read back from etcd's MVCC
// history (kept until compaction: StartCompactor's retention).
type Version struct {
	// Revision is the etcd revision of the write (the object's
	// resourceVersion then), or of the deletion.
	Revision int64
	// Object is the stored object at Revision, with its resourceVersion
	// set; nil for a deletion.
	Object runtime.Object
	// Created marks the first version of an incarnation of the key (the
	// write that created it).
	Created bool
	// Deleted marks the deletion of the object (Object is nil).
	Deleted bool
}

// Versioned reads an object's past versions. Store and Cacher implement it.
type Versioned interface {
	// Versions reads the versions of the object at key, newest first: the
	// object's now (if it exists), then, for each revision in deletedAt
	// (revisions that deleted key, newest first), the deletion and the
	// versions of the object it deleted; at most limit in all (0: no
	// limit). compacted reports that older versions of the oldest
	// incarnation read were compacted away (the oldest returned is not its
	// creation); truncated that limit stopped the walk.
	Versions(ctx context.Context, key string, deletedAt []int64, limit int) (versions []Version, compacted, truncated bool, err error)
}

var (
	_ Versioned = (*Store)(nil)
	_ Versioned = (*Cacher)(nil)
)

// Versions implements Versioned. Each version is one read of key at the
// revision before the one read last: etcd's index keeps every revision
// of a key, so this costs one small read per version, and nothing like a
// watch from an old revision (which scans every key's changes since).
func (s *Store) Versions(ctx context.Context, key string, deletedAt []int64, limit int) ([]Version, bool, bool, error) {
	w := versionWalk{s: s, ctx: ctx, key: key, limit: limit}
	oldest, err := w.incarnation(0)
	if err != nil {
		return nil, false, false, err
	}
	for _, rev := range deletedAt {
		if w.done() {
			break
		}
		if oldest != 0 && rev >= oldest {
			continue // a deletion within what was already read cannot be
		}
		resp, err := s.client.Get(ctx, key, clientv3.WithRev(rev-1))
		if err != nil {
			if errors.Is(err, rpctypes.ErrCompacted) {
				w.compacted = true
				break
			}
			return nil, false, false, s.etcdError(err, key)
		}
		if len(resp.Kvs) == 0 {
			continue // not a deletion of this key
		}
		w.add(Version{Revision: rev, Deleted: true})
		if oldest, err = w.incarnation(rev - 1); err != nil {
			return nil, false, false, err
		}
	}
	return w.versions, w.compacted, w.truncated, nil
}

// Versions implements Versioned (Store).
func (c *Cacher) Versions(ctx context.Context, key string, deletedAt []int64, limit int) ([]Version, bool, bool, error) {
	return c.store.Versions(ctx, key, deletedAt, limit)
}

type versionWalk struct {
	s                    *Store
	ctx                  context.Context
	key                  string
	limit                int
	versions             []Version
	compacted, truncated bool
}

func (w *versionWalk) done() bool { return w.compacted || w.truncated }

func (w *versionWalk) add(v Version) {
	w.versions = append(w.versions, v)
	if w.limit > 0 && len(w.versions) >= w.limit {
		w.truncated = true
	}
}

// incarnation reads the object live at rev (0: now) and its earlier
// versions back to its creation, and returns the revision that created
// it (0 when nothing was live at rev).
func (w *versionWalk) incarnation(rev int64) (int64, error) {
	var opts []clientv3.OpOption
	if rev > 0 {
		opts = append(opts, clientv3.WithRev(rev))
	}
	for !w.done() {
		resp, err := w.s.client.Get(w.ctx, w.key, opts...)
		if errors.Is(err, rpctypes.ErrCompacted) {
			w.compacted = true
			return 0, nil
		}
		if err != nil {
			return 0, w.s.etcdError(err, w.key)
		}
		if len(resp.Kvs) == 0 {
			return 0, nil
		}
		kv := resp.Kvs[0]
		obj := w.s.cfg.NewFunc()
		if err := w.s.decodeIntoZero(kv.Value, kv.ModRevision, nil, obj); err != nil {
			return 0, err
		}
		created := kv.ModRevision == kv.CreateRevision
		w.add(Version{Revision: kv.ModRevision, Object: obj, Created: created})
		if created {
			return kv.CreateRevision, nil
		}
		opts = []clientv3.OpOption{clientv3.WithRev(kv.ModRevision - 1)}
	}
	return 0, nil
}
