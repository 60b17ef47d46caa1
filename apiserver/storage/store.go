package storage

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"sync"
	"time"
	"unsafe"

	"go.etcd.io/etcd/api/v3/mvccpb"
	"go.etcd.io/etcd/api/v3/v3rpc/rpctypes"
	clientv3 "go.etcd.io/etcd/client/v3"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
)

// Store implements Interface directly on etcd. It is safe for concurrent use.
type Store struct {
	client *clientv3.Client
	cfg    Config
	leases *leaseManager
}

var _ Interface = (*Store)(nil)

// NewStore returns a Store for one resource. Keys passed to its methods are
// full etcd keys (cfg.ResourcePrefix + "/" + ns + "/" + name).
func NewStore(client *clientv3.Client, cfg Config) *Store {
	return &Store{client: client, cfg: cfg, leases: &leaseManager{client: client}}
}

// Config returns the resource's storage configuration.
func (s *Store) Config() Config { return s.cfg }

// Client returns the etcd client the Store writes through.
func (s *Store) Client() *clientv3.Client { return s.client }

// Create implements Interface.
func (s *Store) Create(ctx context.Context, key string, obj, out runtime.Object, ttl int64) error {
	acc, err := meta.Accessor(obj)
	if err != nil {
		return apierrors.NewInternalError(err)
	}
	name := acc.GetName()
	if name == "" {
		name = nameFromKey(key)
	}
	if acc.GetResourceVersion() != "" {
		return apierrors.NewBadRequest("resourceVersion should not be set on objects to be created")
	}
	data, err := s.encode(obj)
	if err != nil {
		return err
	}
	var putOpts []clientv3.OpOption
	if ttl > 0 {
		leaseID, err := s.leases.leaseFor(ctx, ttl)
		if err != nil {
			return s.etcdError(err, key)
		}
		putOpts = append(putOpts, clientv3.WithLease(leaseID))
	}
	resp, err := s.client.Txn(ctx).
		If(clientv3.Compare(clientv3.CreateRevision(key), "=", 0)).
		Then(clientv3.OpPut(key, asString(data), putOpts...)).
		Commit()
	if err != nil {
		return s.etcdError(err, key)
	}
	if !resp.Succeeded {
		return apierrors.NewAlreadyExists(s.cfg.Resource, name)
	}
	if out != nil {
		return s.decodeInto(data, resp.Header.Revision, out)
	}
	return nil
}

// Get implements Interface. ResourceVersion "0" is a serializable read; any
// other value a linearizable one, checked against the requested minimum.
func (s *Store) Get(ctx context.Context, key string, opts GetOptions, out runtime.Object) error {
	return s.get(ctx, key, opts, out, nil)
}

// get is Get with like, an object the stored one likely revises (see
// Config.Decode).
func (s *Store) get(ctx context.Context, key string, opts GetOptions, out, like runtime.Object) error {
	minRev, err := parseResourceVersion(opts.ResourceVersion)
	if err != nil {
		return err
	}
	var getOpts []clientv3.OpOption
	if opts.ResourceVersion == "0" {
		getOpts = append(getOpts, clientv3.WithSerializable())
	}
	resp, err := s.client.Get(ctx, key, getOpts...)
	if err != nil {
		return s.etcdError(err, key)
	}
	if err := s.ensureMinimumRevision(ctx, minRev, resp.Header.Revision); err != nil {
		return err
	}
	if len(resp.Kvs) == 0 {
		if opts.IgnoreNotFound {
			return runtime.SetZeroValue(out)
		}
		return apierrors.NewNotFound(s.cfg.Resource, nameFromKey(key))
	}
	kv := resp.Kvs[0]
	return s.decodeLike(kv.Value, kv.ModRevision, like, out)
}

// CurrentRevision implements Interface with a linearizable count-only read.
func (s *Store) CurrentRevision(ctx context.Context) (int64, error) {
	return currentRevision(ctx, s.client)
}

func currentRevision(ctx context.Context, client *clientv3.Client) (int64, error) {
	resp, err := client.Get(ctx, compactRevKey, clientv3.WithCountOnly())
	if err != nil {
		return 0, apierrors.NewInternalError(err)
	}
	return resp.Header.Revision, nil
}

// objectState is one read of a key: decoded object plus what the
// compare-and-swap needs.
type objectState struct {
	obj     runtime.Object
	data    []byte
	rev     int64
	lease   int64
	missing bool
}

func (s *Store) stateFromKVs(kvs []*mvccpb.KeyValue, key string, like runtime.Object) (*objectState, error) {
	state := &objectState{obj: s.cfg.NewFunc()}
	if len(kvs) == 0 {
		state.missing = true
		return state, nil
	}
	kv := kvs[0]
	state.data, state.rev, state.lease = kv.Value, kv.ModRevision, kv.Lease
	if err := s.decodeLike(kv.Value, kv.ModRevision, like, state.obj); err != nil {
		return nil, err
	}
	return state, nil
}

