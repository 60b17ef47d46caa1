package ipalloc

import (
	"context"
	"slices"
	"strconv"
	"testing"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

func newService(name string, serviceType corev1.ServiceType, ports ...corev1.ServicePort) *corev1.Service {
	if len(ports) == 0 {
		ports = []corev1.ServicePort{{Name: "http", Port: 80, Protocol: corev1.ProtocolTCP}}
	}
	return &corev1.Service{
		ObjectMeta: metav1.ObjectMeta{Namespace: "default", Name: name},
		Spec: corev1.ServiceSpec{
			Type:     serviceType,
			Selector: map[string]string{"app": name},
			Ports:    ports,
		},
	}
}

// allocatedCounts is how many IPs and node ports the test's ranges hold.
func allocatedCounts(t *testing.T, ctx context.Context, s *Services) (ips, ports int) {
	t.Helper()
	ipOwners, err := s.IPs.Allocated(ctx)
	if err != nil {
		t.Fatal(err)
	}
	portOwners, err := s.NodePorts.Allocated(ctx)
	if err != nil {
		t.Fatal(err)
	}
	return len(ipOwners), len(portOwners)
}

func mustCreate(t *testing.T, ctx context.Context, s *Services, svc *corev1.Service) {
	t.Helper()
	if _, err := s.OnCreate(ctx, svc); err != nil {
		t.Fatalf("OnCreate(%s): %v", svc.Name, err)
	}
}

func expectInvalid(t *testing.T, err error, message string) {
	t.Helper()
	if !apierrors.IsInvalid(err) || err.Error() != message {
		t.Fatalf("got %v\nwant 422 %q", err, message)
	}
}

func TestOnCreateClusterIP(t *testing.T) {
	ctx := testContext(t)
	s := newTestServices(t)
	svc := newService("web", corev1.ServiceTypeClusterIP)
	mustCreate(t, ctx, s, svc)

	spec := svc.Spec
	if !s.IPs.Contains(spec.ClusterIP) || !slices.Equal(spec.ClusterIPs, []string{spec.ClusterIP}) {
		t.Fatalf("clusterIP %q clusterIPs %v", spec.ClusterIP, spec.ClusterIPs)
	}
	if !slices.Equal(spec.IPFamilies, []corev1.IPFamily{corev1.IPv4Protocol}) ||
		spec.IPFamilyPolicy == nil || *spec.IPFamilyPolicy != corev1.IPFamilyPolicySingleStack {
		t.Fatalf("ipFamilies %v ipFamilyPolicy %v", spec.IPFamilies, spec.IPFamilyPolicy)
	}
	if spec.Ports[0].NodePort != 0 {
		t.Fatalf("ClusterIP service got nodePort %d", spec.Ports[0].NodePort)
	}
	owners, err := s.IPs.Allocated(ctx)
	if err != nil || owners[spec.ClusterIP] != "default/web" || len(owners) != 1 {
		t.Fatalf("allocations %v, %v", owners, err)
	}
}

func TestOnCreateHeadlessAndExternalNameAllocateNothing(t *testing.T) {
	ctx := testContext(t)
	s := newTestServices(t)

	headless := newService("headless", corev1.ServiceTypeClusterIP)
	headless.Spec.ClusterIP = corev1.ClusterIPNone
	mustCreate(t, ctx, s, headless)
	if !slices.Equal(headless.Spec.ClusterIPs, []string{"None"}) || *headless.Spec.IPFamilyPolicy != corev1.IPFamilyPolicySingleStack ||
		!slices.Equal(headless.Spec.IPFamilies, []corev1.IPFamily{corev1.IPv4Protocol}) {
		t.Fatalf("headless spec: clusterIPs %v policy %v families %v", headless.Spec.ClusterIPs, *headless.Spec.IPFamilyPolicy, headless.Spec.IPFamilies)
	}

	// kube defaults selectorless headless Services to dual-stack families.
	selectorless := newService("selectorless", corev1.ServiceTypeClusterIP)
	selectorless.Spec.ClusterIP, selectorless.Spec.Selector = corev1.ClusterIPNone, nil
	mustCreate(t, ctx, s, selectorless)
	if *selectorless.Spec.IPFamilyPolicy != corev1.IPFamilyPolicyRequireDualStack ||
		!slices.Equal(selectorless.Spec.IPFamilies, []corev1.IPFamily{corev1.IPv4Protocol, corev1.IPv6Protocol}) {
		t.Fatalf("selectorless headless: policy %v families %v", *selectorless.Spec.IPFamilyPolicy, selectorless.Spec.IPFamilies)
	}

	external := newService("external", corev1.ServiceTypeExternalName)
	external.Spec.ExternalName = "example.com"
	mustCreate(t, ctx, s, external)
	if external.Spec.ClusterIP != "" || external.Spec.ClusterIPs != nil || external.Spec.IPFamilyPolicy != nil {
		t.Fatalf("ExternalName got clusterIP %q clusterIPs %v", external.Spec.ClusterIP, external.Spec.ClusterIPs)
	}
	if ips, ports := allocatedCounts(t, ctx, s); ips != 0 || ports != 0 {
		t.Fatalf("allocated %d IPs and %d ports, want none", ips, ports)
	}
}

func TestOnCreateRequestedClusterIP(t *testing.T) {
	ctx := testContext(t)
	s := newTestServices(t)
	first := newService("dns", corev1.ServiceTypeClusterIP)
	first.Spec.ClusterIP = "10.0.0.5"
	mustCreate(t, ctx, s, first)
	if first.Spec.ClusterIP != "10.0.0.5" || !slices.Equal(first.Spec.ClusterIPs, []string{"10.0.0.5"}) {
		t.Fatalf("clusterIP %q clusterIPs %v", first.Spec.ClusterIP, first.Spec.ClusterIPs)
	}

	// apimachinery v0.37 prints slice values as JSON (older kube: []string{"…"}).
	cases := map[string]string{
		"10.0.0.5":   `Service "b" is invalid: spec.clusterIPs: Invalid value: ["10.0.0.5"]: failed to allocate IP 10.0.0.5: provided IP is already allocated`,
		"10.0.1.5":   `Service "b" is invalid: spec.clusterIPs: Invalid value: ["10.0.1.5"]: failed to allocate IP 10.0.1.5: provided IP is not in the valid range. The range of valid IPs is 10.0.0.0/24`,
		"10.0.0.300": `Service "b" is invalid: spec.clusterIPs: Invalid value: ["10.0.0.300"]: failed to allocate IP 10.0.0.300: provided IP is not in the valid range. The range of valid IPs is 10.0.0.0/24`,
	}
	for requested, message := range cases {
		svc := newService("b", corev1.ServiceTypeClusterIP)
		svc.Spec.ClusterIP = requested
		_, err := s.OnCreate(ctx, svc)
		expectInvalid(t, err, message)
	}

	dual := newService("dual", corev1.ServiceTypeClusterIP)
	requireDual := corev1.IPFamilyPolicyRequireDualStack
	dual.Spec.IPFamilyPolicy = &requireDual
	_, err := s.OnCreate(ctx, dual)
	expectInvalid(t, err, `Service "dual" is invalid: spec.ipFamilyPolicy: Invalid value: "RequireDualStack": this cluster is not configured for dual-stack services`)

	if ips, _ := allocatedCounts(t, ctx, s); ips != 1 {
		t.Fatalf("%d IPs allocated, want only 10.0.0.5", ips)
	}
}

func TestOnCreateNodePort(t *testing.T) {
	ctx := testContext(t)
	s := newTestServices(t)
	svc := newService("np", corev1.ServiceTypeNodePort,
		corev1.ServicePort{Name: "http", Port: 80, Protocol: corev1.ProtocolTCP, NodePort: 30080},
		corev1.ServicePort{Name: "dns-tcp", Port: 53, Protocol: corev1.ProtocolTCP},
		corev1.ServicePort{Name: "dns-udp", Port: 53, Protocol: corev1.ProtocolUDP},
		corev1.ServicePort{Name: "metrics", Port: 9090, Protocol: corev1.ProtocolTCP},
	)
	mustCreate(t, ctx, s, svc)
	ports := svc.Spec.Ports
	if ports[0].NodePort != 30080 {
		t.Fatalf("requested nodePort not honoured: %d", ports[0].NodePort)
	}
	for _, p := range ports {
		if !s.NodePorts.Contains(strconv.Itoa(int(p.NodePort))) {
			t.Fatalf("port %s got nodePort %d", p.Name, p.NodePort)
		}
	}
	if ports[1].NodePort != ports[2].NodePort || ports[1].NodePort == ports[3].NodePort {
		t.Fatalf("TCP and UDP 53 should share one node port, 9090 its own: %d %d %d", ports[1].NodePort, ports[2].NodePort, ports[3].NodePort)
	}
	if ips, nodePorts := allocatedCounts(t, ctx, s); ips != 1 || nodePorts != 3 {
		t.Fatalf("allocated %d IPs and %d node ports, want 1 and 3", ips, nodePorts)
	}

	// Failures return kube's field errors and leave nothing allocated.
	taken := newService("b", corev1.ServiceTypeNodePort, corev1.ServicePort{Port: 80, NodePort: 30080})
	_, err := s.OnCreate(ctx, taken)
	expectInvalid(t, err, `Service "b" is invalid: spec.ports[0].nodePort: Invalid value: 30080: provided port is already allocated`)
	outside := newService("b", corev1.ServiceTypeNodePort, corev1.ServicePort{Port: 80}, corev1.ServicePort{Port: 81, NodePort: 38080})
	_, err = s.OnCreate(ctx, outside)
	expectInvalid(t, err, `Service "b" is invalid: spec.ports[1].nodePort: Invalid value: 38080: provided port is not in the valid range. The range of valid ports is 30000-32767`)
	if ips, nodePorts := allocatedCounts(t, ctx, s); ips != 1 || nodePorts != 3 {
		t.Fatalf("after failed creates: %d IPs and %d node ports allocated, want 1 and 3", ips, nodePorts)
	}
}

func TestOnCreateLoadBalancer(t *testing.T) {
	ctx := testContext(t)
	s := newTestServices(t)
	lb := newService("lb", corev1.ServiceTypeLoadBalancer)
	lb.Spec.ExternalTrafficPolicy = corev1.ServiceExternalTrafficPolicyLocal
	mustCreate(t, ctx, s, lb)
	if lb.Spec.Ports[0].NodePort == 0 || lb.Spec.HealthCheckNodePort == 0 || lb.Spec.HealthCheckNodePort == lb.Spec.Ports[0].NodePort {
		t.Fatalf("nodePort %d healthCheckNodePort %d", lb.Spec.Ports[0].NodePort, lb.Spec.HealthCheckNodePort)
	}
	if has, err := s.NodePorts.Has(ctx, strconv.Itoa(int(lb.Spec.HealthCheckNodePort))); err != nil || !has {
		t.Fatalf("health check node port not allocated: %v %v", has, err)
	}

	requested := newService("lb2", corev1.ServiceTypeLoadBalancer)
	requested.Spec.ExternalTrafficPolicy = corev1.ServiceExternalTrafficPolicyLocal
	requested.Spec.HealthCheckNodePort = 31999
	mustCreate(t, ctx, s, requested)
	if requested.Spec.HealthCheckNodePort != 31999 {
		t.Fatalf("requested healthCheckNodePort not honoured: %d", requested.Spec.HealthCheckNodePort)
	}

	noNodePorts := newService("lb3", corev1.ServiceTypeLoadBalancer)
	noNodePorts.Spec.AllocateLoadBalancerNodePorts = new(false)
	mustCreate(t, ctx, s, noNodePorts)
	if noNodePorts.Spec.Ports[0].NodePort != 0 {
		t.Fatalf("allocateLoadBalancerNodePorts=false still got %d", noNodePorts.Spec.Ports[0].NodePort)
	}

	clash := newService("lb4", corev1.ServiceTypeLoadBalancer)
	clash.Spec.ExternalTrafficPolicy = corev1.ServiceExternalTrafficPolicyLocal
	clash.Spec.HealthCheckNodePort = 31999
	_, err := s.OnCreate(ctx, clash)
	if !apierrors.IsInternalError(err) {
		t.Fatalf("taken healthCheckNodePort = %v, want kube's internal error", err)
	}
	if ips, nodePorts := allocatedCounts(t, ctx, s); ips != 3 || nodePorts != 4 {
		t.Fatalf("allocated %d IPs and %d node ports, want 3 and 4", ips, nodePorts)
	}
}

func TestOnCreateRollbackFreesEverything(t *testing.T) {
	ctx := testContext(t)
	s := newTestServices(t)
	svc := newService("doomed", corev1.ServiceTypeLoadBalancer)
	svc.Spec.ExternalTrafficPolicy = corev1.ServiceExternalTrafficPolicyLocal
	requestCtx, cancelRequest := context.WithCancel(ctx)
	rollback, err := s.OnCreate(requestCtx, svc)
	if err != nil {
		t.Fatal(err)
	}
	if ips, ports := allocatedCounts(t, ctx, s); ips != 1 || ports != 2 {
		t.Fatalf("before rollback: %d IPs, %d ports", ips, ports)
	}
	// The request may be gone by the time persisting fails; rollback still works.
	cancelRequest()
	rollback()
	if ips, ports := allocatedCounts(t, ctx, s); ips != 0 || ports != 0 {
		t.Fatalf("after rollback: %d IPs, %d ports still allocated", ips, ports)
	}
}

func TestOnUpdate(t *testing.T) {
	ctx := testContext(t)
	s := newTestServices(t)
	old := newService("web", corev1.ServiceTypeClusterIP)
	mustCreate(t, ctx, s, old)
	ip := old.Spec.ClusterIP

	t.Run("replace without clusterIP keeps it", func(t *testing.T) {
		replaced := newService("web", corev1.ServiceTypeClusterIP)
		commit, _, err := s.OnUpdate(ctx, replaced, old)
		if err != nil {
			t.Fatal(err)
		}
		commit()
		if replaced.Spec.ClusterIP != ip || !slices.Equal(replaced.Spec.ClusterIPs, []string{ip}) {
			t.Fatalf("clusterIP %q clusterIPs %v, want %s kept", replaced.Spec.ClusterIP, replaced.Spec.ClusterIPs, ip)
		}
		if has, _ := s.IPs.Has(ctx, ip); !has {
			t.Fatalf("%s released by a no-op update", ip)
		}
	})

	t.Run("changing clusterIP is rejected", func(t *testing.T) {
		moved := old.DeepCopy()
		moved.Spec.ClusterIP, moved.Spec.ClusterIPs = "10.0.0.200", []string{"10.0.0.200"}
		_, _, err := s.OnUpdate(ctx, moved, old)
		expectInvalid(t, err, `Service "web" is invalid: spec.clusterIPs[0]: Invalid value: ["10.0.0.200"]: may not change once set`)
	})

	// ClusterIP -> NodePort allocates; NodePort -> ClusterIP frees on commit only.
	toNodePort := old.DeepCopy()
	toNodePort.Spec.Type = corev1.ServiceTypeNodePort
	commit, _, err := s.OnUpdate(ctx, toNodePort, old)
	if err != nil {
		t.Fatal(err)
	}
	commit()
	nodePort := strconv.Itoa(int(toNodePort.Spec.Ports[0].NodePort))
	if has, _ := s.NodePorts.Has(ctx, nodePort); !has || toNodePort.Spec.ClusterIP != ip {
		t.Fatalf("ClusterIP->NodePort: nodePort %s allocated=%v, clusterIP %s", nodePort, has, toNodePort.Spec.ClusterIP)
	}

	backToClusterIP := toNodePort.DeepCopy()
	backToClusterIP.Spec.Type = corev1.ServiceTypeClusterIP
	commit, _, err = s.OnUpdate(ctx, backToClusterIP, toNodePort)
	if err != nil {
		t.Fatal(err)
	}
	if backToClusterIP.Spec.Ports[0].NodePort != 0 {
		t.Fatalf("nodePort %d kept on a ClusterIP service", backToClusterIP.Spec.Ports[0].NodePort)
	}
	if has, _ := s.NodePorts.Has(ctx, nodePort); !has {
		t.Fatal("node port released before the update was committed")
	}
	commit()
	if has, _ := s.NodePorts.Has(ctx, nodePort); has {
		t.Fatal("node port still allocated after commit")
	}

	// A failed update frees what it allocated and keeps what old holds.
	failing := backToClusterIP.DeepCopy()
	failing.Spec.Type = corev1.ServiceTypeNodePort
	_, rollback, err := s.OnUpdate(ctx, failing, backToClusterIP)
	if err != nil {
		t.Fatal(err)
	}
	rollback()
	if ips, ports := allocatedCounts(t, ctx, s); ips != 1 || ports != 0 {
		t.Fatalf("after rollback: %d IPs %d ports, want 1 and 0", ips, ports)
	}

	// ClusterIP -> ExternalName releases the IP on commit; and back allocates one.
	toExternal := backToClusterIP.DeepCopy()
	toExternal.Spec.Type, toExternal.Spec.ExternalName = corev1.ServiceTypeExternalName, "example.com"
	commit, _, err = s.OnUpdate(ctx, toExternal, backToClusterIP)
	if err != nil {
		t.Fatal(err)
	}
	if toExternal.Spec.ClusterIP != "" || toExternal.Spec.ClusterIPs != nil || toExternal.Spec.IPFamilies != nil {
		t.Fatalf("ExternalName kept clusterIP %q %v families %v", toExternal.Spec.ClusterIP, toExternal.Spec.ClusterIPs, toExternal.Spec.IPFamilies)
	}
	if has, _ := s.IPs.Has(ctx, ip); !has {
		t.Fatal("IP released before commit")
	}
	commit()
	if has, _ := s.IPs.Has(ctx, ip); has {
		t.Fatal("IP still allocated after ClusterIP->ExternalName commit")
	}

	fromExternal := toExternal.DeepCopy()
	fromExternal.Spec.Type, fromExternal.Spec.ExternalName = corev1.ServiceTypeClusterIP, ""
	commit, _, err = s.OnUpdate(ctx, fromExternal, toExternal)
	if err != nil {
		t.Fatal(err)
	}
	commit()
	if has, _ := s.IPs.Has(ctx, fromExternal.Spec.ClusterIP); !has || !s.IPs.Contains(fromExternal.Spec.ClusterIP) {
		t.Fatalf("ExternalName->ClusterIP: clusterIP %q allocated=%v", fromExternal.Spec.ClusterIP, has)
	}
}

func TestOnDeleteFreesEverything(t *testing.T) {
	ctx := testContext(t)
	s := newTestServices(t)
	lb := newService("lb", corev1.ServiceTypeLoadBalancer,
		corev1.ServicePort{Name: "a", Port: 80}, corev1.ServicePort{Name: "b", Port: 443})
	lb.Spec.ExternalTrafficPolicy = corev1.ServiceExternalTrafficPolicyLocal
	mustCreate(t, ctx, s, lb)
	keep := newService("keep", corev1.ServiceTypeNodePort)
	mustCreate(t, ctx, s, keep)
	if ips, ports := allocatedCounts(t, ctx, s); ips != 2 || ports != 4 {
		t.Fatalf("before delete: %d IPs %d ports", ips, ports)
	}
	if err := s.OnDelete(ctx, lb); err != nil {
		t.Fatal(err)
	}
	if ips, ports := allocatedCounts(t, ctx, s); ips != 1 || ports != 1 {
		t.Fatalf("after delete: %d IPs %d ports, want only keep's 1 and 1", ips, ports)
	}
	// The freed IP can be requested again.
	again := newService("again", corev1.ServiceTypeClusterIP)
	again.Spec.ClusterIP = lb.Spec.ClusterIP
	mustCreate(t, ctx, s, again)
}

func TestRepair(t *testing.T) {
	ctx := testContext(t)
	s := newTestServices(t)
	live := newService("live", corev1.ServiceTypeNodePort)
	mustCreate(t, ctx, s, live)
	lost := newService("lost", corev1.ServiceTypeClusterIP)
	mustCreate(t, ctx, s, lost)
	// Simulate a crash after persisting "lost" without its allocation...
	if err := s.IPs.Release(ctx, lost.Spec.ClusterIP); err != nil {
		t.Fatal(err)
	}
	// ...and allocations whose Service was never persisted.
	leakedIP, err := s.IPs.AllocateNext(ctx, "default/never-persisted")
	if err != nil {
		t.Fatal(err)
	}
	if err := s.NodePorts.Allocate(ctx, "31111", "default/never-persisted"); err != nil {
		t.Fatal(err)
	}
	services := []*corev1.Service{live, lost}

	report, err := s.Repair(ctx, services)
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(report.Remarked, []string{lost.Spec.ClusterIP}) {
		t.Fatalf("Remarked = %v, want [%s]", report.Remarked, lost.Spec.ClusterIP)
	}
	if has, _ := s.IPs.Has(ctx, lost.Spec.ClusterIP); !has {
		t.Fatal("missing allocation not re-marked")
	}
	wantLeaks := []string{leakedIP, "31111"}
	slices.Sort(wantLeaks)
	for pass := 2; pass <= leakPassesBeforeRelease; pass++ {
		if !slices.Equal(report.PendingLeaks, wantLeaks) || len(report.Released) != 0 {
			t.Fatalf("pass %d: pending %v released %v, want pending %v", pass-1, report.PendingLeaks, report.Released, wantLeaks)
		}
		if report, err = s.Repair(ctx, services); err != nil {
			t.Fatal(err)
		}
	}
	if !slices.Equal(report.Released, wantLeaks) || len(report.PendingLeaks) != 0 || len(report.Remarked) != 0 {
		t.Fatalf("final pass: %+v, want released %v", report, wantLeaks)
	}
	if ips, ports := allocatedCounts(t, ctx, s); ips != 2 || ports != 1 {
		t.Fatalf("after repair: %d IPs %d ports, want 2 and 1", ips, ports)
	}

	// Two Services claiming one IP are reported, not silently accepted.
	clone := live.DeepCopy()
	clone.Name = "clone"
	report, err = s.Repair(ctx, append(services, clone))
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Contains(report.Conflicts, live.Spec.ClusterIP) {
		t.Fatalf("Conflicts = %v, want %s", report.Conflicts, live.Spec.ClusterIP)
	}
}

// A leak re-allocated between passes is a new allocation: its count restarts.
func TestRepairDoesNotReleaseAReallocatedItem(t *testing.T) {
	ctx := testContext(t)
	s := newTestServices(t)
	if err := s.IPs.Allocate(ctx, "10.0.0.50", "default/crashed"); err != nil {
		t.Fatal(err)
	}
	for range leakPassesBeforeRelease - 1 {
		if _, err := s.Repair(ctx, nil); err != nil {
			t.Fatal(err)
		}
	}
	// Freed and handed to an in-flight create just before the last pass.
	if err := s.IPs.Release(ctx, "10.0.0.50"); err != nil {
		t.Fatal(err)
	}
	if err := s.IPs.Allocate(ctx, "10.0.0.50", "default/in-flight"); err != nil {
		t.Fatal(err)
	}
	report, err := s.Repair(ctx, nil)
	if err != nil {
		t.Fatal(err)
	}
	if len(report.Released) != 0 || !slices.Equal(report.PendingLeaks, []string{"10.0.0.50"}) {
		t.Fatalf("report %+v: the in-flight allocation must not be released", report)
	}
}
