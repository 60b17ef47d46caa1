package storage

import (
	"context"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"path"
	"reflect"
	"strings"

	"go.etcd.io/etcd/api/v3/mvccpb"
	"go.etcd.io/etcd/api/v3/v3rpc/rpctypes"
	clientv3 "go.etcd.io/etcd/client/v3"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
)

const (
	// maxEtcdPage bounds one etcd range read while a selector filters a
	// paginated list.
	maxEtcdPage = 10000
	// continueExpiredMessage is kube's wording for a continue token whose
	// revision has been compacted.
	continueExpiredMessage = "The provided continue parameter is too old to display a consistent list result. " +
		"You can start a new list without the continue parameter, or use the continue token in this response to " +
		"retrieve the remainder of the results. Continuing with the provided token results in an inconsistent list - " +
		"objects that were created, modified, or deleted between the time the first chunk was returned and now may " +
		"show up in the list."
)

// continueToken is the opaque, base64-encoded JSON continue parameter.
type continueToken struct {
	APIVersion      string `json:"v"`
	ResourceVersion int64  `json:"rv"`
	StartKey        string `json:"start"`
}

func encodeContinue(startKey, keyPrefix string, rev int64) (string, error) {
	data, err := json.Marshal(continueToken{
		APIVersion:      "meta.k8s.io/v1",
		ResourceVersion: rev,
		StartKey:        strings.TrimPrefix(startKey, keyPrefix),
	})
	if err != nil {
		return "", err
	}
	return base64.RawURLEncoding.EncodeToString(data), nil
}

// decodeContinue returns the key to resume at and the revision to read at
// (0: the current one, for tokens handed out after compaction).
func decodeContinue(token, keyPrefix string) (startKey string, rev int64, err error) {
	data, err := base64.RawURLEncoding.DecodeString(token)
	if err != nil {
		return "", 0, apierrors.NewBadRequest(fmt.Sprintf("continue key is not valid: %v", err))
	}
	var c continueToken
	if err := json.Unmarshal(data, &c); err != nil {
		return "", 0, apierrors.NewBadRequest(fmt.Sprintf("continue key is not valid: %v", err))
	}
	if c.APIVersion != "meta.k8s.io/v1" {
		return "", 0, apierrors.NewBadRequest(fmt.Sprintf("continue key is not valid: server does not recognize this encoding (%q)", c.APIVersion))
	}
	if c.StartKey == "" {
		return "", 0, apierrors.NewBadRequest("continue key is not valid: encoded start key empty")
	}
	// Refuse keys that climb out of the listed prefix.
	if cleaned := path.Clean("/" + c.StartKey); cleaned != "/"+c.StartKey {
		return "", 0, apierrors.NewBadRequest(fmt.Sprintf("continue key is not valid: %s", c.StartKey))
	}
	if c.ResourceVersion == -1 {
		return keyPrefix + c.StartKey, 0, nil
	}
	if c.ResourceVersion <= 0 {
		return "", 0, apierrors.NewBadRequest("continue key is not valid: incorrect encoded start resourceVersion")
	}
	return keyPrefix + c.StartKey, c.ResourceVersion, nil
}

// itemsSetter fills a list's Items slice without going through
// []runtime.Object: objects are decoded straight into slice elements.
type itemsSetter struct {
	items    reflect.Value // the Items slice (settable)
	elemType reflect.Type
	elemPtr  bool // []*T rather than []T
}

func newItemsSetter(listObj runtime.Object) (*itemsSetter, error) {
	itemsPtr, err := meta.GetItemsPtr(listObj)
	if err != nil {
		return nil, apierrors.NewInternalError(err)
	}
	items := reflect.ValueOf(itemsPtr).Elem()
	if items.Kind() != reflect.Slice {
		return nil, apierrors.NewInternalError(fmt.Errorf("%T Items is not a slice", listObj))
	}
	setter := &itemsSetter{items: items, elemType: items.Type().Elem()}
	switch setter.elemType.Kind() {
	case reflect.Struct:
	case reflect.Pointer:
		setter.elemPtr = true
	default:
		return nil, apierrors.NewInternalError(fmt.Errorf("%T Items of %v is not supported", listObj, setter.elemType))
	}
	return setter, nil
}

