package ipalloc

import (
	"context"
	"errors"
	"fmt"
	"net"
	"strconv"
	"sync"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/util/validation/field"
)

// cleanupTimeout bounds releases done by rollback/commit callbacks, which
// must run even when the request context is already cancelled.
const cleanupTimeout = 30 * time.Second

// leakPassesBeforeRelease: like kube's repair loop, an allocation without a
// Service is released only after this many consecutive Repair passes saw it,
// so an in-flight create (allocated, not yet persisted) is never robbed.
const leakPassesBeforeRelease = 3

var serviceKind = schema.GroupKind{Kind: "Service"}

// Services applies kube's Service REST allocation semantics on create,
// update and delete. Zero value plus both ranges is ready to use.
type Services struct {
	IPs, NodePorts *Range

	mu sync.Mutex
	// leakSeen counts consecutive Repair passes per leaked allocation.
	leakSeen map[leakKey]int
}

type leakKey struct {
	rangePrefix    string
	item           string
	createRevision int64
}

// allocations collects what one call allocated, for rollback or commit.
type allocations struct {
	ips, ports []string
}

func (s *Services) release(ctx context.Context, a allocations) {
	ctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), cleanupTimeout)
	defer cancel()
	// Errors are left for Repair: it frees allocations no Service owns.
	for _, ip := range a.ips {
		_ = s.IPs.Release(ctx, ip)
	}
	for _, port := range a.ports {
		_ = s.NodePorts.Release(ctx, port)
	}
}

func ownerOf(svc *corev1.Service) string { return svc.Namespace + "/" + svc.Name }

// OnCreate allocates the cluster IP and node ports of a new Service and
// fills in the allocated values. Call rollback if persisting svc fails.
func (s *Services) OnCreate(ctx context.Context, svc *corev1.Service) (rollback func(), err error) {
	var allocated allocations
	defer func() {
		if err != nil {
			s.release(ctx, allocated)
		}
	}()
	if err := s.initIPFamilyFields(svc, nil); err != nil {
		return nil, err
	}
	if err := s.allocClusterIP(ctx, svc, &allocated); err != nil {
		return nil, err
	}
	if err := s.allocNodePorts(ctx, svc, nil, &allocated); err != nil {
		return nil, err
	}
	if needsHealthCheckNodePort(svc) {
		if err := s.allocHealthCheckNodePort(ctx, svc, &allocated); err != nil {
			return nil, err
		}
	}
	return func() { s.release(ctx, allocated) }, nil
}

// OnUpdate allocates what the new spec needs beyond old. Exactly one of
// commit (after the update is persisted: frees what old had and svc no
// longer uses) or rollback (update failed: frees what this call allocated)
// must be called.
func (s *Services) OnUpdate(ctx context.Context, svc, old *corev1.Service) (commit, rollback func(), err error) {
	var allocated allocations
	defer func() {
		if err != nil {
			s.release(ctx, allocated)
		}
	}()
	patchAllocatedValues(svc, old)
	dropTypeDependentFields(svc, old)
	if err := s.initIPFamilyFields(svc, old); err != nil {
		return nil, nil, err
	}
	if needsClusterIP(old) && needsClusterIP(svc) && len(old.Spec.ClusterIPs) > 0 && len(svc.Spec.ClusterIPs) > 0 &&
		svc.Spec.ClusterIPs[0] != old.Spec.ClusterIPs[0] {
		return nil, nil, apierrors.NewInvalid(serviceKind, svc.Name, field.ErrorList{
			field.Invalid(field.NewPath("spec", "clusterIPs").Index(0), svc.Spec.ClusterIPs, "may not change once set"),
		})
	}
	if needsClusterIP(svc) && !needsClusterIP(old) {
		if err := s.allocClusterIP(ctx, svc, &allocated); err != nil {
			return nil, nil, err
		}
	}
	if err := s.allocNodePorts(ctx, svc, old, &allocated); err != nil {
		return nil, nil, err
	}
	switch {
	case needsHealthCheckNodePort(svc) && !needsHealthCheckNodePort(old):
		if err := s.allocHealthCheckNodePort(ctx, svc, &allocated); err != nil {
			return nil, nil, err
		}
	case needsHealthCheckNodePort(svc) && svc.Spec.HealthCheckNodePort != old.Spec.HealthCheckNodePort:
		return nil, nil, apierrors.NewInvalid(serviceKind, svc.Name, field.ErrorList{
			field.Invalid(field.NewPath("spec", "healthCheckNodePort"), svc.Spec.HealthCheckNodePort, "field is immutable"),
		})
	}

	// Released only on commit, so a failed update keeps old's allocations.
	var unused allocations
	newIPs, newPorts := allocatedItems(svc)
	oldIPs, oldPorts := allocatedItems(old)
	for ip := range oldIPs {
		if !newIPs[ip] {
			unused.ips = append(unused.ips, ip)
		}
	}
	for port := range oldPorts {
		if !newPorts[port] {
			unused.ports = append(unused.ports, port)
		}
	}
	return func() { s.release(ctx, unused) }, func() { s.release(ctx, allocated) }, nil
}

