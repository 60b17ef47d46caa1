package controlplane

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"time"

	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"

	"github.com/devplane/devplane/apiserver/snapshot"
	"github.com/devplane/devplane/apiserver/storage"
)

// crdKeys is where CustomResourceDefinitions are stored.
const crdKeys = "/registry/apiextensions.k8s.io/customresourcedefinitions/"

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
// extensions server serves exactly the restored CRDs that are Established.
func (cp *ControlPlane) RestoreSnapshot(ctx context.Context, s *snapshot.Snapshot) (snapshot.Result, error) {
	res, err := snapshot.Restore(ctx, cp.Etcd.Client(), s)
	if err != nil {
		return res, err
	}
	if err := storage.WaitForRevision(ctx, cp.Etcd.Client(), snapshot.Prefix, res.Revision); err != nil {
		return res, fmt.Errorf("restored, but %w", err)
	}
	if err := cp.WaitCRDsServed(ctx, s); err != nil {
		return res, fmt.Errorf("restored, but %w", err)
	}
	return res, nil
}

// WaitCRDsServed waits until the extensions server has followed the CRDs
// in s: each Established one served in each of its served versions (after
// a restore, or a start on s).
// (A CRD s lacks is torn down by the same controller; its resources answer
// 404 once its watch cache has seen the delete.)
func (cp *ControlPlane) WaitCRDsServed(ctx context.Context, s *snapshot.Snapshot) error {
	if cp.ext == nil {
		return nil
	}
	type want struct{ group, version, resource string }
	var wants []want
	for _, kv := range s.Keys(crdKeys) {
		var crd apiextensionsv1.CustomResourceDefinition
		if err := json.Unmarshal(kv.Value, &crd); err != nil {
			continue // not served either way
		}
		if !crdEstablished(&crd) {
			continue
		}
		for _, v := range crd.Spec.Versions {
			if v.Served {
				wants = append(wants, want{crd.Spec.Group, v.Name, crd.Spec.Names.Plural})
			}
		}
	}
	pause := 100 * time.Microsecond
	for _, w := range wants {
		for {
			if _, ok := cp.ext.reg.Lookup(w.group, w.version, w.resource); ok {
				break
			}
			select {
			case <-ctx.Done():
				return fmt.Errorf("%s.%s/%s is not served yet: %w", w.resource, w.group, w.version, ctx.Err())
			case <-time.After(pause):
				pause = min(2*pause, 5*time.Millisecond)
			}
		}
	}
	return nil
}

func crdEstablished(crd *apiextensionsv1.CustomResourceDefinition) bool {
	for _, c := range crd.Status.Conditions {
		if c.Type == apiextensionsv1.Established && c.Status == apiextensionsv1.ConditionTrue {
			return true
		}
	}
	return false
}
