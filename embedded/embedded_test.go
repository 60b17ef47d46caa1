package embedded

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	clientv3 "go.etcd.io/etcd/client/v3"
	"go.uber.org/zap"
	"go.uber.org/zap/zapcore"
)

// syncBuffer is a bytes.Buffer safe for etcd's concurrent log writes.
type syncBuffer struct {
	mu  sync.Mutex
	buf bytes.Buffer
}

func (b *syncBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.Write(p)
}

func (b *syncBuffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.String()
}

func testLogger(t testing.TB) *slog.Logger {
	return slog.New(slog.NewTextHandler(testLogWriter{t}, &slog.HandlerOptions{Level: slog.LevelWarn}))
}

type testLogWriter struct{ t testing.TB }

func (w testLogWriter) Write(p []byte) (int, error) {
	w.t.Log(strings.TrimSpace(string(p)))
	return len(p), nil
}

// newDataDir returns a not-yet-existing dir, as devplane passes <data-dir>/etcd.
func newDataDir(t testing.TB) string { return filepath.Join(t.TempDir(), "etcd") }

func startForTest(t testing.TB, opts Options) Etcd {
	t.Helper()
	if opts.Logger == nil {
		opts.Logger = testLogger(t)
	}
	opts.UnsafeNoFsync = true
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	etcd, err := Start(ctx, opts)
	if err != nil {
		t.Fatalf("Start: %v", err)
	}
	t.Cleanup(func() {
		if err := etcd.Stop(); err != nil {
			t.Errorf("Stop: %v", err)
		}
	})
	return etcd
}

func put(t *testing.T, client *clientv3.Client, key, value string) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	if _, err := client.Put(ctx, key, value); err != nil {
		t.Fatalf("Put %s: %v", key, err)
	}
}

func mustGet(t *testing.T, client *clientv3.Client, key, want string) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	resp, err := client.Get(ctx, key)
	if err != nil {
		t.Fatalf("Get %s: %v", key, err)
	}
	if len(resp.Kvs) != 1 || string(resp.Kvs[0].Value) != want {
		t.Fatalf("Get %s = %v, want %q", key, resp.Kvs, want)
	}
}

func TestPutGetReadyStop(t *testing.T) {
	etcd := startForTest(t, Options{DataDir: newDataDir(t)})
	if err := etcd.Ready(context.Background()); err != nil {
		t.Fatalf("Ready: %v", err)
	}
	if got := etcd.Endpoints(); len(got) != 0 {
		t.Errorf("Endpoints without ListenClientURL = %v, want none", got)
	}
	put(t, etcd.Client(), "/a", "1")
	mustGet(t, etcd.Client(), "/a", "1")

	if err := etcd.Stop(); err != nil {
		t.Fatalf("first Stop: %v", err)
	}
	if err := etcd.Stop(); err != nil {
		t.Fatalf("second Stop: %v", err)
	}
	if err := etcd.Ready(context.Background()); err == nil {
		t.Fatal("Ready after Stop = nil, want an error")
	}
}

func TestConcurrentStop(t *testing.T) {
	etcd := startForTest(t, Options{DataDir: newDataDir(t)})
	var wg sync.WaitGroup
	errs := make([]error, 4)
	for i := range errs {
		wg.Add(1)
		go func() {
			defer wg.Done()
			errs[i] = etcd.Stop()
		}()
	}
	wg.Wait()
	for i, err := range errs {
		if err != nil {
			t.Errorf("Stop #%d: %v", i, err)
		}
	}
}

func TestRestartKeepsData(t *testing.T) {
	dir := newDataDir(t)
	first := startForTest(t, Options{DataDir: dir})
	put(t, first.Client(), "/durable", "yes")
	firstMember := memberID(t, first.Client())
	if err := first.Stop(); err != nil {
		t.Fatalf("Stop: %v", err)
	}

	second := startForTest(t, Options{DataDir: dir})
	mustGet(t, second.Client(), "/durable", "yes")
	if got := memberID(t, second.Client()); got != firstMember {
		t.Errorf("member ID changed across restart: %x then %x", firstMember, got)
	}
}

func memberID(t *testing.T, client *clientv3.Client) uint64 {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	resp, err := client.MemberList(ctx)
	if err != nil {
		t.Fatalf("MemberList: %v", err)
	}
	if len(resp.Members) != 1 {
		t.Fatalf("MemberList has %d members, want 1", len(resp.Members))
	}
	return resp.Members[0].ID
}

func TestTwoInstancesInOneProcess(t *testing.T) {
	// Both listen on TCP so a port clash would show; both register etcd's
	// metrics, so a duplicate prometheus registration would panic.
	one := startForTest(t, Options{DataDir: newDataDir(t), ListenClientURL: true})
	two := startForTest(t, Options{DataDir: newDataDir(t), ListenClientURL: true})
	if one.Endpoints()[0] == two.Endpoints()[0] {
		t.Fatalf("both instances report endpoint %s", one.Endpoints()[0])
	}
	put(t, one.Client(), "/who", "one")
	put(t, two.Client(), "/who", "two")
	mustGet(t, one.Client(), "/who", "one")
	mustGet(t, two.Client(), "/who", "two")
}

