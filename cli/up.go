package cli

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"os"
	"os/signal"
	"path/filepath"
	"runtime/debug"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/urfave/cli/v2"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	"k8s.io/klog/v2"

	"github.com/devplane/devplane/apiserver/audit"
	"github.com/devplane/devplane/apiserver/controlplane"
	"github.com/devplane/devplane/apiserver/workloads"
	"github.com/devplane/devplane/cli/dashboard"
)

// UpOptions are the flags of `devplane up`.
type UpOptions struct {
	// Generic
	Name      string
	DataDir   string
	EventTTL  time.Duration
	Profiling bool
	// HistoryRetention is how long object history lasts, within
	// HistoryMaxRevisions.
	HistoryRetention    time.Duration
	HistoryMaxRevisions int64

	// Secure serving: responses to these clients are not gzipped.
	DisableCompressionForClientIPs cli.StringSlice

	// Secure serving
	BindAddress      string
	Port             int
	AdvertiseAddress string
	ServiceCIDR      string
	ExtraSANs        cli.StringSlice

	// Etcd
	EtcdServers  cli.StringSlice
	EtcdCAFile   string
	EtcdCertFile string
	EtcdKeyFile  string

	// Certificates and authentication
	CertDir              string
	TokenAuthFile        string
	AuthorizationMode    string
	ServiceAccountIssuer string

	// Kubeconfig
	Kubeconfig      string
	MergeKubeconfig bool

	// Logging
	LogFormat string
	LogLevel  string

	// Workloads
	Nodes            int
	NodeCapacity     string
	ClusterCIDR      string
	NodeCIDRMaskSize int
	SchedulerConfig  string
	UnpullableImages cli.StringSlice

	// Auditing
	Audit auditFlags

	// Filled by Complete and Validate.
	bindIP      net.IP
	advertiseIP net.IP
	serviceNet  *net.IPNet
	clusterNet  *net.IPNet
	// uncompressed are the parsed --disable-compression-for-client-ips.
	uncompressed []*net.IPNet
	level        slog.Level
	nodeCapacity corev1.ResourceList
	// controlPlane are the control plane's options, completed and
	// validated, with the bound listener.
	controlPlane controlplane.Options
}

