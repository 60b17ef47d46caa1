// Package embedded runs devplane's etcd: an in-process etcd server on a data
// directory, or a client to an external etcd cluster, behind one interface.
package embedded

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"net/url"
	"os"
	"runtime"
	"strings"
	"sync"
	"syscall"
	"time"

	"go.etcd.io/etcd/server/v3/storage/backend"

	"go.etcd.io/etcd/client/pkg/v3/transport"
	clientv3 "go.etcd.io/etcd/client/v3"
	"go.etcd.io/etcd/server/v3/embed"
	"go.etcd.io/etcd/server/v3/etcdserver/api/v3client"
	"go.etcd.io/etcd/server/v3/storage/wal"
	"go.uber.org/zap/zapcore"
)

// Options configures Start.
type Options struct {
	// DataDir holds the embedded etcd's data (callers pass <data-dir>/etcd).
	DataDir string
	// Servers, when non-empty, are external etcd client URLs; no embedded etcd is started.
	Servers []string
	// CAFile, CertFile and KeyFile configure TLS to the external cluster (optional).
	CAFile, CertFile, KeyFile string
	// Logger receives etcd's own logs at WARN and above; nil means slog.Default().
	Logger *slog.Logger
	// UnsafeNoFsync skips fsync: fast for tests, never for real clusters.
	UnsafeNoFsync bool
	// Name is the member name; empty means "devplane".
	Name string
	// ListenClientURL makes the embedded etcd also serve clients on
	// 127.0.0.1:<free port>, reported by Endpoints, so other processes can
	// use it as an external etcd.
	ListenClientURL bool
	// QuotaBackendBytes is the backend size quota; 0 means etcd's default.
	QuotaBackendBytes int64
	// Ephemeral says the data dir is used for one run and then removed
	// (testenv): etcd maps its file far ahead instead of remapping as it
	// grows, and its lone member elects itself sooner.
	Ephemeral bool
}

// Etcd is a running etcd that devplane can use.
type Etcd interface {
	// Client is the in-process client (embedded) or a clientv3 client (external).
	Client() *clientv3.Client
	// Ready returns nil once there is a leader and a linearizable read answers.
	Ready(ctx context.Context) error
	// Endpoints are the client URLs; empty for an embedded etcd without ListenClientURL.
	Endpoints() []string
	// Stop closes the client and, when embedded, the server. Idempotent and
	// safe to call concurrently.
	Stop() error
}

const (
	defaultMemberName = "devplane"
	// defaultStartTimeout bounds Start when ctx has no deadline, so a locked
	// or unreachable store surfaces as an error instead of a hang.
	defaultStartTimeout = 30 * time.Second
	// stopTimeout bounds how long Stop waits for etcd to exit.
	stopTimeout = 10 * time.Second
	// readyProbeTimeout bounds Ready's linearizable read.
	readyProbeTimeout = 2 * time.Second
	// bindAttempts retries Start when another process takes the free port
	// between our probe and etcd's bind.
	bindAttempts = 5
	// readyProbeKey is read (never written) to prove linearizable reads work.
	readyProbeKey = "/devplane/ready-probe"
)

// Start starts an embedded etcd on opts.DataDir, or connects to opts.Servers.
// It returns once etcd serves requests, or with an error when it cannot
// (including ctx's cancellation or deadline).
func Start(ctx context.Context, opts Options) (Etcd, error) {
	if opts.Logger == nil {
		opts.Logger = slog.Default()
	}
	if opts.Name == "" {
		opts.Name = defaultMemberName
	}
	if _, hasDeadline := ctx.Deadline(); !hasDeadline {
		var cancel context.CancelFunc
		ctx, cancel = context.WithTimeout(ctx, defaultStartTimeout)
		defer cancel()
	}
	// Return a plain nil on failure, never a nil pointer inside the interface.
	if len(opts.Servers) > 0 {
		external, err := startExternal(ctx, opts)
		if err != nil {
			return nil, err
		}
		return external, nil
	}
	embedded, err := startEmbedded(ctx, opts)
	if err != nil {
		return nil, err
	}
	return embedded, nil
}

// embeddedEtcd is an etcd server running in this process.
type embeddedEtcd struct {
	server    *embed.Etcd
	noise     *noiseFilter
	client    *clientv3.Client
	endpoints []string

	stopOnce sync.Once
	stopErr  error
}

