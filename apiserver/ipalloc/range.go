// Package ipalloc allocates Service cluster IPs and node ports the way
// kube-apiserver's service registry does, but keeps every allocation as its
// own etcd key so that several devplane replicas sharing one etcd never hand
// out the same item and allocations survive restarts.
package ipalloc

import (
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"math/rand/v2"
	"net"
	"strconv"
	"strings"

	clientv3 "go.etcd.io/etcd/client/v3"
	corev1 "k8s.io/api/core/v1"
)

// Key prefixes of the two ranges kube-apiserver manages.
const (
	ServiceIPsPrefix       = "/registry/ranges/serviceips/"
	ServiceNodePortsPrefix = "/registry/ranges/servicenodeports/"
)

// ErrFull is returned by AllocateNext when every item is taken (kube's wording).
var ErrFull = errors.New("range is full")

// Sentinels for errors.Is; the concrete errors carry kube's exact messages.
var (
	ErrNotInRange = errors.New("not in range")
	ErrAllocated  = errors.New("already allocated")
)

// NotInRangeError reports an item outside the range (or not parseable as one).
type NotInRangeError struct {
	Item       string
	Noun       string // "IP" or "port"
	ValidRange string // "10.0.0.0/24" or "30000-32767"
}

func (e *NotInRangeError) Error() string {
	return fmt.Sprintf("provided %s is not in the valid range. The range of valid %ss is %s", e.Noun, e.Noun, e.ValidRange)
}

func (e *NotInRangeError) Is(target error) bool { return target == ErrNotInRange }

// AllocatedError reports an item that already has an owner.
type AllocatedError struct {
	Item  string
	Noun  string
	Owner string // the "namespace/name" stored with the allocation
}

func (e *AllocatedError) Error() string {
	return fmt.Sprintf("provided %s is already allocated", e.Noun)
}

func (e *AllocatedError) Is(target error) bool { return target == ErrAllocated }

// Range hands out items of a contiguous range (IPs of a CIDR or node ports).
// Each allocated item is the etcd key prefix+item with the owner as value,
// created only if absent, so etcd arbitrates between concurrent allocators.
type Range struct {
	kv     clientv3.KV
	prefix string

	size int // items are offsets 0..size-1
	// AllocateNext never returns offsets below reservedBelow (the first
	// service IP belongs to the `kubernetes` Service, allocated explicitly).
	reservedBelow int
	// AllocateNext prefers offsets >= dynamicFrom and only then falls back to
	// the lower band, leaving the low band for static requests (KEP-3070/3668).
	dynamicFrom int

	noun       string
	validRange string
	family     corev1.IPFamily // empty for port ranges

	itemAt   func(offset int) string
	offsetOf func(item string) (offset int, inRange bool)
	// canonical normalizes an item's spelling regardless of range membership.
	canonical func(item string) (string, bool)
}

// NewServiceIPRange allocates IPs of cidr: network+1 … broadcast-1 for IPv4,
// network+1 … network+65535 (at most) for IPv6, like kube's ipallocator.
func NewServiceIPRange(client *clientv3.Client, cidr *net.IPNet) *Range {
	return newServiceIPRange(client.KV, ServiceIPsPrefix, cidr)
}

