package ipalloc

import (
	"context"
	"errors"
	"sort"

	corev1 "k8s.io/api/core/v1"
)

// RepairReport says what one Repair pass found and did; items are cluster
// IPs or node ports as strings.
type RepairReport struct {
	// Remarked: used by a live Service but missing from etcd (crash between
	// release and persist, or data loss); allocated again.
	Remarked []string
	// Released: allocated without an owning Service for
	// leakPassesBeforeRelease consecutive passes; freed.
	Released []string
	// PendingLeaks: allocated without an owning Service, not yet freed (may
	// be an in-flight create).
	PendingLeaks []string
	// Conflicts: claimed by more than one live Service.
	Conflicts []string
	// OutOfRange: used by a live Service but outside the configured range.
	OutOfRange []string
}

// Repair reconciles allocations with the Services that exist, as kube's
// repair controllers do; run it periodically (kube: every 3 minutes) with a
// fresh list of all Services.
func (s *Services) Repair(ctx context.Context, live []*corev1.Service) (RepairReport, error) {
	wantIPs, wantPorts := map[string][]string{}, map[string][]string{}
	for _, svc := range live {
		ips, ports := allocatedItems(svc)
		for ip := range ips {
			if familyOf(ip) == s.IPs.Family() {
				wantIPs[ip] = append(wantIPs[ip], ownerOf(svc))
			}
		}
		for port := range ports {
			wantPorts[port] = append(wantPorts[port], ownerOf(svc))
		}
	}
	var report RepairReport
	errIPs := s.repairRange(ctx, s.IPs, wantIPs, &report)
	errPorts := s.repairRange(ctx, s.NodePorts, wantPorts, &report)
	for _, items := range []*[]string{&report.Remarked, &report.Released, &report.PendingLeaks, &report.Conflicts, &report.OutOfRange} {
		sort.Strings(*items)
	}
	return report, errors.Join(errIPs, errPorts)
}

func (s *Services) repairRange(ctx context.Context, r *Range, want map[string][]string, report *RepairReport) error {
	existing, err := r.list(ctx)
	if err != nil {
		return err
	}
	have := make(map[string]allocation, len(existing))
	for _, a := range existing {
		have[a.item] = a
	}

	var errs []error
	for item, owners := range want {
		if len(owners) > 1 {
			report.Conflicts = append(report.Conflicts, item)
		}
		if _, ok := have[item]; ok {
			continue
		}
		switch err := r.Allocate(ctx, item, owners[0]); {
		case err == nil:
			report.Remarked = append(report.Remarked, item)
		case errors.Is(err, ErrAllocated):
			// Allocated concurrently since the list: nothing to repair.
		case errors.Is(err, ErrNotInRange):
			report.OutOfRange = append(report.OutOfRange, item)
		default:
			errs = append(errs, err)
		}
	}

	s.mu.Lock()
	defer s.mu.Unlock()
	if s.leakSeen == nil {
		s.leakSeen = map[leakKey]int{}
	}
	stillLeaked := map[leakKey]bool{}
	for _, a := range existing {
		if _, owned := want[a.item]; owned {
			continue
		}
		key := leakKey{rangePrefix: r.prefix, item: a.item, createRevision: a.createRevision}
		s.leakSeen[key]++
		if s.leakSeen[key] < leakPassesBeforeRelease {
			stillLeaked[key] = true
			report.PendingLeaks = append(report.PendingLeaks, a.item)
			continue
		}
		released, err := r.releaseIfUnchanged(ctx, a.item, a.createRevision)
		if err != nil {
			stillLeaked[key] = true
			errs = append(errs, err)
			continue
		}
		if released {
			report.Released = append(report.Released, a.item)
		}
	}
	// Forget counters of this range's allocations that got owned or freed.
	for key := range s.leakSeen {
		if key.rangePrefix == r.prefix && !stillLeaked[key] {
			delete(s.leakSeen, key)
		}
	}
	return errors.Join(errs...)
}