func startEmbedded(ctx context.Context, opts Options) (*embeddedEtcd, error) {
	if opts.DataDir == "" {
		return nil, errors.New("embedded etcd: DataDir is required")
	}
	if err := prepareDataDir(opts.DataDir); err != nil {
		return nil, err
	}
	var lastErr error
	for attempt := 0; attempt < bindAttempts; attempt++ {
		noise := &noiseFilter{}
		cfg, err := newEmbedConfig(opts, noise)
		if err != nil {
			return nil, err
		}
		server, err := startServer(ctx, cfg, noise)
		if err == nil {
			e := &embeddedEtcd{
				server:    server,
				noise:     noise,
				client:    v3client.New(server.Server),
				endpoints: listenedClientURLs(server),
			}
			return e, nil
		}
		lastErr = err
		if !isAddressInUse(err) || ctx.Err() != nil {
			break
		}
	}
	return nil, fmt.Errorf("embedded etcd on %s: %w", opts.DataDir, lastErr)
}

// prepareDataDir creates the data dir and proves it is writable, so a bad
// path fails here with a plain message rather than deep inside etcd.
func prepareDataDir(dir string) error {
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return fmt.Errorf("embedded etcd: cannot create data dir: %w", err)
	}
	probe, err := os.CreateTemp(dir, ".write-probe-*")
	if err != nil {
		return fmt.Errorf("embedded etcd: data dir %s is not writable: %w", dir, err)
	}
	name := probe.Name()
	probe.Close()
	return os.Remove(name)
}

func init() {
	// etcd maps its bbolt file 10 GiB ahead, so bbolt grows the file in
	// 16 MiB sparse steps, and opens it with MAP_POPULATE: every restart
	// faulted 16 MiB of mostly holes into devplane's memory for a database
	// of a few hundred KiB. Sized to the data instead, the file (and the
	// mapping) double as they fill; a laptop's database remaps a handful
	// of times in its life.
	backend.InitialMmapSize = 0
}

func newEmbedConfig(opts Options, noise *noiseFilter) (*embed.Config, error) {
	cfg := embed.NewConfig()
	cfg.Name = opts.Name
	cfg.Dir = opts.DataDir
	cfg.UnsafeNoFsync = opts.UnsafeNoFsync
	cfg.QuotaBackendBytes = opts.QuotaBackendBytes
	cfg.Logger = "zap"
	cfg.ZapLoggerBuilder = embed.NewZapLoggerBuilder(newZapLogger(opts.Logger, zapcore.WarnLevel, noise))

	// A single member never dials its peers, so the peer listener may take any
	// port. The advertised peer URL stays "port 0" on every start: it seeds
	// the member ID, which must not change across restarts.
	peerURL := url.URL{Scheme: "http", Host: "127.0.0.1:0"}
	cfg.ListenPeerUrls = []url.URL{peerURL}
	cfg.AdvertisePeerUrls = []url.URL{peerURL}
	cfg.InitialCluster = cfg.InitialClusterFromName(cfg.Name)
	cfg.InitialClusterToken = "devplane"
	cfg.ClusterState = embed.ClusterStateFlagNew // ignored once the dir holds a member

	// The client URL is advertised in the member list, so it must be the
	// real port: probe a free one (Start retries if someone steals it).
	if opts.ListenClientURL {
		port, err := freeLoopbackPort()
		if err != nil {
			return nil, fmt.Errorf("embedded etcd: finding a free client port: %w", err)
		}
		clientURL := url.URL{Scheme: "http", Host: net.JoinHostPort("127.0.0.1", port)}
		cfg.ListenClientUrls = []url.URL{clientURL}
		cfg.AdvertiseClientUrls = []url.URL{clientURL}
	} else {
		// In-process clients need no listener at all.
		cfg.ListenClientUrls = nil
		cfg.AdvertiseClientUrls = nil
	}
	cfg.ListenClientHttpUrls = nil
	cfg.ListenMetricsUrls = nil
	cfg.EnableGRPCGateway = false

	// The raft log is kept in memory back to the last snapshot plus the
	// catch-up entries a slow follower may need. A lone member has no
	// followers, and with kube's defaults (10,000 + 5,000) the last
	// thousands of writes stay in memory: some 60 MB after installing a
	// few hundred large CRDs. Snapshots of a lone member are cheap (its
	// membership, then the log is truncated). A start also replays every
	// entry since the last snapshot, and a few hundred CRD writes of
	// ~100 KB each take a good part of a second to read back; but each
	// snapshot commits the backend, and at 100 that cost updates ~10% of
	// their rate (250 does not show).
	cfg.SnapshotCount = 250
	cfg.SnapshotCatchUpEntries = 50
	// A start reads the WAL segment holding the last snapshot from its
	// beginning (and every kept segment for snapshot records): with
	// etcd's 64 MB segments and large CRDs that was ~0.3 s of each
	// restart. Small segments bound it; older ones are purged.
	// (A package variable of etcd's: set once, as instances may start in
	// parallel, each a reader.)
	setWALSegmentSize.Do(func() { wal.SegmentSizeBytes = walSegmentBytes })
	cfg.MaxWalFiles = 1

	// devplane runs its own compaction.
	cfg.AutoCompactionMode = embed.CompactorModePeriodic
	cfg.AutoCompactionRetention = "0"

	// A lone member elects itself within one randomised election timeout
	// after start, which dominates time-to-ready: 50 ms keeps warm starts
	// near 40 ms. It cannot cause spurious elections with no peers; a
	// shorter tick would only add idle wake-ups.
	cfg.TickMs = 10
	cfg.ElectionMs = 50
	if opts.Ephemeral {
		cfg.TickMs, cfg.ElectionMs = ephemeralTickMs, 5*ephemeralTickMs
		if runtime.GOOS != "windows" && cfg.QuotaBackendBytes == 0 {
			cfg.QuotaBackendBytes = mapAheadQuota
		}
	}
	return cfg, nil
}