// OnDelete frees the cluster IPs and node ports of a deleted Service; call
// it after the delete is persisted.
func (s *Services) OnDelete(ctx context.Context, svc *corev1.Service) error {
	ips, ports := allocatedItems(svc)
	var errs []error
	for ip := range ips {
		errs = append(errs, s.IPs.Release(ctx, ip))
	}
	for port := range ports {
		errs = append(errs, s.NodePorts.Release(ctx, port))
	}
	return errors.Join(errs...)
}

// allocatedItems is the set of cluster IPs and node ports (including the
// health check port) that svc holds.
func allocatedItems(svc *corev1.Service) (ips, ports map[string]bool) {
	ips, ports = map[string]bool{}, map[string]bool{}
	if svc.Spec.Type != corev1.ServiceTypeExternalName {
		for _, ip := range svc.Spec.ClusterIPs {
			if parsed := net.ParseIP(ip); parsed != nil {
				ips[parsed.String()] = true
			}
		}
		if len(svc.Spec.ClusterIPs) == 0 {
			if parsed := net.ParseIP(svc.Spec.ClusterIP); parsed != nil {
				ips[parsed.String()] = true
			}
		}
	}
	for _, p := range svc.Spec.Ports {
		if p.NodePort != 0 {
			ports[strconv.Itoa(int(p.NodePort))] = true
		}
	}
	if svc.Spec.HealthCheckNodePort != 0 {
		ports[strconv.Itoa(int(svc.Spec.HealthCheckNodePort))] = true
	}
	return ips, ports
}

func needsClusterIP(svc *corev1.Service) bool {
	return svc.Spec.Type != corev1.ServiceTypeExternalName
}

func needsNodePorts(svc *corev1.Service) bool {
	return svc.Spec.Type == corev1.ServiceTypeNodePort || svc.Spec.Type == corev1.ServiceTypeLoadBalancer
}

func needsHealthCheckNodePort(svc *corev1.Service) bool {
	return svc.Spec.Type == corev1.ServiceTypeLoadBalancer &&
		svc.Spec.ExternalTrafficPolicy == corev1.ServiceExternalTrafficPolicyLocal
}

// shouldAllocateNodePorts: a LoadBalancer may opt out with
// allocateLoadBalancerNodePorts=false (explicit nodePorts are still honoured).
func shouldAllocateNodePorts(svc *corev1.Service) bool {
	switch svc.Spec.Type {
	case corev1.ServiceTypeNodePort:
		return true
	case corev1.ServiceTypeLoadBalancer:
		return svc.Spec.AllocateLoadBalancerNodePorts == nil || *svc.Spec.AllocateLoadBalancerNodePorts
	}
	return false
}