func (o *UpOptions) flags() []cli.Flag {
	return append([]cli.Flag{
		&cli.StringFlag{Name: "name", Value: controlplane.DefaultName, Category: catGeneric, Destination: &o.Name,
			Usage: "instance name: several instances with different names run side by side"},
		&cli.StringFlag{Name: "data-dir", Category: catGeneric, Destination: &o.DataDir,
			Usage: "where etcd data, certificates and the kubeconfig live (default: $XDG_DATA_HOME/devplane/<name>, i.e. ~/.local/share/devplane/<name>)"},
		&cli.DurationFlag{Name: "event-ttl", Value: controlplane.DefaultEventTTL, Category: catGeneric, Destination: &o.EventTTL,
			Usage: "how long events are kept (etcd deletes them after this, rounded up to whole seconds)"},
		&cli.DurationFlag{Name: "history-retention", Value: controlplane.DefaultHistoryRetention, Category: catGeneric, Destination: &o.HistoryRetention,
			Usage: "how long etcd keeps objects' old versions, and who wrote them, for devplane history (compaction follows it)"},
		&cli.Int64Flag{Name: "history-max-revisions", Value: controlplane.DefaultHistoryMaxRevisions, Category: catGeneric, Destination: &o.HistoryMaxRevisions,
			Usage: "keep at most this many etcd revisions, however recent (-1: no bound): etcd's database stays within its quota under heavy writes"},

		&cli.BoolFlag{Name: "profiling", Value: true, Category: catGeneric, Destination: &o.Profiling,
			Usage: "serve Go profiles at /debug/pprof/ (cluster admins only), as kube-apiserver's --profiling"},
		&cli.StringFlag{Name: "bind-address", Value: "127.0.0.1", Category: catServing, Destination: &o.BindAddress,
			Usage: "IP address to serve the API on"},
		&cli.IntFlag{Name: "port", Value: 6443, Category: catServing, Destination: &o.Port,
			Usage: "port to serve the API on; 0 picks a free port"},
		&cli.StringFlag{Name: "advertise-address", Category: catServing, Destination: &o.AdvertiseAddress,
			Usage: "IP address clients and the kubernetes Service use (default: the bind address, or 127.0.0.1 when binding all addresses)"},
		&cli.StringFlag{Name: "service-cluster-ip-range", Value: controlplane.DefaultServiceClusterIPRange, Category: catServing, Destination: &o.ServiceCIDR,
			Usage: "CIDR that Service cluster IPs are allocated from; its first IP is the kubernetes Service's"},
		&cli.StringSliceFlag{Name: "disable-compression-for-client-ips", Category: catServing,
			Value: cli.NewStringSlice("127.0.0.0/8", "::1/128"), Destination: &o.DisableCompressionForClientIPs,
			Usage: "client IP ranges (CIDRs) whose responses are never gzipped; loopback by default, where gzip only costs CPU (\"\" compresses for everyone, as kube-apiserver's default)"},
		&cli.StringSliceFlag{Name: "tls-san", Category: catServing, Destination: &o.ExtraSANs,
			Usage: "extra DNS name for the serving certificate (repeatable)"},

		&cli.StringSliceFlag{Name: "etcd-servers", Category: catEtcd, Destination: &o.EtcdServers,
			Usage: "use this external etcd cluster (comma-separated URLs) instead of the embedded one"},
		&cli.StringFlag{Name: "etcd-cafile", Category: catEtcd, Destination: &o.EtcdCAFile,
			Usage: "CA bundle to verify the external etcd servers"},
		&cli.StringFlag{Name: "etcd-certfile", Category: catEtcd, Destination: &o.EtcdCertFile,
			Usage: "client certificate for the external etcd servers"},
		&cli.StringFlag{Name: "etcd-keyfile", Category: catEtcd, Destination: &o.EtcdKeyFile,
			Usage: "client key for the external etcd servers"},

		&cli.StringFlag{Name: "cert-dir", Category: catCerts, Destination: &o.CertDir,
			Usage: "where the certificates and keys live (default: <data-dir>/pki); replicas on one etcd share one"},
		&cli.StringFlag{Name: "token-auth-file", Category: catCerts, Destination: &o.TokenAuthFile,
			Usage: "CSV file of static bearer tokens: token,user,uid[,\"group1,group2\"]"},
		&cli.StringFlag{Name: "authorization-mode", Value: controlplane.DefaultAuthorizationMode, Category: catCerts, Destination: &o.AuthorizationMode,
			Usage: "RBAC (roles and bindings decide, as in kube) or AlwaysAllow (any authenticated user may do anything)"},
		&cli.StringFlag{Name: "service-account-issuer", Value: controlplane.DefaultServiceAccountIssuer, Category: catCerts, Destination: &o.ServiceAccountIssuer,
			Usage: "issuer (iss) of service account tokens, also served at /.well-known/openid-configuration"},

		&cli.StringFlag{Name: "kubeconfig", Category: catKubeconfig, Destination: &o.Kubeconfig,
			Usage: "where to write the admin kubeconfig (default: <data-dir>/kubeconfig)"},
		&cli.BoolFlag{Name: "merge-kubeconfig", Value: true, Category: catKubeconfig, Destination: &o.MergeKubeconfig,
			Usage: "also add a devplane-<name> context to $KUBECONFIG (or ~/.kube/config) and make it current; false leaves it alone"},

		&cli.StringFlag{Name: "log-format", Value: "text", Category: catLogging, Destination: &o.LogFormat,
			Usage: "log format: text or json (json also turns the dashboard into plain lines)"},
		&cli.StringFlag{Name: "log-level", Value: "info", Category: catLogging, Destination: &o.LogLevel,
			Usage: "log level: debug, info, warn or error"},
		&cli.IntFlag{Name: "nodes", Value: 1, Category: catWorkloads, Destination: &o.Nodes,
			Usage: "simulated nodes, with kube's scheduler and workload controllers (0: none of it, an API server only)"},
		&cli.StringFlag{Name: "node-capacity", Value: "cpu=8,memory=16Gi,pods=110", Category: catWorkloads, Destination: &o.NodeCapacity,
			Usage: "each simulated node's capacity, as resource=quantity pairs"},
		&cli.StringFlag{Name: "cluster-cidr", Value: workloads.DefaultClusterCIDR, Category: catWorkloads, Destination: &o.ClusterCIDR,
			Usage: "the pod network, split into one block per simulated node (as kube-controller-manager's flag)"},
		&cli.IntFlag{Name: "node-cidr-mask-size", Value: workloads.DefaultNodeCIDRMaskSize, Category: catWorkloads, Destination: &o.NodeCIDRMaskSize,
			Usage: "the prefix length of each node's block of --cluster-cidr (as kube-controller-manager's flag)"},
		&cli.StringFlag{Name: "scheduler-config", Category: catWorkloads, Destination: &o.SchedulerConfig, TakesFile: true,
			Usage: "a KubeSchedulerConfiguration file for kube's scheduler (as kube-scheduler's --config): profiles, percentageOfNodesToScore..."},
		&cli.StringSliceFlag{Name: "unpullable-images", Category: catWorkloads, Destination: &o.UnpullableImages,
			Usage: "images whose pulls fail on the simulated nodes (ErrImagePull, then ImagePullBackOff): a reference (webserver:404; a repository without tag: all its tags) or a glob with * (docker.io/myorg/*); repeatable. Registries at reserved names (*.invalid, *.test, *.example, example.com) always fail"},
	}, o.Audit.flags()...)
}