func TestListenClientURLServesExternalClients(t *testing.T) {
	server := startForTest(t, Options{DataDir: newDataDir(t), ListenClientURL: true})
	endpoints := server.Endpoints()
	if len(endpoints) != 1 || !strings.HasPrefix(endpoints[0], "http://127.0.0.1:") {
		t.Fatalf("Endpoints = %v, want one http://127.0.0.1:<port>", endpoints)
	}
	put(t, server.Client(), "/shared", "value")

	plain, err := clientv3.New(clientv3.Config{Endpoints: endpoints, DialTimeout: 5 * time.Second})
	if err != nil {
		t.Fatalf("clientv3.New: %v", err)
	}
	defer plain.Close()
	mustGet(t, plain, "/shared", "value")

	external := startForTest(t, Options{Servers: endpoints})
	if err := external.Ready(context.Background()); err != nil {
		t.Fatalf("external Ready: %v", err)
	}
	mustGet(t, external.Client(), "/shared", "value")
	if got := external.Endpoints(); len(got) != 1 || got[0] != endpoints[0] {
		t.Errorf("external Endpoints = %v, want %v", got, endpoints)
	}

	// Stopping the external view must leave the server running.
	if err := external.Stop(); err != nil {
		t.Fatalf("external Stop: %v", err)
	}
	if err := external.Stop(); err != nil {
		t.Fatalf("second external Stop: %v", err)
	}
	mustGet(t, server.Client(), "/shared", "value")

	// The advertised client URL must be the real one, not a placeholder.
	resp, err := plain.MemberList(context.Background())
	if err != nil {
		t.Fatalf("MemberList: %v", err)
	}
	if got := resp.Members[0].ClientURLs; len(got) != 1 || got[0] != endpoints[0] {
		t.Errorf("advertised client URLs = %v, want %v", got, endpoints)
	}
}

func TestStartOnUnusableDirFailsFast(t *testing.T) {
	regularFile := filepath.Join(t.TempDir(), "file")
	if err := os.WriteFile(regularFile, nil, 0o600); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	began := time.Now()
	etcd, err := Start(ctx, Options{DataDir: filepath.Join(regularFile, "etcd"), Logger: testLogger(t)})
	if err == nil {
		etcd.Stop()
		t.Fatal("Start under a regular file succeeded, want an error")
	}
	if etcd != nil {
		t.Errorf("Start returned a non-nil Etcd (%#v) with its error", etcd)
	}
	if !strings.Contains(err.Error(), "data dir") || !strings.Contains(err.Error(), regularFile) {
		t.Errorf("error %q does not name the data dir problem", err)
	}
	if ctx.Err() != nil {
		t.Errorf("Start failed only after %s, by timeout", time.Since(began))
	}
}

func TestStartOnDataDirInUseGivesUpWithContext(t *testing.T) {
	dir := newDataDir(t)
	first := startForTest(t, Options{DataDir: dir})
	// etcd waits indefinitely for the data dir's file lock; ctx must bound it.
	ctx, cancel := context.WithTimeout(context.Background(), 300*time.Millisecond)
	defer cancel()
	// The abandoned start outlives this test's logger, so it logs elsewhere.
	quiet := slog.New(slog.NewTextHandler(&syncBuffer{}, nil))
	etcd, err := Start(ctx, Options{DataDir: dir, Logger: quiet, UnsafeNoFsync: true})
	if err == nil {
		etcd.Stop()
		t.Fatal("second Start on a data dir in use succeeded")
	}
	if !errors.Is(err, context.DeadlineExceeded) {
		t.Errorf("err = %v, want one wrapping context.DeadlineExceeded", err)
	}

	// Releasing the lock lets the abandoned start finish; Start must then
	// close it rather than leak a running etcd.
	if err := first.Stop(); err != nil {
		t.Fatalf("Stop: %v", err)
	}
	finished := make(chan struct{})
	go func() {
		abandonedStarts.Wait()
		close(finished)
	}()
	select {
	case <-finished:
	case <-time.After(10 * time.Second):
		t.Fatal("abandoned start was not cleaned up")
	}
	// The data dir is free again.
	third := startForTest(t, Options{DataDir: dir})
	if err := third.Ready(context.Background()); err != nil {
		t.Fatalf("Ready after reclaiming the dir: %v", err)
	}
}

func TestStartRequiresDataDir(t *testing.T) {
	if _, err := Start(context.Background(), Options{}); err == nil || !strings.Contains(err.Error(), "DataDir") {
		t.Fatalf("Start without DataDir: err = %v, want one naming DataDir", err)
	}
}

