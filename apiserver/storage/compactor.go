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

// CompactorOptions say how much etcd history to keep.
type CompactorOptions struct {
	// Interval is how often to compact.
	Interval time.Duration
	// Retention is how long a revision is kept at least (one interval when
	// it is shorter).
	Retention time.Duration
	// MaxRevisions, when > 0, bounds the revisions kept, whatever their age
	// (checked once an interval): the database stays well within etcd's
	// quota under a sustained write load.
	MaxRevisions int64
	Logger       *slog.Logger
}

// StartCompactor compacts etcd every interval to the newest revision it
// saw at least retention earlier, or to the one that keeps MaxRevisions if
// that is newer, so watchers, continue tokens and object history get that
// much of it. It returns at once; the loop stops with ctx.
func StartCompactor(ctx context.Context, client *clientv3.Client, opts CompactorOptions) {
	logger := opts.Logger
	if logger == nil {
		logger = slog.Default()
	}
	retention := max(opts.Retention, opts.Interval)
	go func() {
		var round int64
		var seen revisionsSeen
		ticker := time.NewTicker(opts.Interval)
		defer ticker.Stop()
		for {
			select {
			case <-ctx.Done():
				return
			case <-ticker.C:
			}
			now := time.Now()
			target := seen.before(now.Add(-retention))
			if opts.MaxRevisions > 0 {
				if current, err := currentRevision(ctx, client); err == nil {
					target = max(target, current-opts.MaxRevisions)
				}
			}
			nextRound, current, err := compactRound(ctx, client, round, target)
			if err != nil {
				if ctx.Err() == nil {
					logger.Warn("etcd compaction failed", "revision", target, "error", err)
				}
				continue
			}
			round = nextRound
			seen.add(now, current)
		}
	}()
}

// revisionsSeen are the revisions the compactor saw, oldest first, with
// when it saw them: a retention of an hour at a five-minute interval
// keeps about twelve.
type revisionsSeen []revisionSeen

type revisionSeen struct {
	at  time.Time
	rev int64
}

func (s *revisionsSeen) add(at time.Time, rev int64) {
	*s = append(*s, revisionSeen{at: at, rev: rev})
}

// before is the newest revision seen at or before t (0: none), forgetting
// the older ones: compaction never goes back.
func (s *revisionsSeen) before(t time.Time) int64 {
	n := 0
	for n < len(*s) && !(*s)[n].at.After(t) {
		n++
	}
	if n == 0 {
		return 0
	}
	rev := (*s)[n-1].rev
	*s = append((*s)[:0], (*s)[n:]...)
	return rev
}

// compactRound claims round (the version of compactRevKey this replica last
// saw) and, if it wins, compacts to rev (0: not yet). It returns the
// round to claim next time and the current revision.
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