// Complete fills in defaults derived from other options.
func (o *UpOptions) Complete() error {
	if o.Name == "" {
		o.Name = controlplane.DefaultName
	}
	dir, err := resolveDataDir(o.Name, o.DataDir)
	if err != nil {
		return err
	}
	o.DataDir = dir
	if o.Kubeconfig == "" {
		o.Kubeconfig = filepath.Join(o.DataDir, kubeconfigFileName)
	}
	if o.CertDir != "" {
		if o.CertDir, err = filepath.Abs(o.CertDir); err != nil {
			return err
		}
	}
	o.bindIP = net.ParseIP(o.BindAddress)
	if o.AdvertiseAddress != "" {
		o.advertiseIP = net.ParseIP(o.AdvertiseAddress)
	}
	return nil
}

// Validate reports every problem at once, the control plane's options'
// with the flags' own. It binds the port, so "port in use" is found here
// and the listener is handed to the server.
func (o *UpOptions) Validate() error {
	var errs []string
	add := func(format string, args ...any) { errs = append(errs, fmt.Sprintf(format, args...)) }

	if !validName(o.Name) {
		add("--name %q: use lower-case letters, digits and '-' (it becomes part of a kubeconfig context name)", o.Name)
	}
	if o.bindIP == nil {
		add("--bind-address %q is not an IP address", o.BindAddress)
	}
	if o.AdvertiseAddress != "" && o.advertiseIP == nil {
		add("--advertise-address %q is not an IP address", o.AdvertiseAddress)
	}
	if _, n, err := net.ParseCIDR(o.ServiceCIDR); err != nil {
		add("--service-cluster-ip-range %q is not a CIDR such as %s", o.ServiceCIDR, controlplane.DefaultServiceClusterIPRange)
	} else {
		o.serviceNet = n
	}
	o.uncompressed = nil
	for _, c := range o.DisableCompressionForClientIPs.Value() {
		if c = strings.TrimSpace(c); c == "" {
			continue
		}
		if _, n, err := net.ParseCIDR(c); err != nil {
			add("--disable-compression-for-client-ips %q is not a CIDR such as 127.0.0.0/8", c)
		} else {
			o.uncompressed = append(o.uncompressed, n)
		}
	}
	if o.CertDir != "" {
		if err := checkWritableDir(o.CertDir); err != nil {
			add("--cert-dir %s is not writable: %v", o.CertDir, err)
		}
	}
	if _, n, err := net.ParseCIDR(o.ClusterCIDR); err != nil {
		add("--cluster-cidr %q is not a CIDR such as %s", o.ClusterCIDR, workloads.DefaultClusterCIDR)
	} else {
		o.clusterNet = n
	}
	if caps, err := parseCapacity(o.NodeCapacity); err != nil {
		add("--node-capacity %q: %v", o.NodeCapacity, err)
	} else {
		o.nodeCapacity = caps
	}
	if o.LogFormat != "text" && o.LogFormat != "json" {
		add("--log-format %q: use text or json", o.LogFormat)
	}
	if err := o.level.UnmarshalText([]byte(o.LogLevel)); err != nil {
		add("--log-level %q: use debug, info, warn or error", o.LogLevel)
	}
	for _, f := range []struct{ flag, path string }{{"--etcd-cafile", o.EtcdCAFile}, {"--etcd-certfile", o.EtcdCertFile}, {"--etcd-keyfile", o.EtcdKeyFile}, {"--token-auth-file", o.TokenAuthFile}} {
		if f.path != "" {
			if _, err := os.Stat(f.path); err != nil {
				add("%s %s: %v", f.flag, f.path, errors.Unwrap(err))
			}
		}
	}
	if (o.EtcdCAFile != "" || o.EtcdCertFile != "" || o.EtcdKeyFile != "") && len(o.EtcdServers.Value()) == 0 {
		add("--etcd-cafile/--etcd-certfile/--etcd-keyfile need --etcd-servers")
	}
	if err := checkWritableDir(o.DataDir); err != nil {
		add("--data-dir %s is not writable: %v", o.DataDir, err)
	} else if st, running, _ := readState(o.DataDir); running {
		add("devplane %q is already running from %s (pid %d, %s): stop it first or use another --name/--data-dir", st.Name, o.DataDir, st.PID, st.URL)
	}
	o.controlPlane = o.controlPlaneOptions()
	o.controlPlane.Complete()
	if err := o.controlPlane.Validate(); err != nil {
		errs = append(errs, strings.Split(err.Error(), "\n")...) // one line per problem
	}
	if len(errs) == 0 && o.bindIP != nil {
		addr := net.JoinHostPort(o.bindIP.String(), strconv.Itoa(o.Port))
		ln, err := net.Listen("tcp", addr)
		if err != nil {
			if isAddrInUse(err) {
				add("port %d on %s is already in use: stop what uses it or pick another --port (0 picks a free one)", o.Port, o.bindIP)
			} else {
				add("cannot listen on %s: %v", addr, err)
			}
		} else {
			o.controlPlane.Listener = ln
		}
	}
	if len(errs) > 0 {
		return exitf(1, "error: %s", strings.Join(errs, "\nerror: "))
	}
	return nil
}