// decodeAll decodes kvs into list items, keeping those pred selects; it
// returns how many kvs it consumed (stops at limit matches, 0 = no limit).
func (s *Store) decodeAll(setter *itemsSetter, kvs []*mvccpb.KeyValue, pred SelectionPredicate,
	items reflect.Value, limit int64) (reflect.Value, int, error) {
	filter := !pred.Empty()
	if pred.GetAttrs == nil {
		pred.GetAttrs = s.cfg.GetAttrs
	}
	for i, kv := range kvs {
		if limit > 0 && int64(items.Len()) >= limit {
			return items, i, nil
		}
		var obj runtime.Object
		var elem reflect.Value
		if setter.elemPtr {
			elem = reflect.New(setter.elemType.Elem())
			obj = elem.Interface().(runtime.Object)
		} else {
			// Decode into the next slice element in place; grow first.
			if items.Len() == items.Cap() {
				items = reflect.Append(items, reflect.Zero(setter.elemType))
			} else {
				items = items.Slice(0, items.Len()+1)
				items.Index(items.Len() - 1).SetZero()
			}
			elem = items.Index(items.Len() - 1)
			obj = elem.Addr().Interface().(runtime.Object)
		}
		if err := s.decodeIntoZero(kv.Value, kv.ModRevision, nil, obj); err != nil {
			return items, i, err
		}
		matched := true
		if filter {
			var err error
			if matched, err = pred.Matches(obj); err != nil {
				return items, i, apierrors.NewInternalError(err)
			}
		}
		switch {
		case setter.elemPtr && matched:
			items = reflect.Append(items, elem)
		case !setter.elemPtr && !matched:
			items = items.Slice(0, items.Len()-1)
		}
	}
	return items, len(kvs), nil
}

// GetList implements Interface.
func (s *Store) GetList(ctx context.Context, key string, opts ListOptions, listObj runtime.Object) error {
	setter, err := newItemsSetter(listObj)
	if err != nil {
		return err
	}
	listAcc, err := meta.ListAccessor(listObj)
	if err != nil {
		return apierrors.NewInternalError(err)
	}
	pred := opts.Predicate
	minRev, err := parseResourceVersion(opts.ResourceVersion)
	if err != nil {
		return err
	}
	if !opts.Recursive {
		return s.getSingleAsList(ctx, key, opts, minRev, setter, listAcc)
	}
	keyPrefix := key
	if !strings.HasSuffix(keyPrefix, "/") {
		keyPrefix += "/"
	}
	startKey := keyPrefix
	prefixEnd := clientv3.GetPrefixRangeEnd(keyPrefix)
	var readRev int64
	var readOpts []clientv3.OpOption
	switch {
	case pred.Continue != "":
		if minRev > 0 {
			return apierrors.NewBadRequest("specifying resource version is not allowed when using continue")
		}
		if startKey, readRev, err = decodeContinue(pred.Continue, keyPrefix); err != nil {
			return err
		}
	case opts.ResourceVersionMatch == metav1.ResourceVersionMatchExact:
		if minRev == 0 {
			return apierrors.NewBadRequest("resourceVersionMatch=Exact requires a non-zero resourceVersion")
		}
		readRev = minRev
	case opts.ResourceVersion == "0":
		readOpts = append(readOpts, clientv3.WithSerializable())
	}

	limit := pred.Limit
	fetch := limit
	items := setter.items.Slice(0, 0)
	var (
		hasMore   bool
		remaining int64 = -1 // unknown
		nextKey   string
	)
	for {
		// A read ends at the prefix's end, or where the cache says fetch+1
		// keys end: its More then tells whether the page is the last.
		end := prefixEnd
		if opts.keys != nil && fetch > 0 {
			if e := opts.keys.pageEnd(startKey, prefixEnd, fetch+1); e != "" {
				end = e
			}
		}
		// With the page full, a read past a bounded range only asks
		// whether anything is left.
		probe := limit > 0 && int64(items.Len()) >= limit
		pageOpts := append(readOpts[:len(readOpts):len(readOpts)], clientv3.WithRange(end))
		switch {
		case probe:
			pageOpts = append(pageOpts, clientv3.WithLimit(1), clientv3.WithKeysOnly())
		case fetch > 0:
			pageOpts = append(pageOpts, clientv3.WithLimit(fetch))
		}
		if readRev > 0 {
			pageOpts = append(pageOpts, clientv3.WithRev(readRev))
		}
		resp, err := s.client.Get(ctx, startKey, pageOpts...)
		if err != nil {
			return s.listError(err, pred.Continue, keyPrefix, startKey, readRev)
		}
		if readRev == 0 {
			// Later pages and the continue token read this same revision.
			readRev = resp.Header.Revision
			if err := s.ensureMinimumRevision(ctx, minRev, readRev); err != nil {
				return err
			}
		}
		if probe {
			if len(resp.Kvs) > 0 {
				hasMore, nextKey = true, string(resp.Kvs[0].Key)
				break
			}
			if end == prefixEnd {
				break
			}
			startKey = end
			continue
		}
		if items.Cap() == 0 && len(resp.Kvs) > 0 {
			items = reflect.MakeSlice(setter.items.Type(), 0, len(resp.Kvs))
		}
		var consumed int
		if items, consumed, err = s.decodeAll(setter, resp.Kvs, pred, items, limit); err != nil {
			return err
		}
		if consumed < len(resp.Kvs) {
			// Limit reached inside this page.
			hasMore, nextKey = true, string(resp.Kvs[consumed].Key)
			if end == prefixEnd {
				remaining = resp.Count - int64(consumed)
			}
			break
		}
		if !resp.More || len(resp.Kvs) == 0 {
			if end == prefixEnd {
				break
			}
			// The cache's count ran ahead of this revision's keys: read on.
			startKey = end
			continue
		}
		lastKey := string(resp.Kvs[len(resp.Kvs)-1].Key)
		if limit > 0 && int64(items.Len()) >= limit {
			hasMore, nextKey = true, lastKey+"\x00"
			if end == prefixEnd {
				remaining = resp.Count - int64(len(resp.Kvs))
			}
			break
		}
		startKey = lastKey + "\x00"
		// A selector is thinning the pages: read bigger ones.
		if fetch > 0 && fetch < maxEtcdPage {
			fetch *= 2
			if fetch > maxEtcdPage {
				fetch = maxEtcdPage
			}
		}
	}
	if hasMore && remaining < 0 && pred.Empty() {
		// Bounded reads count only their range: the rest of the revision's
		// keys are the cache's count, or etcd's (which visits them all).
		if opts.keys != nil {
			remaining = opts.keys.keysIn(ctx, readRev, nextKey, prefixEnd)
		}
		if remaining < 0 {
			resp, err := s.client.Get(ctx, nextKey, clientv3.WithRange(prefixEnd), clientv3.WithCountOnly(), clientv3.WithRev(readRev))
			if err != nil {
				return s.listError(err, pred.Continue, keyPrefix, nextKey, readRev)
			}
			remaining = resp.Count
		}
	}
	setter.items.Set(items)
	listAcc.SetResourceVersion(fmt.Sprint(readRev))
	listAcc.SetContinue("")
	listAcc.SetRemainingItemCount(nil)
	if hasMore {
		token, err := encodeContinue(nextKey, keyPrefix, readRev)
		if err != nil {
			return apierrors.NewInternalError(err)
		}
		listAcc.SetContinue(token)
		if pred.Empty() && remaining > 0 {
			listAcc.SetRemainingItemCount(&remaining)
		}
	}
	return nil
}