func (s *Store) readState(ctx context.Context, key string, like runtime.Object) (*objectState, error) {
	resp, err := s.client.Get(ctx, key)
	if err != nil {
		return nil, s.etcdError(err, key)
	}
	return s.stateFromKVs(resp.Kvs, key, like)
}

// GuaranteedUpdate implements Interface.
func (s *Store) GuaranteedUpdate(ctx context.Context, key string, out runtime.Object, ignoreNotFound bool,
	preconditions *Preconditions, tryUpdate UpdateFunc) error {
	return s.guaranteedUpdate(ctx, key, out, ignoreNotFound, preconditions, tryUpdate, nil, nil)
}

// guaranteedUpdate is GuaranteedUpdate with like, an object the stored one
// likely revises (see Config.Decode), and cached, the watch cache's state
// of key (nil: none), tried before reading etcd as kube does. It is nearly
// always current; when it is not, the revision compare fails and the
// transaction's Else read brings the current state, and a precondition,
// update or no-op decided on it is decided again on a fresh read.
func (s *Store) guaranteedUpdate(ctx context.Context, key string, out runtime.Object, ignoreNotFound bool,
	preconditions *Preconditions, tryUpdate UpdateFunc, like runtime.Object, cached *objectState) error {
	name := nameFromKey(key)
	state, current, err := s.firstState(ctx, key, like, cached)
	if err != nil {
		return err
	}
	for {
		if err := ctx.Err(); err != nil {
			return apierrors.NewTimeoutError(fmt.Sprintf("update of %s gave up: %v", name, err), 1)
		}
		if state.missing && !ignoreNotFound {
			return apierrors.NewNotFound(s.cfg.Resource, name)
		}
		updated, err := s.tryOn(name, state, preconditions, tryUpdate)
		if err != nil && current {
			return err
		}
		var data []byte
		if err == nil {
			data, err = s.encode(updated)
			if err != nil {
				return err
			}
		}
		if err != nil || (!state.missing && bytes.Equal(data, state.data)) {
			if !current { // decided on the cache's state: decide again on etcd's
				if state, err = s.readState(ctx, key, like); err != nil {
					return err
				}
				current = true
				continue
			}
			// Nothing changed: no write, the object keeps its revision.
			return s.decodeLike(state.data, state.rev, like, out)
		}
		var cmp clientv3.Cmp
		var putOpts []clientv3.OpOption
		if state.missing {
			cmp = clientv3.Compare(clientv3.CreateRevision(key), "=", 0)
		} else {
			cmp = clientv3.Compare(clientv3.ModRevision(key), "=", state.rev)
			if state.lease != 0 {
				// Keep the TTL an object was created with.
				putOpts = append(putOpts, clientv3.WithIgnoreLease())
			}
		}
		resp, err := s.client.Txn(ctx).If(cmp).
			Then(clientv3.OpPut(key, asString(data), putOpts...)).
			Else(clientv3.OpGet(key)).Commit()
		if err != nil {
			return s.etcdError(err, key)
		}
		if resp.Succeeded {
			return s.decodeLike(data, resp.Header.Revision, like, out)
		}
		// Lost a race (or the cache was behind): retry against the value
		// that won.
		if state, err = s.stateFromKVs(resp.Responses[0].GetResponseRange().Kvs, key, like); err != nil {
			return err
		}
		current = true
	}
}

// firstState is cached when there is one (current false: a cached state
// may be behind etcd), else etcd's state of key.
func (s *Store) firstState(ctx context.Context, key string, like runtime.Object, cached *objectState) (state *objectState, current bool, err error) {
	if cached != nil {
		return cached, false, nil
	}
	state, err = s.readState(ctx, key, like)
	return state, true, err
}

// tryOn checks preconditions against state and applies tryUpdate to it.
func (s *Store) tryOn(name string, state *objectState, preconditions *Preconditions, tryUpdate UpdateFunc) (runtime.Object, error) {
	if err := preconditions.check(s.cfg.Resource, name, state.obj); err != nil {
		return nil, err
	}
	updated, err := tryUpdate(state.obj)
	if err != nil {
		return nil, asAPIError(err)
	}
	return updated, nil
}

// stateOf is the objectState of obj, which the caller gives up, as etcd
// would hold it at rev with lease: for an update or delete to try first.
func (s *Store) stateOf(obj runtime.Object, rev, lease int64) (*objectState, error) {
	data, err := s.encode(obj) // clears resourceVersion, as stored
	if err != nil {
		return nil, err
	}
	if err := setResourceVersion(obj, rev); err != nil {
		return nil, err
	}
	return &objectState{obj: obj, data: data, rev: rev, lease: lease}, nil
}