// controlPlaneOptions are the flags' control plane options, before
// Complete.
func (o *UpOptions) controlPlaneOptions() controlplane.Options {
	return controlplane.Options{
		Name:                  o.Name,
		DataDir:               o.DataDir,
		CertDir:               o.CertDir,
		EventTTL:              o.EventTTL,
		HistoryRetention:      o.HistoryRetention,
		HistoryMaxRevisions:   o.HistoryMaxRevisions,
		BindAddress:           o.bindIP,
		Port:                  o.Port,
		AdvertiseAddress:      o.advertiseIP,
		ServiceClusterIPRange: o.serviceNet,
		ExtraSANs:             o.ExtraSANs.Value(),
		EtcdServers:           o.EtcdServers.Value(),
		EtcdCAFile:            o.EtcdCAFile,
		EtcdCertFile:          o.EtcdCertFile,
		EtcdKeyFile:           o.EtcdKeyFile,
		TokenAuthFile:         o.TokenAuthFile,
		AuthorizationMode:     o.AuthorizationMode,
		ServiceAccountIssuer:  o.ServiceAccountIssuer,
		Profiling:             o.Profiling,
		Nodes:                 o.Nodes,
		NodeCapacity:          o.nodeCapacity,
		ClusterCIDR:           o.clusterNet,
		NodeCIDRMaskSize:      o.NodeCIDRMaskSize,
		SchedulerConfig:       o.SchedulerConfig,
		UnpullableImages:      o.UnpullableImages.Value(),

		DisableCompressionForClientIPs: o.uncompressed,
		Audit:                          o.Audit.options(),
	}
}

// parseCapacity reads "cpu=8,memory=16Gi,pods=110".
func parseCapacity(s string) (corev1.ResourceList, error) {
	out := corev1.ResourceList{}
	for _, pair := range strings.Split(s, ",") {
		if pair = strings.TrimSpace(pair); pair == "" {
			continue
		}
		name, value, ok := strings.Cut(pair, "=")
		if !ok || name == "" {
			return nil, fmt.Errorf("%q is not resource=quantity (e.g. memory=16Gi)", pair)
		}
		q, err := resource.ParseQuantity(value)
		if err != nil {
			return nil, fmt.Errorf("%s=%s: not a quantity such as 8, 500m or 16Gi", name, value)
		}
		if q.Sign() < 0 {
			return nil, fmt.Errorf("%s=%s: must not be negative", name, value)
		}
		out[corev1.ResourceName(name)] = q
	}
	if pods, ok := out[corev1.ResourcePods]; ok && (pods.Value() < 1 || pods.Value() > 60000) {
		return nil, fmt.Errorf("pods=%s: use 1-60000", pods.String())
	}
	return out, nil
}

