package controllers

import (
	"context"
	"sync"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/leaderelection"
	"k8s.io/client-go/tools/leaderelection/resourcelock"
)

// Leader election timings: kube-controller-manager's defaults. A leader
// stopping cleanly releases the lease, so a standby takes over within
// LeaderRetryPeriod; a crashed one is replaced after LeaderLeaseDuration.
var (
	LeaderLeaseDuration = 15 * time.Second
	LeaderRenewDeadline = 10 * time.Second
	LeaderRetryPeriod   = 2 * time.Second
)

// RunWithLeaderElection runs run while this replica (identity) holds the
// Lease lockName in kube-system, and campaigns again whenever leadership
// is lost, until ctx ends. run's context ends when leadership is lost;
// RunWithLeaderElection returns only after run has returned.
func RunWithLeaderElection(ctx context.Context, cfg *rest.Config, identity, lockName string, run func(ctx context.Context)) error {
	client, err := kubernetes.NewForConfig(configFor(cfg, "leader-election"))
	if err != nil {
		return err
	}
	lock := &resourcelock.LeaseLock{
		LeaseMeta:  metav1.ObjectMeta{Namespace: metav1.NamespaceSystem, Name: lockName},
		Client:     client.CoordinationV1(),
		LockConfig: resourcelock.ResourceLockConfig{Identity: identity},
	}
	for ctx.Err() == nil {
		// OnStartedLeading runs in a goroutine client-go does not wait for:
		// term tracks it so run never outlives the term or this function.
		var term leaderTerm
		elector, err := leaderelection.NewLeaderElector(leaderelection.LeaderElectionConfig{
			Lock:          lock,
			LeaseDuration: LeaderLeaseDuration,
			RenewDeadline: LeaderRenewDeadline,
			RetryPeriod:   LeaderRetryPeriod,
			// Released below, only once run has returned: client-go's
			// ReleaseOnCancel would let a successor start meanwhile.
			ReleaseOnCancel: false,
			Name:            lockName,
			Callbacks: leaderelection.LeaderCallbacks{
				OnStartedLeading: func(ctx context.Context) {
					if term.begin() {
						defer term.wg.Done()
						run(ctx)
					}
				},
				OnStoppedLeading: func() {},
			},
		})
		if err != nil {
			return err
		}
		elector.Run(ctx)
		term.end()
	}
	release(lock, identity)
	return nil
}

// release gives the lease up if this replica holds it, so a standby takes
// over within a retry period instead of a lease duration.
func release(lock *resourcelock.LeaseLock, identity string) {
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	record, _, err := lock.Get(ctx)
	if err != nil || record.HolderIdentity != identity {
		return
	}
	now := metav1.Now()
	_ = lock.Update(ctx, resourcelock.LeaderElectionRecord{
		LeaderTransitions:    record.LeaderTransitions,
		LeaseDurationSeconds: 1,
		RenewTime:            now,
		AcquireTime:          now,
	})
}

// leaderTerm lets the leading callback start only while the elector runs.
type leaderTerm struct {
	mu    sync.Mutex
	ended bool
	wg    sync.WaitGroup
}

func (t *leaderTerm) begin() bool {
	t.mu.Lock()
	defer t.mu.Unlock()
	if t.ended {
		return false // the term ended before the callback got to run
	}
	t.wg.Add(1)
	return true
}

// end stops new callbacks and waits for a running one.
func (t *leaderTerm) end() {
	t.mu.Lock()
	t.ended = true
	t.mu.Unlock()
	t.wg.Wait()
}