func newServiceIPRange(kv clientv3.KV, prefix string, cidr *net.IPNet) *Range {
	network := cidr.IP.Mask(cidr.Mask)
	ones, bits := cidr.Mask.Size()
	hostBits := bits - ones
	isIPv4 := network.To4() != nil

	total := uint64(1) << min(hostBits, 62)
	var size uint64
	family := corev1.IPv6Protocol
	if isIPv4 {
		family = corev1.IPv4Protocol
		size = total - min(total, 2) // no network, no broadcast address
	} else {
		size = min(total, 65536) - 1 // kube caps IPv6 ranges at 2^16; no network address
	}

	base := network.To16()
	baseHigh := binary.BigEndian.Uint64(base[:8])
	baseLow := binary.BigEndian.Uint64(base[8:])
	canonical := func(item string) (string, bool) {
		ip := net.ParseIP(item)
		if ip == nil || (ip.To4() != nil) != isIPv4 {
			return "", false
		}
		return ip.String(), true
	}
	r := &Range{
		kv:            kv,
		prefix:        prefix,
		size:          int(size),
		reservedBelow: 1,
		dynamicFrom:   ipDynamicFrom(total),
		noun:          "IP",
		validRange:    (&net.IPNet{IP: network, Mask: cidr.Mask}).String(),
		family:        family,
		canonical:     canonical,
		itemAt: func(offset int) string {
			ip := make(net.IP, 16)
			binary.BigEndian.PutUint64(ip[:8], baseHigh)
			binary.BigEndian.PutUint64(ip[8:], baseLow+1+uint64(offset))
			return ip.String()
		},
		offsetOf: func(item string) (int, bool) {
			ip := net.ParseIP(item)
			if ip == nil || (ip.To4() != nil) != isIPv4 || !cidr.Contains(ip) {
				return 0, false
			}
			ip = ip.To16()
			if binary.BigEndian.Uint64(ip[:8]) != baseHigh {
				return 0, false // beyond the capped IPv6 size
			}
			low := binary.BigEndian.Uint64(ip[8:])
			if low <= baseLow || low-baseLow-1 >= size {
				return 0, false
			}
			return int(low - baseLow - 1), true
		},
	}
	return r
}

// ipDynamicFrom mirrors kube's ipallocator calculateRangeOffset: the first
// size/16 addresses (between 16 and 256) are preferred for static requests.
func ipDynamicFrom(rangeSize uint64) int {
	const lowest, highest, step = 16, 256, 16
	if rangeSize < lowest {
		return 0
	}
	return int(min(max(rangeSize/step, lowest), highest))
}

// NewNodePortRange allocates ports base … base+size-1 (kube default 30000, 2768).
func NewNodePortRange(client *clientv3.Client, base, size int) *Range {
	return newNodePortRange(client.KV, ServiceNodePortsPrefix, base, size)
}

func newNodePortRange(kv clientv3.KV, prefix string, base, size int) *Range {
	canonical := func(item string) (string, bool) {
		port, err := strconv.Atoi(item)
		if err != nil {
			return "", false
		}
		return strconv.Itoa(port), true
	}
	return &Range{
		kv:          kv,
		prefix:      prefix,
		size:        size,
		dynamicFrom: portDynamicFrom(size),
		noun:        "port",
		validRange:  fmt.Sprintf("%d-%d", base, base+size-1),
		canonical:   canonical,
		itemAt:      func(offset int) string { return strconv.Itoa(base + offset) },
		offsetOf: func(item string) (int, bool) {
			port, err := strconv.Atoi(item)
			if err != nil || port < base || port >= base+size {
				return 0, false
			}
			return port - base, true
		},
	}
}

// portDynamicFrom mirrors kube's portallocator calculateRangeOffset.
func portDynamicFrom(size int) int {
	const lowest, highest, step = 16, 128, 32
	if size <= lowest {
		return 0
	}
	return min(max(size/step, lowest), highest)
}

// Size is the number of items AllocateNext or Allocate can ever hand out.
func (r *Range) Size() int { return r.size }

// ValidRange is the range as kube prints it in errors.
func (r *Range) ValidRange() string { return r.validRange }

// Family is the IP family of a service IP range ("" for node ports).
func (r *Range) Family() corev1.IPFamily { return r.family }

// Contains reports whether item is inside the range.
func (r *Range) Contains(item string) bool {
	_, ok := r.offsetOf(item)
	return ok
}

// AllocateNext allocates a free item for owner: a random start in the
// preferred (upper) band, scanning forward, then the lower band.
func (r *Range) AllocateNext(ctx context.Context, owner string) (string, error) {
	taken, err := r.takenOffsets(ctx)
	if err != nil {
		return "", err
	}
	bands := [][2]int{{max(r.dynamicFrom, r.reservedBelow), r.size}, {r.reservedBelow, r.dynamicFrom}}
	for _, band := range bands {
		low, high := band[0], band[1]
		if low >= high {
			continue
		}
		width := high - low
		start := rand.IntN(width)
		for step := range width {
			offset := low + (start+step)%width
			if _, isTaken := taken[offset]; isTaken {
				continue
			}
			created, _, err := r.create(ctx, r.itemAt(offset), owner)
			if err != nil {
				return "", err
			}
			if created {
				return r.itemAt(offset), nil
			}
			// Lost a race with another allocator: keep scanning.
			taken[offset] = struct{}{}
		}
	}
	return "", ErrFull
}