// patchAllocatedValues carries allocated values over an update that left them
// out (kubectl replace/apply of a manifest without clusterIP or nodePort).
func patchAllocatedValues(svc, old *corev1.Service) {
	if needsClusterIP(old) && needsClusterIP(svc) {
		if svc.Spec.ClusterIP == "" {
			svc.Spec.ClusterIP = old.Spec.ClusterIP
		}
		if len(svc.Spec.ClusterIPs) == 0 && len(old.Spec.ClusterIPs) > 0 {
			svc.Spec.ClusterIPs = append([]string(nil), old.Spec.ClusterIPs...)
		}
	}
	if needsNodePorts(old) && needsNodePorts(svc) {
		// A node port the new spec already uses elsewhere can't be patched in.
		used := map[int32]bool{}
		for _, p := range svc.Spec.Ports {
			used[p.NodePort] = true
		}
		oldByName := map[string]int32{}
		for _, p := range old.Spec.Ports {
			oldByName[p.Name] = p.NodePort
		}
		for i := range svc.Spec.Ports {
			p := &svc.Spec.Ports[i]
			if p.NodePort == 0 && !used[oldByName[p.Name]] {
				p.NodePort = oldByName[p.Name]
				used[p.NodePort] = true
			}
		}
	}
	if needsHealthCheckNodePort(old) && needsHealthCheckNodePort(svc) && svc.Spec.HealthCheckNodePort == 0 {
		svc.Spec.HealthCheckNodePort = old.Spec.HealthCheckNodePort
	}
}

// dropTypeDependentFields clears values the new type doesn't use when the
// user merely kept them from the old object (as kube's strategy does).
func dropTypeDependentFields(svc, old *corev1.Service) {
	if needsClusterIP(old) && !needsClusterIP(svc) {
		if svc.Spec.ClusterIP == old.Spec.ClusterIP && equalStrings(svc.Spec.ClusterIPs, old.Spec.ClusterIPs) {
			svc.Spec.ClusterIP, svc.Spec.ClusterIPs = "", nil
		}
		if equalFamilies(svc.Spec.IPFamilies, old.Spec.IPFamilies) {
			svc.Spec.IPFamilies = nil
		}
		if samePolicy(svc.Spec.IPFamilyPolicy, old.Spec.IPFamilyPolicy) {
			svc.Spec.IPFamilyPolicy = nil
		}
	}
	if needsNodePorts(old) && !needsNodePorts(svc) && sameNodePorts(svc, old) {
		for i := range svc.Spec.Ports {
			svc.Spec.Ports[i].NodePort = 0
		}
	}
	if needsHealthCheckNodePort(old) && !needsHealthCheckNodePort(svc) &&
		svc.Spec.HealthCheckNodePort == old.Spec.HealthCheckNodePort {
		svc.Spec.HealthCheckNodePort = 0
	}
}

func sameNodePorts(svc, old *corev1.Service) bool {
	if len(svc.Spec.Ports) != len(old.Spec.Ports) {
		return false
	}
	for i := range svc.Spec.Ports {
		if svc.Spec.Ports[i].NodePort != old.Spec.Ports[i].NodePort {
			return false
		}
	}
	return true
}

func equalStrings(a, b []string) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i] != b[i] {
			return false
		}
	}
	return true
}

func equalFamilies(a, b []corev1.IPFamily) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i] != b[i] {
			return false
		}
	}
	return true
}

func samePolicy(a, b *corev1.IPFamilyPolicy) bool {
	return (a == nil && b == nil) || (a != nil && b != nil && *a == *b)
}

func otherFamily(family corev1.IPFamily) corev1.IPFamily {
	if family == corev1.IPv4Protocol {
		return corev1.IPv6Protocol
	}
	return corev1.IPv4Protocol
}

func familyOf(ip string) corev1.IPFamily {
	parsed := net.ParseIP(ip)
	switch {
	case parsed == nil:
		return ""
	case parsed.To4() != nil:
		return corev1.IPv4Protocol
	default:
		return corev1.IPv6Protocol
	}
}

