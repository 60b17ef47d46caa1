package testenv

import (
	"context"
	"fmt"
	"strconv"
	"strings"
	"sync"

	clientv3 "go.etcd.io/etcd/client/v3"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/discovery"
	"k8s.io/client-go/dynamic"

	"github.com/devplane/devplane/apiserver/registry"
	"github.com/devplane/devplane/apiserver/request"
)

// Reset works on etcd keys under registryPrefix: it is where every
// resource, built-in or custom, is stored.
const (
	registryPrefix = "/registry/"
	crdPrefix      = "/registry/apiextensions.k8s.io/customresourcedefinitions/"
	// maxTxnOps stays under etcd's default limit of 128 operations.
	maxTxnOps = 100
)

// baseline is the content of etcd right after start: system namespaces,
// the kubernetes Service and its endpoints, IP allocations, bootstrap
// policy and the harness's webhook configurations.
type baseline struct {
	keys map[string]baseValue
}

type baseValue struct {
	modRevision int64
	value       []byte
}

func takeBaseline(ctx context.Context, client *clientv3.Client) (*baseline, error) {
	resp, err := client.Get(ctx, registryPrefix, clientv3.WithPrefix())
	if err != nil {
		return nil, fmt.Errorf("reading the baseline: %w", err)
	}
	b := &baseline{keys: map[string]baseValue{}}
	for _, kv := range resp.Kvs {
		// Keys with a lease (events) expire on their own; never restore them.
		if kv.Lease == 0 {
			b.keys[string(kv.Key)] = baseValue{kv.ModRevision, kv.Value}
		}
	}
	return b, nil
}

// Reset brings the API back to how it was right after Start, in
// milliseconds: every object created since is deleted (every non-system
// namespace with all its content, objects in system namespaces, cluster
// objects) and every changed or deleted start-up object (system
// namespaces, the kubernetes Service and Endpoints, bootstrap objects) is
// restored. Finalizers are not run: objects go at once. keepCRDs keeps the
// CustomResourceDefinitions (but not their objects). Reset returns once the
// server's watch caches have seen the change, so a list right after
// Reset is already clean; informers see DELETED events.
func (i *Instance) Reset(ctx context.Context, keepCRDs bool) error {
	client := i.cp.Etcd.Client()
	resp, err := client.Get(ctx, registryPrefix, clientv3.WithPrefix(), clientv3.WithKeysOnly())
	if err != nil {
		return fmt.Errorf("testenv: reset: %w", err)
	}
	present := map[string]bool{}
	var deletes []clientv3.Op
	var restores []clientv3.Op
	var touched []string
	var runStart, runEnd []byte
	flush := func() {
		if runStart != nil {
			// One range delete per run of consecutive doomed keys.
			deletes = append(deletes, clientv3.OpDelete(string(runStart), clientv3.WithRange(string(append(runEnd, 0)))))
			runStart, runEnd = nil, nil
		}
	}
	for _, kv := range resp.Kvs {
		key := string(kv.Key)
		present[key] = true
		base, inBaseline := i.baseline.keys[key]
		switch {
		case keepCRDs && strings.HasPrefix(key, crdPrefix):
			flush()
		case inBaseline:
			flush()
			if kv.ModRevision != base.modRevision {
				restores = append(restores, clientv3.OpPut(key, string(base.value)))
				touched = append(touched, key)
			}
		default:
			if runStart == nil {
				runStart = kv.Key
			}
			runEnd = kv.Key
			touched = append(touched, key)
		}
	}
	flush()
	for key, base := range i.baseline.keys {
		if !present[key] {
			restores = append(restores, clientv3.OpPut(key, string(base.value)))
			touched = append(touched, key)
		}
	}
	if len(touched) == 0 {
		return nil
	}
	rev := resp.Header.Revision
	// Deletes first: a put may not overlap a delete range in one txn.
	for _, ops := range [][]clientv3.Op{deletes, restores} {
		for start := 0; start < len(ops); start += maxTxnOps {
			end := min(start+maxTxnOps, len(ops))
			tr, err := client.Txn(ctx).Then(ops[start:end]...).Commit()
			if err != nil {
				return fmt.Errorf("testenv: reset: %w", err)
			}
			rev = tr.Header.Revision
		}
	}
	// Restored baseline objects get their new resourceVersion from etcd,
	// so the baseline follows them. Only those: everything else now in
	// etcd (CRDs kept by keepCRDs) was not there at Start, and a later
	// Reset must still delete it.
	if len(restores) > 0 {
		fresh, err := takeBaseline(ctx, client)
		if err != nil {
			return fmt.Errorf("testenv: reset: %w", err)
		}
		for key := range fresh.keys {
			if _, atStart := i.baseline.keys[key]; !atStart {
				delete(fresh.keys, key)
			}
		}
		i.baseline = fresh
	}
	return i.waitForCaches(ctx, rev, touched)
}

