package storage

import (
	"context"
	"errors"
	"log/slog"
	"strconv"
	"testing"
	"time"

	"go.etcd.io/etcd/api/v3/v3rpc/rpctypes"
	clientv3 "go.etcd.io/etcd/client/v3"
)

func TestCompactorCompactsOneIntervalBehind(t *testing.T) {
	ctx, cancel := context.WithCancel(testContext(t))
	defer cancel()
	key := testConfig(t).ResourcePrefix + "/compactme"
	put, err := testClient.Put(ctx, key, "1")
	if err != nil {
		t.Fatal(err)
	}
	written := put.Header.Revision
	if _, err := testClient.Put(ctx, key, "2"); err != nil {
		t.Fatal(err)
	}
	StartCompactor(ctx, testClient, CompactorOptions{Interval: 50 * time.Millisecond, Logger: slog.Default()})
	deadline := time.Now().Add(5 * time.Second)
	for {
		_, err := testClient.Get(ctx, key, clientv3.WithRev(written))
		if errors.Is(err, rpctypes.ErrCompacted) {
			break
		}
		if err != nil {
			t.Fatal(err)
		}
		if time.Now().After(deadline) {
			t.Fatalf("revision %d still readable after 5s of 50ms compactions", written)
		}
		time.Sleep(20 * time.Millisecond)
	}
	// The newest value survives compaction.
	resp, err := testClient.Get(ctx, key)
	if err != nil || len(resp.Kvs) != 1 || string(resp.Kvs[0].Value) != "2" {
		t.Fatalf("current value after compaction: %v %v", resp, err)
	}
}

// A revision stays readable for the retention (object history reads
// it), then goes.
func TestCompactorKeepsRetention(t *testing.T) {
	ctx, cancel := context.WithCancel(testContext(t))
	defer cancel()
	key := testConfig(t).ResourcePrefix + "/retained"
	put, err := testClient.Put(ctx, key, "1")
	if err != nil {
		t.Fatal(err)
	}
	written, writtenAt := put.Header.Revision, time.Now()
	if _, err := testClient.Put(ctx, key, "2"); err != nil {
		t.Fatal(err)
	}
	const interval, retention = 50 * time.Millisecond, 600 * time.Millisecond
	StartCompactor(ctx, testClient, CompactorOptions{Interval: interval, Retention: retention, Logger: slog.Default()})
	for deadline := time.Now().Add(10 * time.Second); ; {
		_, err := testClient.Get(ctx, key, clientv3.WithRev(written))
		if errors.Is(err, rpctypes.ErrCompacted) {
			if kept := time.Since(writtenAt); kept < retention {
				t.Fatalf("revision %d compacted after %v, within the retention of %v", written, kept, retention)
			}
			break
		}
		if err != nil {
			t.Fatal(err)
		}
		if time.Now().After(deadline) {
			t.Fatalf("revision %d still readable after 10s with a retention of %v", written, retention)
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// Under a bound on revisions, older ones go whatever the retention.
func TestCompactorKeepsAtMostMaxRevisions(t *testing.T) {
	ctx, cancel := context.WithCancel(testContext(t))
	defer cancel()
	key := testConfig(t).ResourcePrefix + "/bounded"
	var revs []int64
	for i := range 20 {
		put, err := testClient.Put(ctx, key, strconv.Itoa(i))
		if err != nil {
			t.Fatal(err)
		}
		revs = append(revs, put.Header.Revision)
	}
	StartCompactor(ctx, testClient, CompactorOptions{Interval: 50 * time.Millisecond, Retention: time.Hour, MaxRevisions: 5})
	readable := func(rev int64) bool {
		_, err := testClient.Get(ctx, key, clientv3.WithRev(rev))
		if err != nil && !errors.Is(err, rpctypes.ErrCompacted) {
			t.Fatal(err)
		}
		return err == nil
	}
	deadline := time.Now().Add(10 * time.Second)
	for readable(revs[10]) {
		if time.Now().After(deadline) {
			t.Fatalf("revision %d of %d still readable after 10s with at most 5 kept", revs[10], revs[19])
		}
		time.Sleep(20 * time.Millisecond)
	}
	cancel()
	// The newest stays (each round's own write counts as a revision, so
	// only a few more rounds would take it).
	if _, err := testClient.Get(testContext(t), key, clientv3.WithRev(revs[19])); err != nil {
		t.Errorf("revision %d, the newest, unreadable with 5 to keep: %v", revs[19], err)
	}
}

func TestRevisionsSeenBefore(t *testing.T) {
	t0 := time.Unix(1000, 0)
	var seen revisionsSeen
	for i := range 5 {
		seen.add(t0.Add(time.Duration(i)*time.Minute), int64(100+i))
	}
	if rev := seen.before(t0.Add(-time.Second)); rev != 0 || len(seen) != 5 {
		t.Fatalf("before the first: %d (%d kept), want 0 (5 kept)", rev, len(seen))
	}
	if rev := seen.before(t0.Add(2*time.Minute + time.Second)); rev != 102 || len(seen) != 2 {
		t.Fatalf("after the third: %d (%d kept), want 102 (2 kept)", rev, len(seen))
	}
	if rev := seen.before(t0.Add(time.Hour)); rev != 104 || len(seen) != 0 {
		t.Fatalf("after all: %d (%d kept), want 104 (none kept)", rev, len(seen))
	}
}

func TestCompactRoundDefersToAnotherReplica(t *testing.T) {
	ctx := testContext(t)
	current, err := currentRevision(ctx, testClient)
	if err != nil {
		t.Fatal(err)
	}
	// A replica holding a stale round count loses the compare-and-swap and
	// adopts the winner's count without compacting.
	resp, err := testClient.Get(ctx, compactRevKey)
	if err != nil {
		t.Fatal(err)
	}
	var version int64
	if len(resp.Kvs) == 1 {
		version = resp.Kvs[0].Version
	}
	round, _, err := compactRound(ctx, testClient, version+100, current)
	if err != nil {
		t.Fatal(err)
	}
	if round != version {
		t.Fatalf("losing replica adopted round %d, want %d", round, version)
	}
}
