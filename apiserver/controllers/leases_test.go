package controllers_test

import (
	"context"
	"fmt"
	"net"
	"slices"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/devplane/devplane/apiserver/controllers"
	"github.com/devplane/devplane/apiserver/controlplane/controlplanetest"
	"github.com/devplane/devplane/apiserver/faults"

	coordinationv1 "k8s.io/api/coordination/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// endpointIPs returns the kubernetes Endpoints' and EndpointSlice's
// addresses, as "endpoints|slice" for comparison.
func endpointIPs(t *testing.T, s *testServer) (string, string) {
	t.Helper()
	ctx := context.Background()
	var epIPs, sliceIPs []string
	ep, err := s.client.CoreV1().Endpoints(metav1.NamespaceDefault).Get(ctx, controllers.KubernetesServiceName, metav1.GetOptions{})
	if err != nil {
		return err.Error(), ""
	}
	for _, subset := range ep.Subsets {
		for _, a := range subset.Addresses {
			epIPs = append(epIPs, a.IP)
		}
		if len(subset.Ports) != 1 || subset.Ports[0].Name != "https" {
			return fmt.Sprintf("bad ports %+v", subset.Ports), ""
		}
	}
	slice, err := s.client.DiscoveryV1().EndpointSlices(metav1.NamespaceDefault).Get(ctx, controllers.KubernetesServiceName, metav1.GetOptions{})
	if err != nil {
		return "", err.Error()
	}
	for _, e := range slice.Endpoints {
		sliceIPs = append(sliceIPs, e.Addresses...)
	}
	slices.Sort(epIPs)
	slices.Sort(sliceIPs)
	return fmt.Sprint(epIPs), fmt.Sprint(sliceIPs)
}

func waitForEndpoints(t *testing.T, s *testServer, timeout time.Duration, want ...string) {
	t.Helper()
	controlplanetest.Eventually(t, timeout, fmt.Sprintf("endpoints %v", want), func() (bool, string) {
		ep, slice := endpointIPs(t, s)
		return ep == fmt.Sprint(want) && slice == fmt.Sprint(want), "endpoints " + ep + ", slice " + slice
	})
}

func TestLeaseEndpointReconciler(t *testing.T) {
	s := startServer(t)
	ctx := context.Background()
	port := int32(s.cp.Port())
	a, err := controllers.NewLeaseEndpointReconciler(s.cfg, "replica-a", net.IPv4(127, 0, 0, 1), port, 3*time.Second, nil)
	if err != nil {
		t.Fatal(err)
	}
	b, err := controllers.NewLeaseEndpointReconciler(s.cfg, "replica-b", net.IPv4(127, 0, 0, 2), port, 3*time.Second, nil)
	if err != nil {
		t.Fatal(err)
	}
	run(t, a)
	bctx, stopB := context.WithCancel(ctx)
	bdone := make(chan error, 1)
	go func() { bdone <- b.Run(bctx) }()
	waitForEndpoints(t, s, 10*time.Second, "127.0.0.1", "127.0.0.2")

	lease, err := s.client.CoordinationV1().Leases(metav1.NamespaceSystem).Get(ctx, "replica-b", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if lease.Labels[controllers.APIServerIdentityLabel] != controllers.APIServerIdentityValue || lease.Spec.HolderIdentity == nil || *lease.Spec.HolderIdentity != "replica-b" || lease.Spec.RenewTime == nil {
		t.Errorf("replica lease: %+v", lease)
	}

	// A clean stop removes the replica at once.
	stopB()
	select {
	case err := <-bdone:
		if err != nil {
			t.Fatalf("replica b stopped with error: %v", err)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("replica b did not stop")
	}
	ep, slice := endpointIPs(t, s)
	if ep != "[127.0.0.1]" || slice != "[127.0.0.1]" {
		t.Errorf("after a clean stop: endpoints %s, slice %s", ep, slice)
	}

	// A replica that vanished without cleaning up leaves when its lease expires.
	seconds := int32(1)
	now := metav1.NewMicroTime(time.Now())
	holder := "crashed"
	_, err = s.client.CoordinationV1().Leases(metav1.NamespaceSystem).Create(ctx, &coordinationv1.Lease{
		ObjectMeta: metav1.ObjectMeta{Name: "crashed", Labels: map[string]string{controllers.APIServerIdentityLabel: controllers.APIServerIdentityValue},
			Annotations: map[string]string{controllers.AdvertiseAddressAnnotation: "127.0.0.3"}},
		Spec: coordinationv1.LeaseSpec{HolderIdentity: &holder, LeaseDurationSeconds: &seconds, RenewTime: &now},
	}, metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	waitForEndpoints(t, s, 10*time.Second, "127.0.0.1", "127.0.0.3")
	start := time.Now()
	waitForEndpoints(t, s, 10*time.Second, "127.0.0.1")
	t.Logf("expired replica dropped %s after it was seen", time.Since(start))
}

func TestRunWithLeaderElection(t *testing.T) {
	s := startServer(t)
	defer func(d, r, p time.Duration) {
		controllers.LeaderLeaseDuration, controllers.LeaderRenewDeadline, controllers.LeaderRetryPeriod = d, r, p
	}(controllers.LeaderLeaseDuration, controllers.LeaderRenewDeadline, controllers.LeaderRetryPeriod)
	controllers.LeaderLeaseDuration, controllers.LeaderRenewDeadline, controllers.LeaderRetryPeriod = 3*time.Second, 2*time.Second, 100*time.Millisecond

	running := map[string]*atomic.Bool{"one": {}, "two": {}} // whose run is running
	var concurrent atomic.Int32
	var overlap atomic.Bool
	type replica struct {
		cancel context.CancelFunc
		done   chan error
	}
	start := func(identity string) *replica {
		ctx, cancel := context.WithCancel(context.Background())
		r := &replica{cancel: cancel, done: make(chan error, 1)}
		go func() {
			r.done <- controllers.RunWithLeaderElection(ctx, s.cfg, identity, "test-lock", func(ctx context.Context) {
				if concurrent.Add(1) > 1 {
					overlap.Store(true)
				}
				running[identity].Store(true)
				<-ctx.Done()
				concurrent.Add(-1)
				running[identity].Store(false)
			})
		}()
		return r
	}
	stop := func(r *replica) {
		r.cancel()
		select {
		case err := <-r.done:
			if err != nil {
				t.Errorf("RunWithLeaderElection: %v", err)
			}
		case <-time.After(10 * time.Second):
			t.Fatal("RunWithLeaderElection did not return")
		}
	}
	current := func() string {
		for identity, r := range running {
			if r.Load() {
				return identity
			}
		}
		return ""
	}

	replicas := map[string]*replica{"one": start("one"), "two": start("two")}
	var once sync.Once
	t.Cleanup(func() {
		once.Do(func() {
			for _, r := range replicas {
				r.cancel()
			}
		})
	})
	controlplanetest.Eventually(t, 10*time.Second, "a leader", func() (bool, string) { return current() != "", "" })
	first := current()
	time.Sleep(500 * time.Millisecond) // the other must not start meanwhile
	if current() != first || overlap.Load() {
		t.Fatalf("leadership moved or overlapped without a reason: %q then %q", first, current())
	}

	stopped := time.Now()
	stop(replicas[first])
	if current() == first {
		t.Fatal("the stopped leader's run still going after controllers.RunWithLeaderElection returned")
	}
	controlplanetest.Eventually(t, 10*time.Second, "the other replica takes over", func() (bool, string) {
		return current() != "" && current() != first, current()
	})
	t.Logf("%s took over from %s after %s", current(), first, time.Since(stopped))
	if overlap.Load() {
		t.Error("two replicas ran at once")
	}
	for name, r := range replicas {
		if name != first {
			stop(r)
		}
	}
	if current() != "" {
		t.Errorf("no replica runs, yet %q is recorded as running", current())
	}
}

// A failed round is retried soon, not a period later: at start the
// kube-system namespace may not exist yet, and readiness waits for the
// replica's endpoint (a 5 s wait in about one start in 300 before).
func TestLeaseEndpointReconcilerRetriesAFailedRoundSoon(t *testing.T) {
	s := startServer(t)
	// The first lease write fails, as it does while kube-system is missing.
	if err := s.cp.Faults().Add(faults.Fault{Name: "no-namespace-yet", Verbs: []string{"create"},
		Resources: []string{"leases.coordination.k8s.io"}, Error: 503, Times: 1}); err != nil {
		t.Fatal(err)
	}
	// A period of 30 s: the retry must not wait for it.
	r, err := controllers.NewLeaseEndpointReconciler(s.cfg, "replica-a", net.IPv4(127, 0, 0, 1), int32(s.cp.Port()), 90*time.Second, nil)
	if err != nil {
		t.Fatal(err)
	}
	run(t, r)
	waitForEndpoints(t, s, 10*time.Second, "127.0.0.1")
	if hits := s.cp.Faults().Hits("no-namespace-yet"); len(hits) != 1 {
		t.Errorf("the fault hit %d lease creates, want the first", len(hits))
	}
}
