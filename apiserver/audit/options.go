package audit

import (
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"time"

	"gopkg.in/natefinch/lumberjack.v2"
	"k8s.io/apimachinery/pkg/runtime/schema"
	auditv1 "k8s.io/apiserver/pkg/apis/audit/v1"
	kaudit "k8s.io/apiserver/pkg/audit"
	"k8s.io/apiserver/pkg/audit/policy"
	"k8s.io/apiserver/pkg/util/webhook"
	pluginbuffered "k8s.io/apiserver/plugin/pkg/audit/buffered"
	pluginlog "k8s.io/apiserver/plugin/pkg/audit/log"
	plugintruncate "k8s.io/apiserver/plugin/pkg/audit/truncate"
	pluginwebhook "k8s.io/apiserver/plugin/pkg/audit/webhook"
)

// Backend modes, as kube-apiserver's --audit-log-mode and
// --audit-webhook-mode: batch buffers events and writes them in the
// background; blocking writes each before the request goes on
// (blocking-strict is taken as blocking).
const (
	ModeBatch          = "batch"
	ModeBlocking       = "blocking"
	ModeBlockingStrict = "blocking-strict"
)

// Options are kube-apiserver's audit flags (the same names, the same
// defaults) and the size of the recent-request ring.
type Options struct {
	PolicyFile string // --audit-policy-file: no audit log without one

	LogPath       string // --audit-log-path; "-" is standard output
	LogMaxAge     int    // days
	LogMaxBackups int
	LogMaxSize    int // megabytes; 0 never rotates
	LogFormat     string
	LogCompress   bool
	LogMode       string
	LogBatch      BatchOptions
	LogTruncate   TruncateOptions
	LogVersion    string // --audit-log-version: the Events' group/version

	WebhookConfigFile     string // --audit-webhook-config-file (a kubeconfig)
	WebhookInitialBackoff time.Duration
	WebhookMode           string
	WebhookBatch          BatchOptions
	WebhookTruncate       TruncateOptions
	WebhookVersion        string // --audit-webhook-version

	// RingSize is how many recent requests are kept (DefaultRingSize
	// when 0).
	RingSize int
}

// BatchOptions are the batch mode's --audit-<backend>-batch-* flags.
type BatchOptions struct {
	BufferSize    int
	MaxSize       int
	MaxWait       time.Duration
	ThrottleOff   bool // --audit-<backend>-batch-throttle-enable=false
	ThrottleQPS   float32
	ThrottleBurst int
}

// TruncateOptions are the --audit-<backend>-truncate-* flags: with
// Enabled, an event larger than MaxEventSize loses its request and
// response objects (and is marked with the audit.k8s.io/truncated
// annotation), or is dropped if that is not enough; batches larger than
// MaxBatchSize are split. Sizes are bytes of the serialized event.
type TruncateOptions struct {
	Enabled      bool
	MaxBatchSize int64
	MaxEventSize int64
}

// kube-apiserver's defaults.
const (
	DefaultTruncateMaxBatchSize = 10 * 1024 * 1024
	DefaultTruncateMaxEventSize = 100 * 1024
	DefaultLogMaxAge            = 366
	DefaultLogMaxBackups        = 100
	DefaultLogMaxSize           = 100
	DefaultBatchBufferSize      = 10000
	DefaultBatchMaxSize         = 400
	DefaultBatchMaxWait         = 30 * time.Second
	DefaultBatchThrottleQPS     = 10
	DefaultBatchThrottleBurst   = 15
)