// Delete implements Interface. out gets the last state with the deletion
// revision as its resourceVersion.
func (s *Store) Delete(ctx context.Context, key string, out runtime.Object, preconditions *Preconditions,
	validateDeletion func(ctx context.Context, obj runtime.Object) error) error {
	return s.delete(ctx, key, out, preconditions, validateDeletion, nil)
}

// delete is Delete given cached, the watch cache's state of key (nil:
// none), tried first as in guaranteedUpdate.
func (s *Store) delete(ctx context.Context, key string, out runtime.Object, preconditions *Preconditions,
	validateDeletion func(ctx context.Context, obj runtime.Object) error, cached *objectState) error {
	name := nameFromKey(key)
	state, current, err := s.firstState(ctx, key, nil, cached)
	if err != nil {
		return err
	}
	for {
		if state.missing {
			return apierrors.NewNotFound(s.cfg.Resource, name)
		}
		err := preconditions.check(s.cfg.Resource, name, state.obj)
		if err == nil && validateDeletion != nil {
			if err = validateDeletion(ctx, state.obj); err != nil {
				err = asAPIError(err)
			}
		}
		if err != nil {
			if current {
				return err
			}
			if state, err = s.readState(ctx, key, nil); err != nil {
				return err
			}
			current = true
			continue
		}
		resp, err := s.client.Txn(ctx).
			If(clientv3.Compare(clientv3.ModRevision(key), "=", state.rev)).
			Then(clientv3.OpDelete(key)).
			Else(clientv3.OpGet(key)).Commit()
		if err != nil {
			return s.etcdError(err, key)
		}
		if resp.Succeeded {
			if out == nil {
				return nil
			}
			return s.decodeInto(state.data, resp.Header.Revision, out)
		}
		if state, err = s.stateFromKVs(resp.Responses[0].GetResponseRange().Kvs, key, nil); err != nil {
			return err
		}
		current = true
	}
}

func (p *Preconditions) check(resource schema.GroupResource, name string, obj runtime.Object) error {
	if p == nil {
		return nil
	}
	acc, err := meta.Accessor(obj)
	if err != nil {
		return apierrors.NewInternalError(err)
	}
	if p.UID != nil && *p.UID != acc.GetUID() {
		return apierrors.NewConflict(resource, name,
			fmt.Errorf("Precondition failed: UID in precondition: %v, UID in object meta: %v", *p.UID, acc.GetUID()))
	}
	if p.ResourceVersion != nil && *p.ResourceVersion != acc.GetResourceVersion() {
		return apierrors.NewConflict(resource, name,
			fmt.Errorf("the object has been modified; please apply your changes to the latest version and try again"))
	}
	return nil
}

// asString is data as a string without copying it: clientv3.OpPut copies
// the value into its request anyway, and data does not change meanwhile.
func asString(data []byte) string { return unsafe.String(unsafe.SliceData(data), len(data)) }

// encode clears resourceVersion (it lives in etcd's mod revision) and
// serialises obj with the resource's codec.
func (s *Store) encode(obj runtime.Object) ([]byte, error) {
	acc, err := meta.Accessor(obj)
	if err != nil {
		return nil, apierrors.NewInternalError(err)
	}
	acc.SetResourceVersion("")
	acc.SetSelfLink("")
	if s.cfg.Encode != nil {
		if data, handled, err := s.cfg.Encode(obj); handled {
			if err != nil {
				return nil, apierrors.NewInternalError(err)
			}
			return data, nil
		}
	}
	data, err := runtime.Encode(s.cfg.Codec, obj)
	if err != nil {
		return nil, apierrors.NewInternalError(err)
	}
	return data, nil
}

// decodeInto decodes stored bytes into into and sets its resourceVersion.
func (s *Store) decodeInto(data []byte, rev int64, into runtime.Object) error {
	return s.decodeLike(data, rev, nil, into)
}

// decodeLike is decodeInto given like (nil: none), an object data likely
// revises, for Config.Decode.
func (s *Store) decodeLike(data []byte, rev int64, like, into runtime.Object) error {
	if err := runtime.SetZeroValue(into); err != nil {
		return apierrors.NewInternalError(err)
	}
	return s.decodeIntoZero(data, rev, like, into)
}

