package controlplane

import (
	"errors"
	"fmt"
	"log/slog"
	"net"
	"net/url"
	"strings"
	"time"

	corev1 "k8s.io/api/core/v1"

	"github.com/devplane/devplane/apiserver/audit"
	"github.com/devplane/devplane/apiserver/registry"
	"github.com/devplane/devplane/apiserver/serviceaccount"
	"github.com/devplane/devplane/apiserver/snapshot"
	"github.com/devplane/devplane/apiserver/workloads"
)

// Authorization modes (--authorization-mode).
const (
	AuthorizationModeRBAC        = "RBAC"
	AuthorizationModeAlwaysAllow = "AlwaysAllow"
)

// The defaults Complete fills in (and the CLI shows as its flags').
const (
	DefaultName                  = "default"
	DefaultServiceClusterIPRange = "10.0.0.0/24"
	DefaultAuthorizationMode     = AuthorizationModeRBAC
	DefaultServiceAccountIssuer  = serviceaccount.DefaultIssuerURL
	DefaultEventTTL              = registry.DefaultEventTTL
	// DefaultHistoryRetention covers an ordinary debugging session.
	DefaultHistoryRetention = time.Hour
	// DefaultHistoryMaxRevisions keeps etcd's database well within its
	// 2 GiB quota under a sustained write load (~1 GB of pods' statuses).
	DefaultHistoryMaxRevisions = 200_000
)

// MaxNodes bounds Options.Nodes.
const MaxNodes = 5000

// Options configure one control plane, as kube-apiserver's flags do:
// callers set what differs from the defaults, then Complete fills the
// rest and Validate reports every problem (New calls both too).
type Options struct {
	Name    string // instance name (DefaultName)
	DataDir string // certificates in DataDir/pki, etcd in DataDir/etcd
	// CertDir, when set, holds the certificates instead of DataDir/pki.
	// Replicas on one etcd share it (one CA, serving cert, admin cert and
	// service-account key); a lock file serialises their start-up and the
	// serving cert's SANs only ever grow.
	CertDir string
	// EventTTL is how long events live (kube-apiserver's --event-ttl;
	// DefaultEventTTL).
	EventTTL time.Duration
	// HistoryRetention is how long etcd keeps old versions of objects
	// before compaction, and the writers of each are remembered, for
	// `devplane history` (DefaultHistoryRetention; at least
	// CompactionInterval keeps kube-apiserver's compaction).
	HistoryRetention time.Duration
	// HistoryMaxRevisions bounds the revisions etcd keeps, however recent
	// (DefaultHistoryMaxRevisions; -1: no bound).
	HistoryMaxRevisions int64

	// Listener, when set, is used as is; otherwise BindAddress:Port is
	// bound (127.0.0.1 by default; port 0 picks a free one).
	Listener    net.Listener
	BindAddress net.IP
	Port        int
	// AdvertiseAddress is the address clients and the kubernetes Service
	// use (unset or unspecified: BindAddress, or 127.0.0.1 when that is
	// unspecified too).
	AdvertiseAddress net.IP
	// ServiceClusterIPRange is where Service cluster IPs come from; its
	// first address is the kubernetes Service's (DefaultServiceClusterIPRange).
	ServiceClusterIPRange *net.IPNet
	// ExtraSANs are more DNS names for the serving certificate.
	ExtraSANs []string

	EtcdServers                           []string
	EtcdCAFile, EtcdCertFile, EtcdKeyFile string
	// UnsafeNoFsync speeds up tests; never on for `devplane up`.
	UnsafeNoFsync bool
	// Ephemeral says DataDir is removed after this one run (testenv), so
	// etcd may trade what matters on a restart for a faster start.
	Ephemeral bool

	// TokenAuthFile is a CSV of static bearer tokens (optional).
	TokenAuthFile string
	// AuthorizationMode is AuthorizationModeRBAC (default) or
	// AuthorizationModeAlwaysAllow.
	AuthorizationMode string
	// ServiceAccountIssuer is the iss of service account tokens
	// (DefaultServiceAccountIssuer).
	ServiceAccountIssuer string

	// Nodes is how many simulated nodes run, with kube's scheduler and
	// workload controllers (apiserver/workloads); 0 runs none of it.
	Nodes int
	// NodeCapacity overrides each simulated node's capacity.
	NodeCapacity corev1.ResourceList
	// ClusterCIDR is the pod network (workloads.DefaultClusterCIDR), one
	// block of NodeCIDRMaskSize bits (workloads.DefaultNodeCIDRMaskSize)
	// per node, as kube-controller-manager's flags of the same names.
	ClusterCIDR      *net.IPNet
	NodeCIDRMaskSize int
	// SchedulerConfig is a KubeSchedulerConfiguration file for kube's
	// scheduler (kube-scheduler's --config); "" runs its defaults.
	SchedulerConfig string
	// UnpullableImages are images whose pulls fail on the simulated nodes
	// (ErrImagePull, ImagePullBackOff): references or globs, see
	// workloads.NewImagePolicy.
	UnpullableImages []string

	// DisableControllers leaves out the in-process controllers (the
	// controllers' own tests run theirs instead).
	DisableControllers bool

	// DisableCompressionForClientIPs: responses to these clients are never
	// gzipped (kube-apiserver's --disable-compression-for-client-ips; none
	// by default there). `devplane up` and testenv use LoopbackNetworks:
	// their clients are on this machine, where gzip only costs CPU.
	DisableCompressionForClientIPs []*net.IPNet

	// Profiling serves Go's profiles at /debug/pprof/ (kube-apiserver's
	// --profiling); cluster admins only.
	Profiling bool

	// InitialState, when set, is written into etcd before any server
	// starts: the servers then start on it as on a restart (a fork of the
	// instance the snapshot was taken from).
	InitialState *snapshot.Snapshot
	// Audit are kube-apiserver's audit flags (policy, log, webhook) and
	// the size of the recent-request ring, which is always kept.
	Audit audit.Options

	Logger *slog.Logger // slog.Default() when nil
}