func validName(name string) bool {
	if name == "" || len(name) > 40 {
		return false
	}
	for i, r := range name {
		if !(r >= 'a' && r <= 'z' || r >= '0' && r <= '9' || r == '-' && i > 0 && i < len(name)-1) {
			return false
		}
	}
	return true
}

func isAddrInUse(err error) bool { return errors.Is(err, syscall.EADDRINUSE) }

func checkWritableDir(dir string) error {
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return unwrapPathError(err)
	}
	f, err := os.CreateTemp(dir, ".write-test-*")
	if err != nil {
		return unwrapPathError(err)
	}
	name := f.Name()
	f.Close()
	return os.Remove(name)
}

func unwrapPathError(err error) error {
	var pe *os.PathError
	if errors.As(err, &pe) {
		return pe.Err
	}
	return err
}

func upCommand() *cli.Command {
	o := &UpOptions{}
	return &cli.Command{
		Name:  "up",
		Usage: "start a control plane and serve the Kubernetes API until interrupted",
		Flags: o.flags(),
		Action: func(c *cli.Context) error {
			if c.NArg() > 0 {
				return exitf(1, "error: unexpected argument %q (see devplane up --help)", c.Args().First())
			}
			if err := o.Complete(); err != nil {
				return exitf(1, "error: %v", err)
			}
			if err := o.Validate(); err != nil {
				return err
			}
			return o.Run(c.Context, os.Stdout, os.Stderr)
		},
	}
}

// Run starts devplane and serves until SIGINT/SIGTERM (graceful, exit 0);
// a second signal exits at once.
func (o *UpOptions) Run(parent context.Context, stdout *os.File, stderr io.Writer) error {
	mode := dashboard.DetectMode(stdout, o.LogFormat == "json")
	logger, closeLog, err := o.newLogger(mode, stderr)
	if err != nil {
		return exitf(1, "error: %v", err)
	}
	defer closeLog()
	// client-go (the in-process controllers) logs through klog, which would
	// otherwise write to stderr under the live dashboard.
	klog.SetSlogLogger(logger.With("component", "client-go"))
	board := dashboard.New(stdout, mode)

	ctx, cancel := context.WithCancel(parent)
	defer cancel()
	signals := make(chan os.Signal, 2)
	signal.Notify(signals, os.Interrupt, syscall.SIGTERM)
	defer signal.Stop(signals)
	watchStopRequests(ctx, o.DataDir, func() { signals <- os.Interrupt })
	go func() {
		select {
		case <-signals:
		case <-ctx.Done():
			return
		}
		board.Event("shutting down (press Ctrl-C again to exit at once)")
		cancel()
		<-signals
		fmt.Fprintln(stderr, "second signal: exiting now")
		os.Exit(1)
	}()

	cpOpts := o.controlPlane
	cpOpts.Logger = logger
	cp, err := controlplane.New(ctx, cpOpts)
	if err != nil {
		return exitf(1, "error: %v", err)
	}
	contextName := controlplane.ContextName(o.Name)
	if err := writeKubeconfig(o.Kubeconfig, cp.Kubeconfig()); err != nil {
		return exitf(1, "error: writing kubeconfig: %v", err)
	}
	merged := false
	if o.MergeKubeconfig {
		path, err := mergeKubeconfig(cp.Kubeconfig(), contextName)
		if err != nil {
			logger.Warn("could not merge into your kubeconfig; use --kubeconfig's file instead", "err", err)
		} else {
			merged = true
			logger.Info("merged context into kubeconfig", "context", contextName, "path", path)
		}
	}
	if err := writeState(o.DataDir, instanceState{Name: o.Name, PID: os.Getpid(), URL: cp.URL(),
		Kubeconfig: o.Kubeconfig, Context: contextName, DataDir: o.DataDir, CertDir: o.CertDir}); err != nil {
		return exitf(1, "error: %v", err)
	}
	defer removeState(o.DataDir)

	runErr := make(chan error, 1)
	go func() { runErr <- cp.Run(ctx) }()
	go paceGC(ctx)
	go watchProgress(ctx, cp, board, dashboard.Summary{
		URL: cp.URL(), Kubeconfig: o.Kubeconfig, Context: contextName, Merged: merged,
	})
	err = <-runErr
	if err != nil {
		return exitf(1, "error: %v", err)
	}
	board.Event("stopped cleanly")
	return nil
}