// NewOptions are kube's defaults (what the flags show).
func NewOptions() Options {
	return Options{
		LogMaxAge: DefaultLogMaxAge, LogMaxBackups: DefaultLogMaxBackups, LogMaxSize: DefaultLogMaxSize,
		LogFormat: pluginlog.FormatJson, LogMode: ModeBlocking,
		LogBatch:              BatchOptions{BufferSize: DefaultBatchBufferSize, MaxSize: 1, ThrottleOff: true},
		WebhookInitialBackoff: pluginwebhook.DefaultInitialBackoffDelay, WebhookMode: ModeBatch,
		WebhookBatch: BatchOptions{BufferSize: DefaultBatchBufferSize, MaxSize: DefaultBatchMaxSize,
			MaxWait: DefaultBatchMaxWait, ThrottleQPS: DefaultBatchThrottleQPS, ThrottleBurst: DefaultBatchThrottleBurst},
		LogTruncate:     TruncateOptions{MaxBatchSize: DefaultTruncateMaxBatchSize, MaxEventSize: DefaultTruncateMaxEventSize},
		WebhookTruncate: TruncateOptions{MaxBatchSize: DefaultTruncateMaxBatchSize, MaxEventSize: DefaultTruncateMaxEventSize},
		LogVersion:      auditv1.SchemeGroupVersion.String(),
		WebhookVersion:  auditv1.SchemeGroupVersion.String(),
	}
}

// Complete fills what is unset with kube's defaults.
func (o *Options) Complete() {
	d := NewOptions()
	if o.LogFormat == "" {
		o.LogFormat = d.LogFormat
	}
	if o.LogMode == "" {
		o.LogMode = d.LogMode
	}
	if o.WebhookMode == "" {
		o.WebhookMode = d.WebhookMode
	}
	if o.WebhookInitialBackoff == 0 {
		o.WebhookInitialBackoff = d.WebhookInitialBackoff
	}
	if o.LogBatch.BufferSize == 0 {
		o.LogBatch = d.LogBatch
	}
	if o.WebhookBatch.BufferSize == 0 {
		o.WebhookBatch = d.WebhookBatch
	}
	for _, t := range []*TruncateOptions{&o.LogTruncate, &o.WebhookTruncate} {
		if t.MaxBatchSize == 0 && t.MaxEventSize == 0 {
			t.MaxBatchSize, t.MaxEventSize = DefaultTruncateMaxBatchSize, DefaultTruncateMaxEventSize
		}
	}
	if o.LogVersion == "" {
		o.LogVersion = d.LogVersion
	}
	if o.WebhookVersion == "" {
		o.WebhookVersion = d.WebhookVersion
	}
}

// knownGroupVersions are the audit Event versions kube-apiserver writes.
var knownGroupVersions = []schema.GroupVersion{auditv1.SchemeGroupVersion}

// validateGroupVersion checks a --audit-<backend>-version, with
// kube-apiserver's messages.
func validateGroupVersion(s string) error {
	gv, err := schema.ParseGroupVersion(s)
	if err != nil {
		return err
	}
	if !slices.Contains(knownGroupVersions, gv) {
		return fmt.Errorf("invalid group version, allowed versions are %q", knownGroupVersions)
	}
	return nil
}

