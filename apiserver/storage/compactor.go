package storage

import (
	"context"
	"errors"
	"log/slog"
	"strconv"
	"time"

	"go.etcd.io/etcd/api/v3/v3rpc/rpctypes"
	clientv3 "go.etcd.io/etcd/client/v3"
	"k8s.io/apimachinery/pkg/api/meta"
)

// compactRevKey coordinates compaction between replicas sharing one etcd:
// its Version counts compaction rounds, and only the replica whose
// compare-and-swap on it succeeds compacts in a round.
const compactRevKey = "compact_rev_key"

// StartCompactor compacts etcd every interval to the revision seen one
// interval earlier, so watchers and continue tokens get at least one
// interval of history. It returns at once; the loop stops with ctx.
func StartCompactor(ctx context.Context, client *clientv3.Client, interval time.Duration, logger *slog.Logger) {
	if logger == nil {
		logger = slog.Default()
	}
	go func() {
		var round, rev int64
		ticker := time.NewTicker(interval)
		defer ticker.Stop()
		for {
			select {
			case <-ctx.Done():
				return
			case <-ticker.C:
			}
			nextRound, nextRev, err := compactRound(ctx, client, round, rev)
			if err != nil {
				if ctx.Err() == nil {
					logger.Warn("etcd compaction failed", "revision", rev, "error", err)
				}
				continue
			}
			round, rev = nextRound, nextRev
		}
	}()
}

// compactRound claims round (the version of compactRevKey this replica last
// saw) and, if it wins, compacts to rev. It returns the round and revision to
// use next time.
func compactRound(ctx context.Context, client *clientv3.Client, round, rev int64) (int64, int64, error) {
	resp, err := client.Txn(ctx).
		If(clientv3.Compare(clientv3.Version(compactRevKey), "=", round)).
		Then(clientv3.OpPut(compactRevKey, strconv.FormatInt(rev, 10))).
		Else(clientv3.OpGet(compactRevKey)).Commit()
	if err != nil {
		return round, rev, err
	}
	current := resp.Header.Revision
	if !resp.Succeeded {
		// Another replica compacts this round; follow its count.
		kvs := resp.Responses[0].GetResponseRange().Kvs
		if len(kvs) == 0 {
			return 0, current, nil // the key was deleted: start counting again
		}
		return kvs[0].Version, current, nil
	}
	if rev > 0 {
		if _, err := client.Compact(ctx, rev); err != nil && !errors.Is(err, rpctypes.ErrCompacted) {
			return round + 1, current, err
		}
	}
	return round + 1, current, nil
}

// CompactNow compacts etcd at its current revision (after a write to
// compactRevKey, so everything read before the call is compacted away) and
// returns that revision.
func CompactNow(ctx context.Context, client *clientv3.Client) (int64, error) {
	resp, err := client.Put(ctx, compactRevKey, "now")
	if err != nil {
		return 0, err
	}
	rev := resp.Header.Revision
	if _, err := client.Compact(ctx, rev); err != nil && !errors.Is(err, rpctypes.ErrCompacted) {
		return 0, err
	}
	return rev, nil
}

func listResourceVersion(list any) (int64, error) {
	acc, err := meta.ListAccessor(list)
	if err != nil {
		return 0, err
	}
	return strconv.ParseInt(acc.GetResourceVersion(), 10, 64)
}
