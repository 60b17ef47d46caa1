// Package snapshot takes a devplane's whole API state and puts it back:
// every key under /registry/ (built-in objects, CRDs and their custom
// resources, IP and node-port allocations) as etcd held it at one revision.
//
// A restore moves time forward, never back: it writes the snapshot's
// values as new etcd revisions and deletes the keys the snapshot lacks,
// touching only keys whose value differs. Every object it changes gets a
// new, higher resourceVersion; a watch running across it receives ordinary
// ADDED, MODIFIED and DELETED events that bring it to the restored state,
// so an informer ends where the snapshot was without relisting (as it would
// if those changes had been made through the API, minus admission).
//
// Events (kept under a TTL lease) are not part of a snapshot: a restore
// deletes those it finds, as their objects' history is rewound.
package snapshot

import (
	"bytes"
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strings"
	"sync"
	"sync/atomic"

	"go.etcd.io/etcd/api/v3/mvccpb"
	clientv3 "go.etcd.io/etcd/client/v3"
)

// Prefix is where every resource is stored: all a snapshot holds.
const Prefix = "/registry/"

// Snapshot is the API state at one etcd revision. It is read-only once
// taken: one Snapshot may be restored, forked and written many times, from
// several goroutines.
type Snapshot struct {
	// Revision is the etcd revision it was read at (in the instance it
	// was taken from).
	Revision int64
	// KVs are the keys and values, sorted by key.
	KVs []KV

	servedOnce sync.Once
	served     []Served
}

// KV is one stored object.
type KV struct {
	Key   string
	Value []byte
}

// Take reads every key under Prefix at the current revision, in one range
// read.
func Take(ctx context.Context, client *clientv3.Client) (*Snapshot, error) {
	resp, err := client.Get(ctx, Prefix, clientv3.WithPrefix())
	if err != nil {
		return nil, fmt.Errorf("taking a snapshot: %w", err)
	}
	s := &Snapshot{Revision: resp.Header.Revision, KVs: make([]KV, 0, len(resp.Kvs))}
	for _, kv := range resp.Kvs {
		// Keys with a lease (events) expire on their own; never keep them.
		if kv.Lease == 0 {
			s.KVs = append(s.KVs, KV{Key: string(kv.Key), Value: kv.Value})
		}
	}
	return s, nil
}

// Size is the snapshot's keys and values in bytes.
func (s *Snapshot) Size() int {
	n := 0
	for _, kv := range s.KVs {
		n += len(kv.Key) + len(kv.Value)
	}
	return n
}

// Result says what a restore changed.
type Result struct {
	// Revision is etcd's revision once the restore was written: every
	// change it made is at or below it.
	Revision int64 `json:"revision"`
	// Put and Deleted are how many keys were written back and removed.
	Put     int `json:"put"`
	Deleted int `json:"deleted"`
	// Keys are the keys it changed, sorted.
	Keys []string `json:"-"`
}

// Limits of one transaction: etcd refuses more than 128 operations or
// 1.5 MiB per request by default, and a larger value goes alone.
const (
	maxTxnOps   = 100
	maxTxnBytes = 1 << 20
	// maxAttempts bounds the retries when another writer changes a key
	// between the read of the current state and the write.
	maxAttempts = 5
)

// ErrConflict is returned (wrapped) when other writers kept changing the
// keys a restore was writing.
var ErrConflict = errors.New("the state kept changing while it was being restored")

// Restore makes the keys under Prefix hold exactly s: keys whose value
// differs are written, keys s lacks are deleted, equal ones are left
// alone. The writes go in transactions of up to 100 operations, each
// applied only if none of its keys changed since they were read (another
// writer's change makes Restore read and try again). A restore of an
// unchanged state writes nothing, and Result.Revision is then etcd's
// current one.
func Restore(ctx context.Context, client *clientv3.Client, s *Snapshot) (Result, error) {
	for range maxAttempts {
		res, conflict, err := restoreOnce(ctx, client, s)
		if err != nil || !conflict {
			return res, err
		}
	}
	return Result{}, fmt.Errorf("restoring a snapshot: %w", ErrConflict)
}