// initIPFamilyFields syncs clusterIP/clusterIPs and defaults ipFamilies and
// ipFamilyPolicy for this single-stack cluster, rejecting dual-stack asks.
func (s *Services) initIPFamilyFields(svc, old *corev1.Service) error {
	if svc.Spec.Type == corev1.ServiceTypeExternalName {
		return nil
	}
	spec := &svc.Spec
	clusterIPsPath := field.NewPath("spec", "clusterIPs")
	switch {
	case len(spec.ClusterIPs) == 0 && spec.ClusterIP != "":
		spec.ClusterIPs = []string{spec.ClusterIP}
	case spec.ClusterIP == "" && len(spec.ClusterIPs) > 0:
		spec.ClusterIP = spec.ClusterIPs[0]
	case len(spec.ClusterIPs) > 0 && spec.ClusterIPs[0] != spec.ClusterIP:
		return apierrors.NewInvalid(serviceKind, svc.Name, field.ErrorList{
			field.Invalid(clusterIPsPath, spec.ClusterIPs, "first value must match `clusterIP`"),
		})
	}
	headless := spec.ClusterIP == corev1.ClusterIPNone

	if spec.IPFamilyPolicy == nil {
		policy := corev1.IPFamilyPolicySingleStack
		switch {
		case old != nil && old.Spec.IPFamilyPolicy != nil:
			policy = *old.Spec.IPFamilyPolicy
		case headless && len(spec.Selector) == 0:
			policy = corev1.IPFamilyPolicyRequireDualStack // kube: selectorless headless is dual
		}
		spec.IPFamilyPolicy = &policy
	}
	policy := *spec.IPFamilyPolicy
	clusterFamily := s.IPs.Family()

	policyPath := field.NewPath("spec", "ipFamilyPolicy")
	var errs field.ErrorList
	if policy == corev1.IPFamilyPolicySingleStack {
		if len(spec.ClusterIPs) > 1 {
			errs = append(errs, field.Invalid(policyPath, spec.IPFamilyPolicy,
				"must be 'RequireDualStack' or 'PreferDualStack' when multiple cluster IPs are specified"))
		}
		if len(spec.IPFamilies) > 1 {
			errs = append(errs, field.Invalid(policyPath, spec.IPFamilyPolicy,
				"must be 'RequireDualStack' or 'PreferDualStack' when multiple IP families are specified"))
		}
	}
	for i, ip := range spec.ClusterIPs {
		if ip == corev1.ClusterIPNone {
			break
		}
		family := familyOf(ip)
		if family == "" || i < len(spec.IPFamilies) {
			continue // unparseable IPs fail allocation with kube's "not in the valid range"
		}
		if family != clusterFamily {
			errs = append(errs, field.Invalid(clusterIPsPath.Index(i), spec.ClusterIPs,
				fmt.Sprintf("%s is not configured on this cluster", family)))
			continue
		}
		spec.IPFamilies = append(spec.IPFamilies, family)
	}
	if len(errs) > 0 {
		return apierrors.NewInvalid(serviceKind, svc.Name, errs)
	}

	if headless && len(spec.Selector) == 0 {
		if len(spec.IPFamilies) == 0 {
			spec.IPFamilies = []corev1.IPFamily{clusterFamily}
		}
		if len(spec.IPFamilies) < 2 && policy != corev1.IPFamilyPolicySingleStack {
			spec.IPFamilies = append(spec.IPFamilies, otherFamily(spec.IPFamilies[0]))
		}
		return nil
	}

	if policy == corev1.IPFamilyPolicyRequireDualStack {
		errs = append(errs, field.Invalid(policyPath, spec.IPFamilyPolicy, "this cluster is not configured for dual-stack services"))
	}
	for i, family := range spec.IPFamilies {
		if family != clusterFamily {
			errs = append(errs, field.Invalid(field.NewPath("spec", "ipFamilies").Index(i), family, "not configured on this cluster"))
		}
	}
	if len(errs) > 0 {
		return apierrors.NewInvalid(serviceKind, svc.Name, errs)
	}
	if len(spec.IPFamilies) == 0 {
		spec.IPFamilies = []corev1.IPFamily{clusterFamily}
	}
	return nil
}

func (s *Services) allocClusterIP(ctx context.Context, svc *corev1.Service, allocated *allocations) error {
	if !needsClusterIP(svc) || svc.Spec.ClusterIP == corev1.ClusterIPNone {
		return nil
	}
	requested := svc.Spec.ClusterIP
	if requested == "" {
		ip, err := s.IPs.AllocateNext(ctx, ownerOf(svc))
		if err != nil {
			return apierrors.NewInternalError(fmt.Errorf("failed to allocate a serviceIP: %v", err))
		}
		allocated.ips = append(allocated.ips, ip)
		svc.Spec.ClusterIP, svc.Spec.ClusterIPs = ip, []string{ip}
		return nil
	}
	if err := s.IPs.Allocate(ctx, requested, ownerOf(svc)); err != nil {
		if !errors.Is(err, ErrAllocated) && !errors.Is(err, ErrNotInRange) {
			return apierrors.NewInternalError(fmt.Errorf("failed to allocate IP %v: %v", requested, err))
		}
		return apierrors.NewInvalid(serviceKind, svc.Name, field.ErrorList{
			field.Invalid(field.NewPath("spec", "clusterIPs"), svc.Spec.ClusterIPs, fmt.Sprintf("failed to allocate IP %v: %v", requested, err)),
		})
	}
	allocated.ips = append(allocated.ips, requested)
	return nil
}