// Allocate claims a specific item for owner.
func (r *Range) Allocate(ctx context.Context, item, owner string) error {
	offset, ok := r.offsetOf(item)
	if !ok {
		return &NotInRangeError{Item: item, Noun: r.noun, ValidRange: r.validRange}
	}
	item = r.itemAt(offset)
	created, currentOwner, err := r.create(ctx, item, owner)
	if err != nil {
		return err
	}
	if !created {
		return &AllocatedError{Item: item, Noun: r.noun, Owner: currentOwner}
	}
	return nil
}

// Release frees item; releasing a free or unparseable item is a no-op.
func (r *Range) Release(ctx context.Context, item string) error {
	item, ok := r.canonical(item)
	if !ok {
		return nil
	}
	_, err := r.kv.Delete(ctx, r.prefix+item)
	return err
}

// Has reports whether item is allocated.
func (r *Range) Has(ctx context.Context, item string) (bool, error) {
	item, ok := r.canonical(item)
	if !ok {
		return false, nil
	}
	resp, err := r.kv.Get(ctx, r.prefix+item, clientv3.WithCountOnly())
	if err != nil {
		return false, err
	}
	return resp.Count > 0, nil
}

// Allocated returns every allocated item with its owner.
func (r *Range) Allocated(ctx context.Context) (map[string]string, error) {
	allocations, err := r.list(ctx)
	if err != nil {
		return nil, err
	}
	owners := make(map[string]string, len(allocations))
	for _, a := range allocations {
		owners[a.item] = a.owner
	}
	return owners, nil
}

type allocation struct {
	item, owner    string
	createRevision int64
}

func (r *Range) list(ctx context.Context) ([]allocation, error) {
	resp, err := r.kv.Get(ctx, r.prefix, clientv3.WithPrefix())
	if err != nil {
		return nil, err
	}
	allocations := make([]allocation, 0, len(resp.Kvs))
	for _, kv := range resp.Kvs {
		allocations = append(allocations, allocation{
			item:           strings.TrimPrefix(string(kv.Key), r.prefix),
			owner:          string(kv.Value),
			createRevision: kv.CreateRevision,
		})
	}
	return allocations, nil
}

// takenOffsets lists keys only: AllocateNext needs one cheap snapshot, and
// the create-if-absent txn catches anything allocated after it.
func (r *Range) takenOffsets(ctx context.Context) (map[int]struct{}, error) {
	resp, err := r.kv.Get(ctx, r.prefix, clientv3.WithPrefix(), clientv3.WithKeysOnly())
	if err != nil {
		return nil, err
	}
	taken := make(map[int]struct{}, len(resp.Kvs))
	for _, kv := range resp.Kvs {
		if offset, ok := r.offsetOf(strings.TrimPrefix(string(kv.Key), r.prefix)); ok {
			taken[offset] = struct{}{}
		}
	}
	return taken, nil
}

// create puts prefix+item=owner if the key is absent; otherwise it returns
// the current owner.
func (r *Range) create(ctx context.Context, item, owner string) (created bool, currentOwner string, err error) {
	key := r.prefix + item
	resp, err := r.kv.Txn(ctx).
		If(clientv3.Compare(clientv3.CreateRevision(key), "=", 0)).
		Then(clientv3.OpPut(key, owner)).
		Else(clientv3.OpGet(key)).
		Commit()
	if err != nil {
		return false, "", err
	}
	if resp.Succeeded {
		return true, owner, nil
	}
	if kvs := resp.Responses[0].GetResponseRange().Kvs; len(kvs) > 0 {
		currentOwner = string(kvs[0].Value)
	}
	return false, currentOwner, nil
}

// releaseIfUnchanged deletes item only if it is still the allocation created
// at createRevision, so a repair never frees a newer allocation of the item.
func (r *Range) releaseIfUnchanged(ctx context.Context, item string, createRevision int64) (bool, error) {
	key := r.prefix + item
	resp, err := r.kv.Txn(ctx).
		If(clientv3.Compare(clientv3.CreateRevision(key), "=", createRevision)).
		Then(clientv3.OpDelete(key)).
		Commit()
	if err != nil {
		return false, err
	}
	return resp.Succeeded, nil
}