// decodeIntoZero is decodeLike for an object known to be empty.
func (s *Store) decodeIntoZero(data []byte, rev int64, like, into runtime.Object) error {
	if s.cfg.Decode != nil {
		handled, err := s.cfg.Decode(data, like, into)
		if err != nil {
			return apierrors.NewInternalError(fmt.Errorf("decoding %s: %w", s.cfg.Resource, err))
		}
		if handled {
			return setResourceVersion(into, rev)
		}
	}
	got, _, err := s.cfg.Codec.Decode(data, nil, into)
	if err != nil {
		return apierrors.NewInternalError(fmt.Errorf("decoding %s: %w", s.cfg.Resource, err))
	}
	if got != into {
		return apierrors.NewInternalError(fmt.Errorf("decoding %s: got %T, want %T", s.cfg.Resource, got, into))
	}
	return setResourceVersion(into, rev)
}

func setResourceVersion(obj runtime.Object, rev int64) error {
	acc, err := meta.Accessor(obj)
	if err != nil {
		return apierrors.NewInternalError(err)
	}
	acc.SetResourceVersion(strconv.FormatInt(rev, 10))
	return nil
}

// ensureMinimumRevision turns "at least revision N" into an error when etcd
// has not reached N after a short wait (N from another replica may be only
// just committed).
func (s *Store) ensureMinimumRevision(ctx context.Context, minRev, current int64) error {
	if minRev <= current {
		return nil
	}
	deadline := time.Now().Add(500 * time.Millisecond)
	for time.Now().Before(deadline) {
		time.Sleep(20 * time.Millisecond)
		rev, err := s.CurrentRevision(ctx)
		if err != nil {
			return err
		}
		if rev >= minRev {
			return nil
		}
		current = rev
	}
	return tooLargeResourceVersionError(minRev, current)
}

func tooLargeResourceVersionError(minRev, current int64) error {
	err := apierrors.NewTimeoutError(fmt.Sprintf("Too large resource version: %d, current: %d", minRev, current), 1)
	err.ErrStatus.Details.Causes = []metav1.StatusCause{{
		Type:    metav1.CauseTypeResourceVersionTooLarge,
		Message: "Too large resource version",
	}}
	return err
}

func tooOldResourceVersionError(rev, compacted int64) error {
	return apierrors.NewResourceExpired(fmt.Sprintf("too old resource version: %d (%d)", rev, compacted))
}

// etcdError maps an etcd client error to an API error.
func (s *Store) etcdError(err error, key string) error {
	switch {
	case errors.Is(err, rpctypes.ErrCompacted):
		return apierrors.NewResourceExpired("too old resource version: the requested revision has been compacted")
	case errors.Is(err, rpctypes.ErrFutureRev):
		return apierrors.NewTimeoutError("Too large resource version", 1)
	case errors.Is(err, context.DeadlineExceeded), errors.Is(err, context.Canceled):
		return apierrors.NewTimeoutError(fmt.Sprintf("request for %s %q did not complete: %v", s.cfg.Resource, key, err), 1)
	}
	return apierrors.NewInternalError(err)
}

// asAPIError passes API errors through and wraps anything else as a 500.
func asAPIError(err error) error {
	var status apierrors.APIStatus
	if errors.As(err, &status) {
		return err
	}
	return apierrors.NewInternalError(err)
}

func parseResourceVersion(rv string) (int64, error) {
	if rv == "" {
		return 0, nil
	}
	n, err := strconv.ParseInt(rv, 10, 64)
	if err != nil || n < 0 {
		return 0, apierrors.NewBadRequest(fmt.Sprintf("invalid resource version: %q", rv))
	}
	return n, nil
}

func nameFromKey(key string) string {
	return key[strings.LastIndexByte(key, '/')+1:]
}

// leaseManager shares one etcd lease between objects created around the
// same time with similar TTLs (events), so a burst of events does not grant
// thousands of leases.
type leaseManager struct {
	client *clientv3.Client

	mu            sync.Mutex
	leaseID       clientv3.LeaseID
	leaseTTL      int64
	leaseExpireAt time.Time
}

// leaseFor returns a lease that expires no earlier than ttl seconds from now
// and at most 5% (capped at a minute) later.
func (l *leaseManager) leaseFor(ctx context.Context, ttl int64) (clientv3.LeaseID, error) {
	slack := ttl / 20
	if slack > 60 {
		slack = 60
	}
	now := time.Now()
	l.mu.Lock()
	defer l.mu.Unlock()
	earliest := now.Add(time.Duration(ttl) * time.Second)
	latest := now.Add(time.Duration(ttl+slack) * time.Second)
	if l.leaseID != 0 && !l.leaseExpireAt.Before(earliest) && !l.leaseExpireAt.After(latest) {
		return l.leaseID, nil
	}
	resp, err := l.client.Grant(ctx, ttl+slack)
	if err != nil {
		return 0, err
	}
	l.leaseID, l.leaseTTL, l.leaseExpireAt = resp.ID, ttl+slack, now.Add(time.Duration(ttl+slack)*time.Second)
	return resp.ID, nil
}