// op is one planned change, a put of value or a delete, guarded by the
// key's modRevision when read (0: absent).
type op struct {
	key         string
	value       []byte
	delete      bool
	modRevision int64
}

func restoreOnce(ctx context.Context, client *clientv3.Client, s *Snapshot) (Result, bool, error) {
	resp, err := client.Get(ctx, Prefix, clientv3.WithPrefix())
	if err != nil {
		return Result{}, false, fmt.Errorf("restoring a snapshot: reading the current state: %w", err)
	}
	ops := plan(resp.Kvs, s.KVs)
	res := Result{Revision: resp.Header.Revision, Keys: make([]string, 0, len(ops))}
	for _, batch := range batches(ops) {
		tr, err := commit(ctx, client, batch)
		if err != nil {
			return res, false, fmt.Errorf("restoring a snapshot: %w", err)
		}
		if !tr.Succeeded {
			// What was written so far stays: the next attempt's plan
			// starts from it.
			return res, true, nil
		}
		res.add(tr.Header.Revision, batch)
	}
	slices.Sort(res.Keys)
	return res, false, nil
}

// Load writes s into a store that holds nothing under Prefix yet, for an
// instance starting on a snapshot before any server reads or watches it:
// with no one to see the order of the writes, several transactions go at
// once. A store that holds keys already is restored as Restore does.
func Load(ctx context.Context, client *clientv3.Client, s *Snapshot) (Result, error) {
	resp, err := client.Get(ctx, Prefix, clientv3.WithPrefix(), clientv3.WithCountOnly())
	if err != nil {
		return Result{}, fmt.Errorf("loading a snapshot: %w", err)
	}
	if resp.Count > 0 {
		return Restore(ctx, client, s)
	}
	ops := plan(nil, s.KVs)
	work := batches(ops)
	res := Result{Revision: resp.Header.Revision, Keys: make([]string, 0, len(ops))}
	var mu sync.Mutex
	var firstErr error
	var next atomic.Int64
	var wg sync.WaitGroup
	for range min(loadWriters, len(work)) {
		wg.Go(func() {
			for i := int(next.Add(1) - 1); i < len(work); i = int(next.Add(1) - 1) {
				tr, err := commit(ctx, client, work[i])
				if err == nil && !tr.Succeeded {
					err = ErrConflict // another writer: not a store to load into
				}
				mu.Lock()
				if err != nil {
					firstErr = cmp.Or(firstErr, err)
				} else {
					res.add(tr.Header.Revision, work[i])
				}
				mu.Unlock()
				if err != nil {
					return
				}
			}
		})
	}
	wg.Wait()
	if firstErr != nil {
		return res, fmt.Errorf("loading a snapshot: %w", firstErr)
	}
	slices.Sort(res.Keys)
	return res, nil
}

// loadWriters is how many transactions Load keeps in flight: etcd's raft
// loop then applies several per round.
const loadWriters = 4

// batches splits ops into transactions within etcd's limits.
func batches(ops []op) [][]op {
	var out [][]op
	for start := 0; start < len(ops); {
		end, size := start, 0
		for end < len(ops) && end-start < maxTxnOps && (end == start || size+len(ops[end].value) <= maxTxnBytes) {
			size += len(ops[end].key) + len(ops[end].value)
			end++
		}
		out = append(out, ops[start:end])
		start = end
	}
	return out
}

// commit writes one batch, if none of its keys changed since they were read.
func commit(ctx context.Context, client *clientv3.Client, batch []op) (*clientv3.TxnResponse, error) {
	cmps := make([]clientv3.Cmp, len(batch))
	thens := make([]clientv3.Op, len(batch))
	for i, o := range batch {
		cmps[i] = clientv3.Compare(clientv3.ModRevision(o.key), "=", o.modRevision)
		if o.delete {
			thens[i] = clientv3.OpDelete(o.key)
		} else {
			thens[i] = clientv3.OpPut(o.key, string(o.value))
		}
	}
	return client.Txn(ctx).If(cmps...).Then(thens...).Commit()
}

