package storage

import (
	"context"
	"errors"
	"log/slog"
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
	StartCompactor(ctx, testClient, 50*time.Millisecond, slog.Default())
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
