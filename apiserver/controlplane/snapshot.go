package controlplane

import (
	"context"
	"fmt"
	"net/http"
	"slices"
	"time"

	"github.com/devplane/devplane/apiserver/snapshot"
	"github.com/devplane/devplane/apiserver/storage"
)

// installSnapshots serves snapshot.Path (cluster admins only, as every
// non-resource URL that RBAC's bootstrap roles do not name).
func (cp *ControlPlane) installSnapshots() {
	h := snapshot.Handler(cp)
	cp.Aggregator.Handle(snapshot.Path, h)
	cp.Aggregator.HandleMethod(http.MethodPut, snapshot.Path, h)
}

// TakeSnapshot reads the whole API state at the current revision.
func (cp *ControlPlane) TakeSnapshot(ctx context.Context) (*snapshot.Snapshot, error) {
	return snapshot.Take(ctx, cp.Etcd.Client())
}

// RestoreSnapshot writes s back (see package snapshot for what clients
// see) and returns once the watch caches hold the restored state and the
// extensions server serves the restored CRDs that are Established.
func (cp *ControlPlane) RestoreSnapshot(ctx context.Context, s *snapshot.Snapshot) (snapshot.Result, error) {
	res, err := snapshot.Restore(ctx, cp.Etcd.Client(), s)
	if err != nil {
		return res, err
	}
	if err := storage.WaitForRevision(ctx, cp.Etcd.Client(), snapshot.Prefix, res.Revision); err != nil {
		return res, fmt.Errorf("restored, but %w", err)
	}
	// A CRD the restore did not touch is served as it was.
	touched := func(key string) bool { _, found := slices.BinarySearch(res.Keys, key); return found }
	if err := cp.waitServed(ctx, s, touched); err != nil {
		return res, fmt.Errorf("restored, but %w", err)
	}
	return res, nil
}

// WaitCRDsServed waits until the extensions server serves what the
// Established CRDs in s serve (after a start on s).
func (cp *ControlPlane) WaitCRDsServed(ctx context.Context, s *snapshot.Snapshot) error {
	return cp.waitServed(ctx, s, func(string) bool { return true })
}

// waitServed waits for the resources of the CRDs in s whose key passes
// which. (A CRD s lacks is torn down by the same controller; its
// resources answer 404 once its watch cache has seen the delete.)
func (cp *ControlPlane) waitServed(ctx context.Context, s *snapshot.Snapshot, which func(key string) bool) error {
	if cp.ext == nil {
		return nil
	}
	pause := 100 * time.Microsecond
	for _, w := range s.ServedByCRDs() {
		if !which(w.Key) {
			continue
		}
		for {
			if _, ok := cp.ext.reg.Lookup(w.Group, w.Version, w.Resource); ok {
				break
			}
			select {
			case <-ctx.Done():
				return fmt.Errorf("%s.%s/%s is not served yet: %w", w.Resource, w.Group, w.Version, ctx.Err())
			case <-time.After(pause):
				pause = min(2*pause, 5*time.Millisecond)
			}
		}
	}
	return nil
}