// add counts a committed batch.
func (r *Result) add(rev int64, batch []op) {
	r.Revision = max(r.Revision, rev)
	for _, o := range batch {
		if o.delete {
			r.Deleted++
		} else {
			r.Put++
		}
		r.Keys = append(r.Keys, o.key)
	}
}

// plan merges the current keys (sorted, as etcd returns them) with the
// snapshot's: deletes first (a custom resource goes before the CRD that
// served it is put back changed), then puts, each in key order.
func plan(current []*mvccpb.KeyValue, want []KV) []op {
	var deletes, puts []op
	i, j := 0, 0
	for i < len(current) || j < len(want) {
		switch {
		case j == len(want) || (i < len(current) && string(current[i].Key) < want[j].Key):
			deletes = append(deletes, op{key: string(current[i].Key), delete: true, modRevision: current[i].ModRevision})
			i++
		case i == len(current) || want[j].Key < string(current[i].Key):
			puts = append(puts, op{key: want[j].Key, value: want[j].Value})
			j++
		default:
			cur := current[i]
			// A leased key (an event) in the snapshot's place is replaced
			// by the snapshot's lease-less value.
			if cur.Lease != 0 || !bytes.Equal(cur.Value, want[j].Value) {
				puts = append(puts, op{key: want[j].Key, value: want[j].Value, modRevision: cur.ModRevision})
			}
			i++
			j++
		}
	}
	return append(deletes, puts...)
}

// Keys under prefix, for callers that care about one resource.
func (s *Snapshot) Keys(prefix string) []KV {
	lo, _ := slices.BinarySearchFunc(s.KVs, prefix, func(kv KV, p string) int { return strings.Compare(kv.Key, p) })
	hi := lo
	for hi < len(s.KVs) && strings.HasPrefix(s.KVs[hi].Key, prefix) {
		hi++
	}
	return s.KVs[lo:hi]
}

// CRDKeys is where CustomResourceDefinitions are stored.
const CRDKeys = "/registry/apiextensions.k8s.io/customresourcedefinitions/"

// Served is a resource version an Established CRD in a snapshot serves.
type Served struct {
	Key                      string // the CRD's key
	Group, Version, Resource string
}

// ServedByCRDs lists what the snapshot's Established CRDs serve, read
// once per snapshot (a CRD's stored JSON is mostly its schema, which is
// skipped).
func (s *Snapshot) ServedByCRDs() []Served {
	s.servedOnce.Do(func() {
		for _, kv := range s.Keys(CRDKeys) {
			var crd storedCRD
			if json.Unmarshal(kv.Value, &crd) != nil || !crd.established() {
				continue // not served either way
			}
			for _, v := range crd.Spec.Versions {
				if v.Served {
					s.served = append(s.served, Served{kv.Key, crd.Spec.Group, v.Name, crd.Spec.Names.Plural})
				}
			}
		}
	})
	return s.served
}

// storedCRD is what ServedByCRDs reads of a stored CRD.
type storedCRD struct {
	Spec struct {
		Group string `json:"group"`
		Names struct {
			Plural string `json:"plural"`
		} `json:"names"`
		Versions []struct {
			Name   string `json:"name"`
			Served bool   `json:"served"`
		} `json:"versions"`
	} `json:"spec"`
	Status struct {
		Conditions []struct {
			Type   string `json:"type"`
			Status string `json:"status"`
		} `json:"conditions"`
	} `json:"status"`
}

func (c *storedCRD) established() bool {
	for _, cond := range c.Status.Conditions {
		if cond.Type == "Established" && cond.Status == "True" {
			return true
		}
	}
	return false
}