// allocNodePorts gives every port of a NodePort/LoadBalancer Service a node
// port: requested ones are claimed (unless old already holds them), missing
// ones allocated; ports sharing a port number (TCP+UDP) share a node port.
func (s *Services) allocNodePorts(ctx context.Context, svc, old *corev1.Service, allocated *allocations) error {
	if !needsNodePorts(svc) {
		return nil
	}
	held := map[int32]bool{} // node ports svc may use without allocating
	if old != nil {
		for _, p := range old.Spec.Ports {
			held[p.NodePort] = p.NodePort != 0
		}
	}
	byServicePort := map[int32]int32{}
	claim := func(i int, nodePort int32) error {
		if held[nodePort] {
			return nil
		}
		if err := s.NodePorts.Allocate(ctx, strconv.Itoa(int(nodePort)), ownerOf(svc)); err != nil {
			if !errors.Is(err, ErrAllocated) && !errors.Is(err, ErrNotInRange) {
				return apierrors.NewInternalError(fmt.Errorf("failed to allocate nodePort %d: %v", nodePort, err))
			}
			return apierrors.NewInvalid(serviceKind, svc.Name, field.ErrorList{
				field.Invalid(field.NewPath("spec", "ports").Index(i).Child("nodePort"), nodePort, err.Error()),
			})
		}
		allocated.ports = append(allocated.ports, strconv.Itoa(int(nodePort)))
		held[nodePort] = true
		return nil
	}
	for i := range svc.Spec.Ports {
		port := &svc.Spec.Ports[i]
		if port.NodePort == 0 && !shouldAllocateNodePorts(svc) {
			continue // don't allocate, but honour explicit requests
		}
		if port.NodePort == 0 {
			port.NodePort = byServicePort[port.Port]
		}
		if port.NodePort == 0 {
			// A later port with the same number may name the node port to share.
			for _, later := range svc.Spec.Ports[i+1:] {
				if later.Port == port.Port && later.NodePort != 0 {
					port.NodePort = later.NodePort
					break
				}
			}
		}
		if port.NodePort != 0 {
			if err := claim(i, port.NodePort); err != nil {
				return err
			}
		} else {
			nodePort, err := s.NodePorts.AllocateNext(ctx, ownerOf(svc))
			if err != nil {
				return apierrors.NewInternalError(fmt.Errorf("failed to allocate a nodePort: %v", err))
			}
			allocated.ports = append(allocated.ports, nodePort)
			number, _ := strconv.Atoi(nodePort)
			port.NodePort = int32(number)
			held[port.NodePort] = true
		}
		if _, seen := byServicePort[port.Port]; !seen {
			byServicePort[port.Port] = port.NodePort
		}
	}
	return nil
}

func (s *Services) allocHealthCheckNodePort(ctx context.Context, svc *corev1.Service, allocated *allocations) error {
	if requested := svc.Spec.HealthCheckNodePort; requested != 0 {
		item := strconv.Itoa(int(requested))
		if err := s.NodePorts.Allocate(ctx, item, ownerOf(svc)); err != nil {
			return apierrors.NewInternalError(fmt.Errorf("failed to allocate requested HealthCheck NodePort %v: %v", requested, err))
		}
		allocated.ports = append(allocated.ports, item)
		return nil
	}
	item, err := s.NodePorts.AllocateNext(ctx, ownerOf(svc))
	if err != nil {
		return apierrors.NewInternalError(fmt.Errorf("failed to allocate a HealthCheck NodePort %v: %v", 0, err))
	}
	allocated.ports = append(allocated.ports, item)
	number, _ := strconv.Atoi(item)
	svc.Spec.HealthCheckNodePort = int32(number)
	return nil
}