// waitForCaches returns once every watch cache holding a touched key has
// seen revision rev: a list at resourceVersion rev (NotOlderThan) waits
// for exactly that.
func (i *Instance) waitForCaches(ctx context.Context, rev int64, touched []string) error {
	ctx = request.WithUser(ctx, &request.User{Name: "system:apiserver", Groups: []string{"system:masters"}})
	stores := map[*registry.Store]bool{}
	for _, res := range i.cp.CoreRegistry.Resources() {
		if res.Store != nil { // virtual resources (reviews) store nothing
			stores[res.Store] = false
		}
	}
	others := map[schema.GroupResource]bool{}
	for _, key := range touched {
		if s := coreStoreOf(stores, key); s != nil {
			stores[s] = true
		} else if gr, ok := groupResourceOf(key); ok {
			others[gr] = true
		}
	}
	opts := metav1.ListOptions{
		ResourceVersion:      strconv.FormatInt(rev, 10),
		ResourceVersionMatch: metav1.ResourceVersionMatchNotOlderThan,
		// Nothing matches: only the wait matters, not the items.
		LabelSelector: "testenv.devplane.dev/reset-probe=none",
	}
	var wg sync.WaitGroup
	var mu sync.Mutex
	var errs []error
	for s, used := range stores {
		if !used {
			continue
		}
		wg.Go(func() {
			if _, err := s.List(ctx, "", opts); err != nil {
				mu.Lock()
				errs = append(errs, fmt.Errorf("%s: %w", s.Resource, err))
				mu.Unlock()
			}
		})
	}
	wg.Wait()
	if len(errs) > 0 {
		return fmt.Errorf("testenv: reset: waiting for watch caches: %v", errs)
	}
	if len(others) > 0 {
		return i.waitForServedCaches(ctx, opts, others)
	}
	return nil
}

// coreStoreOf finds the built-in store whose prefix holds key.
func coreStoreOf(stores map[*registry.Store]bool, key string) *registry.Store {
	for s := range stores {
		if strings.HasPrefix(key, s.KeyPrefix+"/") {
			return s
		}
	}
	return nil
}

// groupResourceOf parses /registry/<group>/<resource>/... (custom
// resources and CRDs).
func groupResourceOf(key string) (schema.GroupResource, bool) {
	parts := strings.SplitN(strings.TrimPrefix(key, registryPrefix), "/", 3)
	if len(parts) < 3 || !strings.Contains(parts[0], ".") {
		return schema.GroupResource{}, false
	}
	return schema.GroupResource{Group: parts[0], Resource: parts[1]}, true
}

// waitForServedCaches does the same wait through the API for resources
// other servers (the extensions server) cache. A resource that is gone
// (its CRD was deleted) has nothing to wait for.
func (i *Instance) waitForServedCaches(ctx context.Context, opts metav1.ListOptions, grs map[schema.GroupResource]bool) error {
	dc, err := discovery.NewDiscoveryClientForConfig(i.Config())
	if err != nil {
		return err
	}
	groups, err := dc.ServerGroups()
	if err != nil {
		return fmt.Errorf("testenv: reset: discovery: %w", err)
	}
	dyn, err := dynamic.NewForConfig(i.Config())
	if err != nil {
		return err
	}
	for gr := range grs {
		for _, g := range groups.Groups {
			if g.Name != gr.Group {
				continue
			}
			gvr := gr.WithVersion(g.PreferredVersion.Version)
			_, err := dyn.Resource(gvr).List(ctx, opts)
			if err != nil && !apierrors.IsNotFound(err) {
				return fmt.Errorf("testenv: reset: waiting for %s: %w", gvr, err)
			}
		}
	}
	return nil
}
