package rbac

import (
	"context"
	"errors"
	"log/slog"
	"time"

	rbacv1 "k8s.io/api/rbac/v1"
	"k8s.io/apimachinery/pkg/api/equality"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"

	"github.com/devplane/devplane/apiserver/authz"
	"github.com/devplane/devplane/apiserver/registry"
	"github.com/devplane/devplane/apiserver/request"
)

// RunAggregation keeps aggregated ClusterRoles (admin, edit, view and any
// user-defined ones) current, as kube's clusterrole-aggregation controller:
// it watches ClusterRoles and recomputes after every change.
func RunAggregation(ctx context.Context, store *registry.Store, logger *slog.Logger) {
	ctx = request.AsAPIServer(ctx)
	for ctx.Err() == nil {
		w, err := store.Watch(ctx, "", metav1.ListOptions{ResourceVersion: "0", AllowWatchBookmarks: false})
		if err != nil {
			logger.Warn("cluster role aggregation: watch failed", "err", err)
			sleepCtx(ctx, time.Second)
			continue
		}
		aggregate(ctx, store, logger)
	events:
		for {
			select {
			case <-ctx.Done():
				w.Stop()
				return
			case _, ok := <-w.ResultChan():
				if !ok {
					break events
				}
				// Coalesce bursts (the initial list, bulk edits).
				for drained := false; !drained; {
					select {
					case _, ok := <-w.ResultChan():
						if !ok {
							drained = true
						}
					case <-time.After(20 * time.Millisecond):
						drained = true
					}
				}
				aggregate(ctx, store, logger)
			}
		}
		w.Stop()
		sleepCtx(ctx, 100*time.Millisecond)
	}
}

func aggregate(ctx context.Context, store *registry.Store, logger *slog.Logger) {
	obj, err := store.List(ctx, "", metav1.ListOptions{ResourceVersion: "0"})
	if err != nil {
		return
	}
	items := obj.(*rbacv1.ClusterRoleList).Items
	roles := make([]*rbacv1.ClusterRole, len(items))
	for i := range items {
		roles[i] = &items[i]
	}
	for _, changed := range authz.AggregateClusterRoles(roles) {
		_, _, err := store.Update(ctx, "", changed.Name, "", func(_ context.Context, current runtime.Object) (runtime.Object, error) {
			out := current.DeepCopyObject().(*rbacv1.ClusterRole)
			if out.AggregationRule == nil || !equality.Semantic.DeepEqual(out.AggregationRule, changed.AggregationRule) {
				return nil, errors.New("aggregation rule changed meanwhile")
			}
			out.Rules = changed.Rules
			return out, nil
		}, metav1.UpdateOptions{})
		if err != nil && ctx.Err() == nil {
			logger.Info("cluster role aggregation: update failed", "clusterrole", changed.Name, "err", err)
		}
	}
}

func sleepCtx(ctx context.Context, d time.Duration) {
	select {
	case <-ctx.Done():
	case <-time.After(d):
	}
}