// Validate reports every problem, each named after its flag.
func (o *Options) Validate() []error {
	var errs []error
	add := func(format string, args ...any) { errs = append(errs, fmt.Errorf(format, args...)) }
	if o.PolicyFile == "" && (o.LogPath != "" || o.WebhookConfigFile != "") {
		add("--audit-policy-file: an audit policy is needed to write audit events (--audit-log-path or --audit-webhook-config-file is set)")
	}
	if o.PolicyFile != "" {
		if _, err := policy.LoadPolicyFromFile(o.PolicyFile); err != nil {
			add("--audit-policy-file %s: %v", o.PolicyFile, err)
		}
		if o.LogPath == "" && o.WebhookConfigFile == "" {
			add("--audit-policy-file: say where events go with --audit-log-path or --audit-webhook-config-file")
		}
	}
	if !slices.Contains(pluginlog.AllowedFormats, o.LogFormat) {
		add("--audit-log-format %q: use json or legacy", o.LogFormat)
	}
	for _, f := range []struct {
		name string
		v    int
	}{{"--audit-log-maxage", o.LogMaxAge}, {"--audit-log-maxbackup", o.LogMaxBackups}, {"--audit-log-maxsize", o.LogMaxSize}} {
		if f.v < 0 {
			add("%s %d can't be a negative number", f.name, f.v)
		}
	}
	for _, m := range []struct{ flag, mode string }{{"--audit-log-mode", o.LogMode}, {"--audit-webhook-mode", o.WebhookMode}} {
		if m.mode != ModeBatch && m.mode != ModeBlocking && m.mode != ModeBlockingStrict {
			add("%s %q: use %s, %s or %s", m.flag, m.mode, ModeBatch, ModeBlocking, ModeBlockingStrict)
		}
	}
	for _, b := range []struct {
		name string
		b    BatchOptions
	}{{"log", o.LogBatch}, {"webhook", o.WebhookBatch}} {
		if b.b.BufferSize <= 0 || b.b.MaxSize <= 0 || b.b.MaxWait < 0 {
			add("--audit-%s-batch-buffer-size and --audit-%s-batch-max-size must be positive, --audit-%s-batch-max-wait not negative", b.name, b.name, b.name)
		}
		if !b.b.ThrottleOff && (b.b.ThrottleQPS <= 0 || b.b.ThrottleBurst <= 0) {
			add("--audit-%s-batch-throttle-qps and --audit-%s-batch-throttle-burst must be positive while throttling", b.name, b.name)
		}
	}
	for _, b := range []struct {
		name    string
		t       TruncateOptions
		version string
	}{{"log", o.LogTruncate, o.LogVersion}, {"webhook", o.WebhookTruncate, o.WebhookVersion}} {
		// kube-apiserver's checks and words.
		if b.t.MaxEventSize <= 0 {
			add("--audit-%s-truncate-max-event-size: invalid audit truncate %s max event size %v, must be a positive number", b.name, b.name, b.t.MaxEventSize)
		} else if b.t.MaxBatchSize < b.t.MaxEventSize {
			add("--audit-%s-truncate-max-batch-size: invalid audit truncate %s max batch size %v, must be greater than max event size (%v)",
				b.name, b.name, b.t.MaxBatchSize, b.t.MaxEventSize)
		}
		if err := validateGroupVersion(b.version); err != nil {
			add("--audit-%s-version %q: %v", b.name, b.version, err)
		}
	}
	if o.WebhookConfigFile != "" {
		if _, err := os.Stat(o.WebhookConfigFile); err != nil {
			add("--audit-webhook-config-file: %v", err)
		}
	}
	if o.RingSize < 0 {
		add("--recent-requests %d: use a positive number (0 keeps the default %d)", o.RingSize, DefaultRingSize)
	}
	return errs
}

// NewAuditor loads the policy and opens the backends; Run starts them and
// Shutdown flushes and closes them.
func (o *Options) NewAuditor() (*Auditor, error) {
	if o.PolicyFile == "" {
		return NewAuditor(o.RingSize, nil, nil), nil
	}
	p, err := policy.LoadPolicyFromFile(o.PolicyFile)
	if err != nil {
		return nil, fmt.Errorf("--audit-policy-file %s: %w", o.PolicyFile, err)
	}
	var backends []kaudit.Backend
	var closers []io.Closer
	if o.LogPath != "" {
		w, closer, err := o.logWriter()
		if err != nil {
			return nil, fmt.Errorf("--audit-log-path %s: %w", o.LogPath, err)
		}
		if closer != nil {
			closers = append(closers, closer)
		}
		gv, _ := schema.ParseGroupVersion(o.LogVersion)
		b := wrap(pluginlog.NewBackend(w, o.LogFormat, gv), o.LogMode, o.LogBatch, false)
		backends = append(backends, truncate(b, o.LogTruncate, gv))
	}
	if o.WebhookConfigFile != "" {
		gv, _ := schema.ParseGroupVersion(o.WebhookVersion)
		b, err := pluginwebhook.NewBackend(o.WebhookConfigFile, gv,
			webhook.DefaultRetryBackoffWithInitialDelay(o.WebhookInitialBackoff), nil)
		if err != nil {
			return nil, fmt.Errorf("--audit-webhook-config-file %s: %w", o.WebhookConfigFile, err)
		}
		backends = append(backends, truncate(wrap(b, o.WebhookMode, o.WebhookBatch, true), o.WebhookTruncate, gv))
	}
	backend := kaudit.Union(backends...)
	if len(closers) > 0 {
		backend = closingBackend{Backend: backend, closers: closers}
	}
	return NewAuditor(o.RingSize, policy.NewPolicyRuleEvaluator(p), backend), nil
}

