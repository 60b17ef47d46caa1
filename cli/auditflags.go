package cli

import (
	"github.com/urfave/cli/v2"

	"github.com/devplane/devplane/apiserver/audit"
)

// auditFlags are kube-apiserver's audit flags (names and defaults), in
// their own category, writing into o; throttleQPS are the batch throttles'
// QPS (cli has no float32 flag), copied into o by applyAuditFlags.
type auditFlags struct {
	o                  audit.Options
	logThrottle        bool
	webhookThrottle    bool
	logThrottleQPS     float64
	webhookThrottleQPS float64
}

func (f *auditFlags) flags() []cli.Flag {
	d := audit.NewOptions()
	o := &f.o
	cat := catAudit
	batch := func(backend string, b *audit.BatchOptions, def audit.BatchOptions, throttle *bool, qps *float64) []cli.Flag {
		p := "audit-" + backend + "-batch-"
		return []cli.Flag{
			&cli.IntFlag{Name: p + "buffer-size", Value: def.BufferSize, Category: cat, Destination: &b.BufferSize,
				Usage: "the size of the buffer to store events before batching and writing (batch mode)"},
			&cli.IntFlag{Name: p + "max-size", Value: def.MaxSize, Category: cat, Destination: &b.MaxSize,
				Usage: "the maximum size of a batch (batch mode)"},
			&cli.DurationFlag{Name: p + "max-wait", Value: def.MaxWait, Category: cat, Destination: &b.MaxWait,
				Usage: "the amount of time to wait before force writing the batch that hadn't reached the max size (batch mode)"},
			&cli.BoolFlag{Name: p + "throttle-enable", Value: !def.ThrottleOff, Category: cat, Destination: throttle,
				Usage: "whether batching throttling is enabled (batch mode)"},
			&cli.Float64Flag{Name: p + "throttle-qps", Value: float64(def.ThrottleQPS), Category: cat, Destination: qps,
				Usage: "maximum average number of batches per second (batch mode)"},
			&cli.IntFlag{Name: p + "throttle-burst", Value: def.ThrottleBurst, Category: cat, Destination: &b.ThrottleBurst,
				Usage: "maximum number of requests sent at the same moment if ThrottleQPS was not utilized before (batch mode)"},
		}
	}
	truncate := func(backend string, t *audit.TruncateOptions, def audit.TruncateOptions) []cli.Flag {
		p := "audit-" + backend + "-truncate-"
		return []cli.Flag{
			&cli.BoolFlag{Name: p + "enabled", Category: cat, Destination: &t.Enabled,
				Usage: "whether event and batch truncating is enabled"},
			&cli.Int64Flag{Name: p + "max-batch-size", Value: def.MaxBatchSize, Category: cat, Destination: &t.MaxBatchSize,
				Usage: "maximum size in bytes of the batch sent to the underlying backend; a larger batch is split"},
			&cli.Int64Flag{Name: p + "max-event-size", Value: def.MaxEventSize, Category: cat, Destination: &t.MaxEventSize,
				Usage: "maximum size in bytes of an audit event sent to the underlying backend: a larger one loses its request and response, or is dropped if that is not enough"},
		}
	}
	flags := []cli.Flag{
		&cli.StringFlag{Name: "audit-policy-file", Category: cat, Destination: &o.PolicyFile,
			Usage: "an audit.k8s.io/v1 Policy: which requests are written to the audit log or webhook, at which level"},
		&cli.StringFlag{Name: "audit-log-path", Category: cat, Destination: &o.LogPath,
			Usage: "write audit events to this file; '-' means standard out"},
		&cli.IntFlag{Name: "audit-log-maxage", Value: d.LogMaxAge, Category: cat, Destination: &o.LogMaxAge,
			Usage: "the maximum number of days to retain old audit log files (0: no limit by age)"},
		&cli.IntFlag{Name: "audit-log-maxbackup", Value: d.LogMaxBackups, Category: cat, Destination: &o.LogMaxBackups,
			Usage: "the maximum number of old audit log files to retain (0: no limit)"},
		&cli.IntFlag{Name: "audit-log-maxsize", Value: d.LogMaxSize, Category: cat, Destination: &o.LogMaxSize,
			Usage: "the maximum size in megabytes of the audit log file before it gets rotated (0: never)"},
		&cli.StringFlag{Name: "audit-log-format", Value: d.LogFormat, Category: cat, Destination: &o.LogFormat,
			Usage: "format of saved audits: json (structured, one Event a line) or legacy (one line of text)"},
		&cli.BoolFlag{Name: "audit-log-compress", Category: cat, Destination: &o.LogCompress,
			Usage: "gzip the rotated log files"},
		&cli.StringFlag{Name: "audit-log-mode", Value: d.LogMode, Category: cat, Destination: &o.LogMode,
			Usage: "batch (buffered, written in the background) or blocking (each event written before the request goes on)"},
		&cli.StringFlag{Name: "audit-log-version", Value: d.LogVersion, Category: cat, Destination: &o.LogVersion,
			Usage: "API group and version used for serializing audit events written to the log (audit.k8s.io/v1)"},
		&cli.StringFlag{Name: "audit-webhook-version", Value: d.WebhookVersion, Category: cat, Destination: &o.WebhookVersion,
			Usage: "API group and version used for serializing audit events sent to the webhook (audit.k8s.io/v1)"},
		&cli.StringFlag{Name: "audit-webhook-config-file", Category: cat, Destination: &o.WebhookConfigFile,
			Usage: "a kubeconfig-formatted file naming the audit webhook to send events to"},
		&cli.DurationFlag{Name: "audit-webhook-initial-backoff", Value: d.WebhookInitialBackoff, Category: cat, Destination: &o.WebhookInitialBackoff,
			Usage: "the amount of time to wait before retrying the first failed request"},
		&cli.StringFlag{Name: "audit-webhook-mode", Value: d.WebhookMode, Category: cat, Destination: &o.WebhookMode,
			Usage: "batch (buffered, sent in the background) or blocking (each event sent before the request goes on)"},
		&cli.IntFlag{Name: "recent-requests", Value: audit.DefaultRingSize, Category: cat, Destination: &o.RingSize,
			Usage: "how many recent requests devplane requests can show (always kept, in memory)"},
	}
	flags = append(flags, batch("log", &o.LogBatch, d.LogBatch, &f.logThrottle, &f.logThrottleQPS)...)
	flags = append(flags, batch("webhook", &o.WebhookBatch, d.WebhookBatch, &f.webhookThrottle, &f.webhookThrottleQPS)...)
	flags = append(flags, truncate("log", &o.LogTruncate, d.LogTruncate)...)
	return append(flags, truncate("webhook", &o.WebhookTruncate, d.WebhookTruncate)...)
}

// options are the flags' values as audit.Options.
func (f *auditFlags) options() audit.Options {
	o := f.o
	o.LogBatch.ThrottleOff, o.LogBatch.ThrottleQPS = !f.logThrottle, float32(f.logThrottleQPS)
	o.WebhookBatch.ThrottleOff, o.WebhookBatch.ThrottleQPS = !f.webhookThrottle, float32(f.webhookThrottleQPS)
	return o
}