// An ephemeral instance's etcd ticks every 4 ms: its lone member elects
// itself 4-20 ms after start instead of 10-50 ms, for 250 idle wake-ups a
// second (~1% of a core) over a test's short life.
const ephemeralTickMs = 4

// mapAheadQuota is etcd's default backend quota less one byte: etcd maps
// its bbolt file 10% beyond a quota it is given (its default alone is
// mapped as InitialMmapSize says), so a fresh file is mapped gigabytes
// ahead and never remapped (each remap copies every page the writing
// transaction touched). Free on Linux and macOS, where mapping past the
// end of a file costs address space only; Windows grows the file to the
// mapping, so it keeps the sized-to-data map.
const mapAheadQuota = 2<<30 - 1

// walSegmentBytes is the embedded etcd's WAL segment size: some
// hundreds of snapshot intervals of ConfigMaps, a few of large CRDs.
const walSegmentBytes = 4 << 20

var setWALSegmentSize sync.Once

// startServer runs embed.StartEtcd and waits for it to serve, giving up when
// ctx ends. A server that finishes starting after we gave up is closed.
func startServer(ctx context.Context, cfg *embed.Config, noise *noiseFilter) (*embed.Etcd, error) {
	type result struct {
		server *embed.Etcd
		err    error
	}
	started := make(chan result, 1)
	go func() {
		server, err := embed.StartEtcd(cfg)
		started <- result{server, err}
	}()

	var server *embed.Etcd
	select {
	case r := <-started:
		if r.err != nil {
			return nil, r.err
		}
		server = r.server
	case <-ctx.Done():
		abandonedStarts.Add(1)
		go func() {
			defer abandonedStarts.Done()
			if r := <-started; r.server != nil {
				noise.stopping.Store(true)
				r.server.Close()
			}
		}()
		return nil, fmt.Errorf("waiting for etcd to open its data: %w", context.Cause(ctx))
	}

	select {
	case <-server.Server.ReadyNotify():
		return server, nil
	case err := <-server.Err():
		noise.stopping.Store(true)
		server.Close()
		return nil, fmt.Errorf("etcd failed while starting: %w", err)
	case <-server.Server.StopNotify():
		noise.stopping.Store(true)
		server.Close()
		return nil, errors.New("etcd stopped while starting")
	case <-ctx.Done():
		noise.stopping.Store(true)
		server.Close()
		return nil, fmt.Errorf("waiting for etcd to become ready: %w", context.Cause(ctx))
	}
}

// isAddressInUse reports a bind clash; etcd does not always wrap the
// underlying errno, so the message is checked too.
func isAddressInUse(err error) bool {
	return errors.Is(err, syscall.EADDRINUSE) || strings.Contains(err.Error(), "address already in use")
}

// abandonedStarts counts etcd starts that Start gave up on but that are
// still running, so tests can wait for them before removing their dirs.
var abandonedStarts sync.WaitGroup

func freeLoopbackPort() (string, error) {
	listener, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return "", err
	}
	defer listener.Close()
	_, port, err := net.SplitHostPort(listener.Addr().String())
	return port, err
}

func listenedClientURLs(server *embed.Etcd) []string {
	var urls []string
	for _, listener := range server.Clients {
		urls = append(urls, "http://"+listener.Addr().String())
	}
	return urls
}

func (e *embeddedEtcd) Client() *clientv3.Client { return e.client }

func (e *embeddedEtcd) Endpoints() []string { return append([]string(nil), e.endpoints...) }