// lateRelease is when, after ready, start-up memory is given back once
// more.
const lateRelease = 10 * time.Second

// watchProgress feeds the dashboard until ready, then reports changes.
func watchProgress(ctx context.Context, cp *controlplane.ControlPlane, board *dashboard.Dashboard, sum dashboard.Summary) {
	tick := time.NewTicker(20 * time.Millisecond)
	defer tick.Stop()
	ready, settled := false, false
	lateReleased, readyAt := false, time.Time{}
	releaser := newBurstReleaser()
	for {
		nowReady := cp.Ready()
		board.Update(toSnapshot(cp.Status()))
		// Start-up garbage (bootstrap writes, the caches' first lists) and
		// start-up code pages (releaseFilePages) go back to the OS once
		// ready, and again once the workload machinery, started in the
		// background, has synced: not over minutes of scavenging, as a
		// laptop's idle devplane should be small from the start.
		if !ready && nowReady {
			ready, readyAt = true, time.Now()
			sum.ReadyIn = time.Since(cp.StartedAt()).Round(time.Millisecond)
			board.Ready(sum)
			tick.Reset(time.Second)
			settled = cp.WorkloadsSynced()
			releaseStartupMemory()
		} else if ready && !settled && cp.WorkloadsSynced() {
			settled = true
			releaseStartupMemory()
		} else if ready && !lateReleased && time.Since(readyAt) > lateRelease {
			// Start-up goes on a little past ready (post-start hooks'
			// tails, the controllers' first syncs, the first requests
			// audited and writes recorded), touching code once.
			lateReleased = true
			releaseStartupMemory()
		} else if ready {
			releaser.tick(time.Now())
		}
		if ready {
			board.ShowTraffic(func() dashboard.Traffic { return traffic(cp.Auditor().Summarize(time.Now(), time.Minute, 3)) })
		}
		select {
		case <-ctx.Done():
			return
		case <-tick.C:
		}
	}
}

// traffic is the dashboard's panel from the recent-request ring.
func traffic(s audit.Summary) dashboard.Traffic {
	t := dashboard.Traffic{Window: s.Window, PerSecond: s.PerSecond, Requests: s.Requests, Errors: s.Errors,
		P99: s.P99, OpenWatches: s.OpenWatches}
	for _, c := range s.TopCallers {
		t.Top = append(t.Top, dashboard.Caller{Who: c.Who, Requests: c.Requests, Errors: c.Errors})
	}
	return t
}

func releaseStartupMemory() {
	debug.FreeOSMemory()
	releaseFilePages(true)
}

func toSnapshot(items []controlplane.Item) dashboard.Snapshot {
	rows := make([]dashboard.Row, len(items))
	for i, it := range items {
		rows[i] = dashboard.Row{Section: it.Section, Kind: it.Kind, Name: it.Name,
			State: dashboard.State(it.State), Duration: it.Duration, Message: it.Message}
	}
	return dashboard.Snapshot{Rows: rows}
}

// newLogger logs to <data-dir>/devplane.log always, and to stderr unless a
// live dashboard owns the terminal (then only errors reach stderr).
func (o *UpOptions) newLogger(mode dashboard.Mode, stderr io.Writer) (*slog.Logger, func(), error) {
	f, err := os.OpenFile(filepath.Join(o.DataDir, logFileName), os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o600)
	if err != nil {
		return nil, nil, err
	}
	stderrLevel := o.level
	if mode == dashboard.Live && stderrLevel < slog.LevelError {
		stderrLevel = slog.LevelError
	}
	handler := func(w io.Writer, level slog.Level) slog.Handler {
		opts := &slog.HandlerOptions{Level: level}
		if o.LogFormat == "json" {
			return slog.NewJSONHandler(w, opts)
		}
		return slog.NewTextHandler(w, opts)
	}
	handlers := fanout{handler(f, o.level)}
	// A detached up's stderr is the log file already: write each line once.
	if os.Getenv(detachedEnv) == "" {
		handlers = append(handlers, handler(stderr, stderrLevel))
	}
	logger := slog.New(handlers)
	return logger, func() { f.Close() }, nil
}
