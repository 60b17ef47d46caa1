package ipalloc

import (
	"errors"
	"fmt"
	"net"
	"strconv"
	"sync"
	"testing"
	"time"

	clientv3 "go.etcd.io/etcd/client/v3"
)

func TestIPRangeAllocatesEveryDynamicIPThenIsFull(t *testing.T) {
	ctx := testContext(t)
	ips := newServiceIPRange(testClient.KV, uniquePrefix("serviceips"), mustCIDR(t, "10.0.0.0/24"))
	if ips.Size() != 254 {
		t.Fatalf("Size() = %d, want 254 (.1 … .254)", ips.Size())
	}

	seen := map[string]bool{}
	for i := range 253 {
		ip, err := ips.AllocateNext(ctx, "default/svc"+strconv.Itoa(i))
		if err != nil {
			t.Fatalf("allocation %d: %v", i, err)
		}
		if seen[ip] {
			t.Fatalf("allocation %d: %s handed out twice", i, ip)
		}
		seen[ip] = true
		// The first 16 addresses are the static band, only used once the rest is gone.
		if i < 253-15 && net.ParseIP(ip).To4()[3] < 17 {
			t.Fatalf("allocation %d took %s from the static band while the dynamic band had room", i, ip)
		}
	}
	if seen["10.0.0.1"] {
		t.Fatal("AllocateNext handed out 10.0.0.1, reserved for the kubernetes Service")
	}
	for last := 2; last <= 254; last++ {
		if ip := fmt.Sprintf("10.0.0.%d", last); !seen[ip] {
			t.Fatalf("%s never allocated", ip)
		}
	}

	_, err := ips.AllocateNext(ctx, "default/one-too-many")
	if !errors.Is(err, ErrFull) || err.Error() != "range is full" {
		t.Fatalf("AllocateNext on a full range = %v, want ErrFull %q", err, "range is full")
	}

	// The reserved first IP is still available explicitly.
	if err := ips.Allocate(ctx, "10.0.0.1", "default/kubernetes"); err != nil {
		t.Fatalf("Allocate(10.0.0.1) = %v", err)
	}
	owners, err := ips.Allocated(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if len(owners) != 254 || owners["10.0.0.1"] != "default/kubernetes" || owners["10.0.0.7"] == "" {
		t.Fatalf("Allocated() has %d entries, 10.0.0.1 owned by %q", len(owners), owners["10.0.0.1"])
	}
}

func TestAllocateSpecificIPErrors(t *testing.T) {
	ctx := testContext(t)
	ips := newServiceIPRange(testClient.KV, uniquePrefix("serviceips"), mustCIDR(t, "10.0.0.0/24"))
	if err := ips.Allocate(ctx, "10.0.0.5", "default/first"); err != nil {
		t.Fatal(err)
	}

	err := ips.Allocate(ctx, "10.0.0.5", "default/second")
	var allocated *AllocatedError
	if !errors.As(err, &allocated) || !errors.Is(err, ErrAllocated) {
		t.Fatalf("Allocate taken IP = %v, want *AllocatedError", err)
	}
	if err.Error() != "provided IP is already allocated" || allocated.Owner != "default/first" {
		t.Fatalf("got %q owned by %q", err, allocated.Owner)
	}

	const notInRange = "provided IP is not in the valid range. The range of valid IPs is 10.0.0.0/24"
	for _, item := range []string{"10.0.0.0", "10.0.0.255", "10.0.1.5", "10.0.0.300", "fd00::5", ""} {
		err := ips.Allocate(ctx, item, "default/x")
		var outside *NotInRangeError
		if !errors.As(err, &outside) || !errors.Is(err, ErrNotInRange) || err.Error() != notInRange {
			t.Errorf("Allocate(%q) = %v, want %q", item, err, notInRange)
		}
	}
}

func TestReleaseAndReallocate(t *testing.T) {
	ctx := testContext(t)
	ips := newServiceIPRange(testClient.KV, uniquePrefix("serviceips"), mustCIDR(t, "10.0.0.0/24"))
	if err := ips.Allocate(ctx, "10.0.0.9", "default/a"); err != nil {
		t.Fatal(err)
	}
	if has, err := ips.Has(ctx, "10.0.0.9"); err != nil || !has {
		t.Fatalf("Has after Allocate = %v, %v", has, err)
	}
	for range 2 { // releasing twice is fine
		if err := ips.Release(ctx, "10.0.0.9"); err != nil {
			t.Fatalf("Release: %v", err)
		}
	}
	if has, err := ips.Has(ctx, "10.0.0.9"); err != nil || has {
		t.Fatalf("Has after Release = %v, %v", has, err)
	}
	if err := ips.Release(ctx, "not-an-ip"); err != nil {
		t.Fatalf("Release(garbage) = %v, want nil", err)
	}
	if err := ips.Allocate(ctx, "10.0.0.9", "default/b"); err != nil {
		t.Fatalf("reallocating a released IP: %v", err)
	}
	owners, err := ips.Allocated(ctx)
	if err != nil || owners["10.0.0.9"] != "default/b" {
		t.Fatalf("owner after reallocation = %q, %v", owners["10.0.0.9"], err)
	}
}

func TestIPv6Range(t *testing.T) {
	ctx := testContext(t)
	ips := newServiceIPRange(testClient.KV, uniquePrefix("serviceips"), mustCIDR(t, "fd00:10:96::/108"))
	if ips.Size() != 65535 || ips.ValidRange() != "fd00:10:96::/108" {
		t.Fatalf("Size() = %d ValidRange() = %s", ips.Size(), ips.ValidRange())
	}
	if err := ips.Allocate(ctx, "fd00:10:96::1", "default/kubernetes"); err != nil {
		t.Fatal(err)
	}
	ip, err := ips.AllocateNext(ctx, "default/a")
	if err != nil || !ips.Contains(ip) || ip == "fd00:10:96::1" {
		t.Fatalf("AllocateNext = %q, %v", ip, err)
	}
	if err := ips.Allocate(ctx, "fd00:10:96::1:0", "default/b"); !errors.Is(err, ErrNotInRange) {
		t.Fatalf("Allocate beyond the 2^16 cap = %v, want not in range", err)
	}
}

func TestNodePortRange(t *testing.T) {
	ctx := testContext(t)
	ports := newNodePortRange(testClient.KV, uniquePrefix("servicenodeports"), 30000, 2768)
	if ports.ValidRange() != "30000-32767" {
		t.Fatalf("ValidRange() = %q", ports.ValidRange())
	}
	if err := ports.Allocate(ctx, "30080", "default/a"); err != nil {
		t.Fatal(err)
	}
	if err := ports.Allocate(ctx, "30080", "default/b"); !errors.Is(err, ErrAllocated) || err.Error() != "provided port is already allocated" {
		t.Fatalf("Allocate taken port = %v", err)
	}
	const notInRange = "provided port is not in the valid range. The range of valid ports is 30000-32767"
	for _, port := range []string{"29999", "32768", "80", "http"} {
		if err := ports.Allocate(ctx, port, "default/b"); !errors.Is(err, ErrNotInRange) || err.Error() != notInRange {
			t.Errorf("Allocate(%s) = %v, want %q", port, err, notInRange)
		}
	}
	port, err := ports.AllocateNext(ctx, "default/c")
	if err != nil {
		t.Fatal(err)
	}
	// kube prefers ports above the static band (2768/32 = 86 ports).
	if number, _ := strconv.Atoi(port); number < 30086 || number > 32767 {
		t.Fatalf("AllocateNext = %s, want within 30086-32767", port)
	}

	// A tiny range: 4 dynamic ports first, then the 16 static ones, then full.
	small := newNodePortRange(testClient.KV, uniquePrefix("servicenodeports"), 31000, 20)
	seen := map[string]bool{}
	for i := range 20 {
		port, err := small.AllocateNext(ctx, "default/small")
		if err != nil {
			t.Fatalf("allocation %d: %v", i, err)
		}
		if number, _ := strconv.Atoi(port); i < 4 && number < 31016 {
			t.Fatalf("allocation %d = %s, want the dynamic band 31016-31019 first", i, port)
		}
		if seen[port] {
			t.Fatalf("%s allocated twice", port)
		}
		seen[port] = true
	}
	if _, err := small.AllocateNext(ctx, "default/small"); !errors.Is(err, ErrFull) {
		t.Fatalf("AllocateNext on full range = %v, want ErrFull", err)
	}
}

// Eight goroutines split over two Range instances with their own etcd
// clients (as two devplane replicas would be) race for a /24: every IP is
// handed out exactly once and its etcd owner is the goroutine that got it.
func TestConcurrentAllocateNextNeverDuplicates(t *testing.T) {
	ctx := testContext(t)
	otherReplica, err := clientv3.New(clientv3.Config{Endpoints: []string{testEndpoint}, DialTimeout: 10 * time.Second})
	if err != nil {
		t.Fatal(err)
	}
	defer otherReplica.Close()

	prefix, cidr := uniquePrefix("serviceips"), mustCIDR(t, "10.0.0.0/24")
	replicas := []*Range{newServiceIPRange(testClient.KV, prefix, cidr), newServiceIPRange(otherReplica.KV, prefix, cidr)}

	const workers = 8
	got := make([][]string, workers)
	errs := make([]error, workers)
	var wg sync.WaitGroup
	for w := range workers {
		wg.Go(func() {
			ips := replicas[w%2]
			for range 254 { // bounded: no worker can get more than the range
				ip, err := ips.AllocateNext(ctx, fmt.Sprintf("worker/%d", w))
				if errors.Is(err, ErrFull) {
					return
				}
				if err != nil {
					errs[w] = err
					return
				}
				got[w] = append(got[w], ip)
			}
		})
	}
	wg.Wait()

	owners, err := replicas[0].Allocated(ctx)
	if err != nil {
		t.Fatal(err)
	}
	byIP := map[string]int{}
	for w := range workers {
		if errs[w] != nil {
			t.Fatalf("worker %d: %v", w, errs[w])
		}
		for _, ip := range got[w] {
			if other, dup := byIP[ip]; dup {
				t.Fatalf("%s handed to workers %d and %d", ip, other, w)
			}
			byIP[ip] = w
			if want := fmt.Sprintf("worker/%d", w); owners[ip] != want {
				t.Fatalf("%s owned by %q in etcd, handed to %s", ip, owners[ip], want)
			}
		}
	}
	if len(byIP) != 253 || len(owners) != 253 {
		t.Fatalf("allocated %d IPs (%d in etcd), want all 253", len(byIP), len(owners))
	}
}

// BenchmarkAllocateNext: one AllocateNext (keys-only list + create txn)
// against a /16 holding up to 1000 allocations.
func BenchmarkAllocateNext(b *testing.B) {
	ctx := testContext(b)
	prefix := uniquePrefix("serviceips")
	ips := newServiceIPRange(testClient.KV, prefix, mustCIDR(b, "10.96.0.0/16"))
	allocated := 0
	for b.Loop() {
		if allocated == 1000 {
			b.StopTimer()
			if _, err := testClient.Delete(ctx, prefix, clientv3.WithPrefix()); err != nil {
				b.Fatal(err)
			}
			allocated = 0
			b.StartTimer()
		}
		if _, err := ips.AllocateNext(ctx, "default/bench"); err != nil {
			b.Fatal(err)
		}
		allocated++
	}
	b.ReportMetric(float64(b.Elapsed().Microseconds())/float64(b.N), "µs/op")
}