func TestExternalUnreachableFailsWithContext(t *testing.T) {
	// A free port nobody listens on.
	port, err := freeLoopbackPort()
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 500*time.Millisecond)
	defer cancel()
	etcd, err := Start(ctx, Options{Servers: []string{"http://127.0.0.1:" + port}, Logger: testLogger(t)})
	if err == nil {
		etcd.Stop()
		t.Fatal("Start against a closed port succeeded")
	}
	if etcd != nil {
		t.Errorf("Start returned a non-nil Etcd (%#v) with its error", etcd)
	}
	if !strings.Contains(err.Error(), "127.0.0.1:"+port) {
		t.Errorf("error %q does not name the server", err)
	}
}

func TestExternalTLSNeedsCertAndKey(t *testing.T) {
	_, err := Start(context.Background(), Options{Servers: []string{"https://127.0.0.1:1"}, CertFile: "cert.pem"})
	if err == nil || !strings.Contains(err.Error(), "KeyFile") {
		t.Fatalf("err = %v, want one about CertFile/KeyFile", err)
	}
}

func TestEtcdWarningsReachSlog(t *testing.T) {
	var out syncBuffer
	logger := slog.New(slog.NewTextHandler(&out, nil))
	noise := &noiseFilter{}
	zl := newZapLogger(logger, zapcore.WarnLevel, noise)
	zl.Info("chatty info")
	zl.With(zap.String("member", "m1")).Warn("disk slow", zap.Int("ms", 1500))
	zl.Warn("simple token is not cryptographically signed")
	zl.Error("setting up serving from embedded etcd failed.", zap.Error(errors.New("early")))
	noise.stopping.Store(true)
	zl.Error("setting up serving from embedded etcd failed.", zap.Error(errors.New("during stop")))
	got := out.String()
	for _, unwanted := range []string{"chatty info", "simple token", "during stop"} {
		if strings.Contains(got, unwanted) {
			t.Errorf("slog output %q should not contain %q", got, unwanted)
		}
	}
	for _, want := range []string{"level=WARN msg=\"disk slow\"", "member=m1", "ms=1500", "component=etcd", "level=ERROR", "error=early"} {
		if !strings.Contains(got, want) {
			t.Errorf("slog output %q lacks %q", got, want)
		}
	}
}

func benchmarkStart(b *testing.B, warm bool) {
	dir := newDataDir(b)
	if warm {
		etcd := startForTest(b, Options{DataDir: dir})
		if err := etcd.Stop(); err != nil {
			b.Fatal(err)
		}
	}
	var total time.Duration
	for i := 0; i < b.N; i++ {
		dataDir := dir
		if !warm {
			dataDir = filepath.Join(dir, fmt.Sprintf("fresh-%d", i))
		}
		began := time.Now()
		etcd, err := Start(context.Background(), Options{DataDir: dataDir, UnsafeNoFsync: true, Logger: testLogger(b)})
		if err != nil {
			b.Fatal(err)
		}
		if err := etcd.Ready(context.Background()); err != nil {
			b.Fatal(err)
		}
		total += time.Since(began)
		b.StopTimer()
		if err := etcd.Stop(); err != nil {
			b.Fatal(err)
		}
		b.StartTimer()
	}
	b.ReportMetric(float64(total.Milliseconds())/float64(b.N), "ms-to-ready")
	b.Logf("mean time to Ready over %d starts: %s", b.N, total/time.Duration(b.N))
}

func BenchmarkStartWarm(b *testing.B)  { benchmarkStart(b, true) }
func BenchmarkStartFresh(b *testing.B) { benchmarkStart(b, false) }

// The bbolt file is sized to its data (doubling as it fills), not grown in
// 16 MiB sparse steps that every restart would fault into memory; and it
// keeps every key across the remaps its growth takes. With fsync on: that
// is when bbolt grows the file ahead of its data.
func TestDatabaseFileSizedToData(t *testing.T) {
	dir := newDataDir(t)
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	etcd, err := Start(ctx, Options{DataDir: dir, Logger: testLogger(t)})
	if err != nil {
		t.Fatal(err)
	}
	value := strings.Repeat("v", 1000)
	const txns, perTxn = 30, 100 // ~3 MB: several remaps
	for i := range txns {
		ops := make([]clientv3.Op, perTxn)
		for j := range ops {
			ops[j] = clientv3.OpPut(fmt.Sprintf("/k/%02d-%03d", i, j), value)
		}
		if _, err := etcd.Client().Txn(ctx).Then(ops...).Commit(); err != nil {
			t.Fatal(err)
		}
	}
	if err := etcd.Stop(); err != nil {
		t.Fatal(err)
	}
	info, err := os.Stat(filepath.Join(dir, "member", "snap", "db"))
	if err != nil {
		t.Fatal(err)
	}
	if info.Size() > 16<<20 {
		t.Errorf("db file is %d bytes for ~3 MB of data: grown in 16 MiB steps", info.Size())
	}
	again := startForTest(t, Options{DataDir: dir})
	resp, err := again.Client().Get(ctx, "/k/", clientv3.WithPrefix(), clientv3.WithCountOnly())
	if err != nil {
		t.Fatal(err)
	}
	if resp.Count != txns*perTxn {
		t.Errorf("%d keys after restart, want %d", resp.Count, txns*perTxn)
	}
}