// logWriter is the log's file, rotated by lumberjack unless maxsize is 0.
func (o *Options) logWriter() (io.Writer, io.Closer, error) {
	if o.LogPath == "-" {
		return os.Stdout, nil, nil
	}
	if err := os.MkdirAll(filepath.Dir(o.LogPath), 0o700); err != nil {
		return nil, nil, err
	}
	f, err := os.OpenFile(o.LogPath, os.O_CREATE|os.O_APPEND|os.O_WRONLY, 0o600)
	if err != nil {
		return nil, nil, err
	}
	if o.LogMaxSize == 0 {
		return f, f, nil
	}
	_ = f.Close()
	l := &lumberjack.Logger{Filename: o.LogPath, MaxAge: o.LogMaxAge, MaxBackups: o.LogMaxBackups, MaxSize: o.LogMaxSize, Compress: o.LogCompress}
	return l, l, nil
}

// wrap puts a backend behind kube's buffered backend in batch mode.
func wrap(b kaudit.Backend, mode string, o BatchOptions, async bool) kaudit.Backend {
	if mode != ModeBatch {
		return b
	}
	return pluginbuffered.NewBackend(b, pluginbuffered.BatchConfig{
		BufferSize: o.BufferSize, MaxBatchSize: o.MaxSize, MaxBatchWait: o.MaxWait,
		ThrottleEnable: !o.ThrottleOff, ThrottleQPS: o.ThrottleQPS, ThrottleBurst: o.ThrottleBurst,
		AsyncDelegate: async,
	})
}

// truncate puts kube's truncating backend in front of a backend (and its
// batching), as kube-apiserver does, when enabled.
func truncate(b kaudit.Backend, o TruncateOptions, gv schema.GroupVersion) kaudit.Backend {
	if !o.Enabled {
		return b
	}
	return plugintruncate.NewBackend(b, plugintruncate.Config{MaxBatchSize: o.MaxBatchSize, MaxEventSize: o.MaxEventSize}, gv)
}

// closingBackend closes the log file once the backends have flushed.
type closingBackend struct {
	kaudit.Backend
	closers []io.Closer
}

func (c closingBackend) Shutdown() {
	c.Backend.Shutdown()
	for _, cl := range c.closers {
		_ = cl.Close()
	}
}

// Run starts the backends (batching goroutines, webhook clients).
func (a *Auditor) Run(stop <-chan struct{}) error {
	if a.backend == nil {
		return nil
	}
	return a.backend.Run(stop)
}

// Shutdown flushes what the backends hold and closes them; call it once
// requests have drained. It waits at most bound: a webhook that no longer
// answers is retried with back-off for far longer than a stop should take.
func (a *Auditor) Shutdown(bound time.Duration) error {
	if a.backend == nil {
		return nil
	}
	done := make(chan struct{})
	go func() {
		a.backend.Shutdown()
		close(done)
	}()
	select {
	case <-done:
		return nil
	case <-time.After(bound):
		return fmt.Errorf("audit backends still flushing after %s: events may be lost", bound)
	}
}