func (e *embeddedEtcd) Ready(ctx context.Context) error {
	select {
	case <-e.server.Server.StopNotify():
		return errors.New("etcd is stopped")
	default:
	}
	if e.server.Server.Leader() == 0 {
		return errors.New("etcd has no leader")
	}
	return linearizableRead(ctx, e.client)
}

func (e *embeddedEtcd) Stop() error {
	e.stopOnce.Do(func() { e.stopErr = e.stop() })
	return e.stopErr
}

func (e *embeddedEtcd) stop() error {
	clientErr := e.client.Close()
	if errors.Is(clientErr, context.Canceled) {
		clientErr = nil // closing cancels the client's own context
	}

	e.noise.stopping.Store(true)
	closed := make(chan struct{})
	go func() {
		e.server.Close()
		close(closed)
	}()
	timeout := time.NewTimer(stopTimeout)
	defer timeout.Stop()
	select {
	case <-closed:
	case <-timeout.C:
		return fmt.Errorf("etcd did not close within %s", stopTimeout)
	}
	select {
	case <-e.server.Server.StopNotify():
	case <-timeout.C:
		return fmt.Errorf("etcd did not stop within %s", stopTimeout)
	}
	return clientErr
}

// externalEtcd is a client to an etcd cluster run by someone else.
type externalEtcd struct {
	client    *clientv3.Client
	endpoints []string

	stopOnce sync.Once
	stopErr  error
}

func startExternal(ctx context.Context, opts Options) (*externalEtcd, error) {
	config := clientv3.Config{
		Endpoints:   append([]string(nil), opts.Servers...),
		DialTimeout: 5 * time.Second,
		Logger:      newZapLogger(opts.Logger, zapcore.WarnLevel, nil),
		// Without keepalives a half-dead connection is noticed only by the
		// next request's timeout.
		DialKeepAliveTime:    30 * time.Second,
		DialKeepAliveTimeout: 10 * time.Second,
	}
	if opts.CAFile != "" || opts.CertFile != "" || opts.KeyFile != "" {
		if (opts.CertFile == "") != (opts.KeyFile == "") {
			return nil, errors.New("external etcd: CertFile and KeyFile must be given together")
		}
		tlsInfo := transport.TLSInfo{
			CertFile:      opts.CertFile,
			KeyFile:       opts.KeyFile,
			TrustedCAFile: opts.CAFile,
		}
		tlsConfig, err := tlsInfo.ClientConfig()
		if err != nil {
			return nil, fmt.Errorf("external etcd: loading TLS files: %w", err)
		}
		config.TLS = tlsConfig
	}
	client, err := clientv3.New(config)
	if err != nil {
		return nil, fmt.Errorf("external etcd %s: %w", strings.Join(opts.Servers, ","), err)
	}
	e := &externalEtcd{client: client, endpoints: config.Endpoints}
	if err := e.waitReady(ctx); err != nil {
		client.Close()
		return nil, fmt.Errorf("external etcd %s: %w", strings.Join(opts.Servers, ","), err)
	}
	return e, nil
}

// waitReady retries Ready until it succeeds or ctx ends, so devplane can be
// started alongside its etcd.
func (e *externalEtcd) waitReady(ctx context.Context) error {
	const retryInterval = 100 * time.Millisecond
	for {
		err := e.Ready(ctx)
		if err == nil {
			return nil
		}
		select {
		case <-ctx.Done():
			return fmt.Errorf("not ready: %w (%w)", err, context.Cause(ctx))
		case <-time.After(retryInterval):
		}
	}
}

func (e *externalEtcd) Client() *clientv3.Client { return e.client }

func (e *externalEtcd) Endpoints() []string { return append([]string(nil), e.endpoints...) }

func (e *externalEtcd) Ready(ctx context.Context) error { return linearizableRead(ctx, e.client) }

func (e *externalEtcd) Stop() error {
	e.stopOnce.Do(func() {
		e.stopErr = e.client.Close()
		if errors.Is(e.stopErr, context.Canceled) {
			e.stopErr = nil
		}
	})
	return e.stopErr
}

// linearizableRead proves the cluster has a leader that answers reads; a
// linearizable Get goes through the leader's read index.
func linearizableRead(ctx context.Context, client *clientv3.Client) error {
	ctx, cancel := context.WithTimeout(ctx, readyProbeTimeout)
	defer cancel()
	if _, err := client.Get(ctx, readyProbeKey, clientv3.WithCountOnly()); err != nil {
		return fmt.Errorf("etcd read failed: %w", err)
	}
	return nil
}