// listError maps a range error; a compacted continue revision gets kube's
// 410 with a token that resumes at the latest revision instead.
func (s *Store) listError(err error, continueParam, keyPrefix, startKey string, rev int64) error {
	if !errors.Is(err, rpctypes.ErrCompacted) {
		return s.etcdError(err, keyPrefix)
	}
	if continueParam != "" {
		status := apierrors.NewResourceExpired(continueExpiredMessage)
		if token, tokenErr := encodeContinue(startKey, keyPrefix, -1); tokenErr == nil {
			status.ErrStatus.ListMeta.Continue = token
		}
		return status
	}
	return tooOldResourceVersionError(rev, 0)
}

// getSingleAsList serves a non-recursive list: the one object at key.
func (s *Store) getSingleAsList(ctx context.Context, key string, opts ListOptions, minRev int64,
	setter *itemsSetter, listAcc metav1.ListInterface) error {
	var getOpts []clientv3.OpOption
	if opts.ResourceVersionMatch == metav1.ResourceVersionMatchExact && minRev > 0 {
		getOpts = append(getOpts, clientv3.WithRev(minRev))
	}
	resp, err := s.client.Get(ctx, key, getOpts...)
	if err != nil {
		return s.listError(err, "", key, key, minRev)
	}
	if len(getOpts) == 0 {
		if err := s.ensureMinimumRevision(ctx, minRev, resp.Header.Revision); err != nil {
			return err
		}
	}
	items := reflect.MakeSlice(setter.items.Type(), 0, len(resp.Kvs))
	if items, _, err = s.decodeAll(setter, resp.Kvs, opts.Predicate, items, 0); err != nil {
		return err
	}
	setter.items.Set(items)
	rev := resp.Header.Revision
	if len(getOpts) > 0 {
		rev = minRev
	}
	listAcc.SetResourceVersion(fmt.Sprint(rev))
	listAcc.SetContinue("")
	listAcc.SetRemainingItemCount(nil)
	return nil
}