// LoopbackNetworks are 127.0.0.0/8 and ::1/128.
func LoopbackNetworks() []*net.IPNet {
	return []*net.IPNet{
		{IP: net.IPv4(127, 0, 0, 0).To4(), Mask: net.CIDRMask(8, 32)},
		{IP: net.IPv6loopback, Mask: net.CIDRMask(128, 128)},
	}
}

// Complete fills every unset option with its default. It may be called
// more than once.
func (o *Options) Complete() {
	if o.Name == "" {
		o.Name = DefaultName
	}
	if o.EventTTL == 0 {
		o.EventTTL = DefaultEventTTL
	}
	if o.HistoryRetention == 0 {
		o.HistoryRetention = DefaultHistoryRetention
	}
	if o.HistoryMaxRevisions == 0 {
		o.HistoryMaxRevisions = DefaultHistoryMaxRevisions
	}
	if o.BindAddress == nil {
		o.BindAddress = net.IPv4(127, 0, 0, 1)
	}
	if o.AdvertiseAddress == nil || o.AdvertiseAddress.IsUnspecified() {
		o.AdvertiseAddress = o.BindAddress
		if o.AdvertiseAddress.IsUnspecified() {
			o.AdvertiseAddress = net.IPv4(127, 0, 0, 1)
		}
	}
	if o.ServiceClusterIPRange == nil {
		_, o.ServiceClusterIPRange, _ = net.ParseCIDR(DefaultServiceClusterIPRange)
	}
	if o.ClusterCIDR == nil {
		_, o.ClusterCIDR, _ = net.ParseCIDR(workloads.DefaultClusterCIDR)
	}
	if o.NodeCIDRMaskSize == 0 {
		o.NodeCIDRMaskSize = workloads.DefaultNodeCIDRMaskSize
	}
	if o.AuthorizationMode == "" {
		o.AuthorizationMode = DefaultAuthorizationMode
	}
	if o.ServiceAccountIssuer == "" {
		o.ServiceAccountIssuer = DefaultServiceAccountIssuer
	}
	if o.Logger == nil {
		o.Logger = slog.Default()
	}
	o.Audit.Complete()
}

// Validate reports every problem with completed options at once, each
// named after kube-apiserver's (or devplane up's) flag.
func (o *Options) Validate() error {
	var errs []error
	add := func(format string, args ...any) { errs = append(errs, fmt.Errorf(format, args...)) }
	if o.DataDir == "" {
		add("--data-dir: a data directory is required")
	}
	if o.Listener == nil && (o.Port < 0 || o.Port > 65535) {
		add("--port %d is out of range: use 0-65535 (0 picks a free port)", o.Port)
	}
	if r := o.ServiceClusterIPRange; r == nil {
		add("--service-cluster-ip-range: a service cluster IP range is required")
	} else if ones, bits := r.Mask.Size(); bits-ones < 2 {
		add("--service-cluster-ip-range %q is too small: it needs room for at least two addresses", r)
	}
	if o.AuthorizationMode != AuthorizationModeRBAC && o.AuthorizationMode != AuthorizationModeAlwaysAllow {
		add("--authorization-mode %q: use %s or %s", o.AuthorizationMode, AuthorizationModeRBAC, AuthorizationModeAlwaysAllow)
	}
	if u, err := url.Parse(o.ServiceAccountIssuer); err != nil || o.ServiceAccountIssuer == "" || (strings.Contains(o.ServiceAccountIssuer, ":") && u.Scheme == "") {
		add("--service-account-issuer %q: use a URL such as %s", o.ServiceAccountIssuer, DefaultServiceAccountIssuer)
	}
	if o.EventTTL <= 0 {
		add("--event-ttl %s: use a positive duration such as 1h", o.EventTTL)
	}
	if o.HistoryRetention < 0 {
		add("--history-retention %s: use a positive duration such as 1h", o.HistoryRetention)
	}
	if o.HistoryMaxRevisions < -1 {
		add("--history-max-revisions %d: use a positive count, or -1 for no bound", o.HistoryMaxRevisions)
	}
	if o.Nodes < 0 || o.Nodes > MaxNodes {
		add("--nodes %d is out of range: use 0-%d (0 turns workloads off)", o.Nodes, MaxNodes)
	} else if o.Nodes > 0 {
		if err := workloads.CheckNodes(o.Nodes, o.NodeCapacity, o.ClusterCIDR, o.NodeCIDRMaskSize); err != nil {
			errs = append(errs, err)
		}
		if p, s := o.ClusterCIDR, o.ServiceClusterIPRange; p != nil && s != nil && (p.Contains(s.IP) || s.Contains(p.IP)) {
			add("--cluster-cidr %s overlaps --service-cluster-ip-range %s: pods and Services need addresses of their own", p, s)
		}
		if _, err := workloads.NewImagePolicy(o.UnpullableImages); err != nil {
			add("--unpullable-images: %v", err)
		}
	}
	if o.SchedulerConfig != "" {
		if o.Nodes == 0 {
			add("--scheduler-config %s: there is no scheduler with --nodes 0", o.SchedulerConfig)
		} else if _, err := workloads.LoadSchedulerConfig(o.SchedulerConfig); err != nil {
			errs = append(errs, err)
		}
	}
	errs = append(errs, o.Audit.Validate()...)
	return errors.Join(errs...)
}
