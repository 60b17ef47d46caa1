package embedded

import (
	"context"
	"log/slog"
	"strings"
	"sync/atomic"

	"go.uber.org/zap"
	"go.uber.org/zap/zapcore"
)

// newZapLogger returns a zap logger whose entries at minLevel and above are
// written to logger. etcd and clientv3 only speak zap; devplane speaks slog.
// Entries that noise.expected recognises are written at Debug instead.
func newZapLogger(logger *slog.Logger, minLevel zapcore.Level, noise *noiseFilter) *zap.Logger {
	return zap.New(&slogCore{logger: logger, minLevel: minLevel, noise: noise})
}

// noiseFilter recognises etcd warnings and errors that are expected in
// devplane's setup, so that WARN and ERROR in devplane's log mean trouble.
type noiseFilter struct {
	// stopping is set once devplane closes etcd; shutdown makes etcd's
	// serving goroutines report their closed listeners as errors.
	stopping atomic.Bool
}

// alwaysExpected are messages about choices devplane makes on purpose.
var alwaysExpected = map[string]bool{
	// devplane's etcd clients speak gRPC only; a separate HTTP port buys nothing.
	"Running http and grpc server on single port. This is not recommended for production.": true,
	// devplane does not enable etcd auth, so no tokens are ever issued.
	"simple token is not cryptographically signed": true,
}

// expectedWhileStopping are the errors etcd logs as its listeners close.
var expectedWhileStopping = map[string]bool{
	"setting up serving from embedded etcd failed.": true,
	"stopping insecure grpc server due to error":    true,
	"stopped insecure grpc server due to error":     true,
	"failed to update cluster version":              true,
}

func (f *noiseFilter) expected(entry zapcore.Entry, fields map[string]any) bool {
	if f == nil {
		return false
	}
	if alwaysExpected[entry.Message] {
		return true
	}
	// On a fresh data dir the storage-version monitor can run before the
	// first term is persisted; it retries and succeeds moments later.
	if errText, ok := fields["error"].(string); ok && strings.Contains(errText, "missing term information") {
		return true
	}
	return f.stopping.Load() && expectedWhileStopping[entry.Message]
}

// slogCore is a zapcore.Core that forwards entries to an slog.Logger.
type slogCore struct {
	logger   *slog.Logger
	minLevel zapcore.Level
	noise    *noiseFilter
	// fields attached with With; encoded lazily on Write.
	fields []zapcore.Field
}

func (c *slogCore) Enabled(level zapcore.Level) bool {
	return level >= c.minLevel && c.logger.Enabled(context.Background(), slogLevel(level))
}

func (c *slogCore) With(fields []zapcore.Field) zapcore.Core {
	merged := make([]zapcore.Field, 0, len(c.fields)+len(fields))
	merged = append(merged, c.fields...)
	merged = append(merged, fields...)
	return &slogCore{logger: c.logger, minLevel: c.minLevel, noise: c.noise, fields: merged}
}

func (c *slogCore) Check(entry zapcore.Entry, checked *zapcore.CheckedEntry) *zapcore.CheckedEntry {
	if c.Enabled(entry.Level) {
		return checked.AddCore(entry, c)
	}
	return checked
}

func (c *slogCore) Write(entry zapcore.Entry, fields []zapcore.Field) error {
	encoder := zapcore.NewMapObjectEncoder()
	for _, field := range c.fields {
		field.AddTo(encoder)
	}
	for _, field := range fields {
		field.AddTo(encoder)
	}
	level := slogLevel(entry.Level)
	if c.noise.expected(entry, encoder.Fields) {
		level = slog.LevelDebug
	}
	attrs := make([]slog.Attr, 0, len(encoder.Fields)+1)
	attrs = append(attrs, slog.String("component", "etcd"))
	if entry.LoggerName != "" {
		attrs = append(attrs, slog.String("logger", entry.LoggerName))
	}
	for key, value := range encoder.Fields {
		attrs = append(attrs, slog.Any(key, value))
	}
	c.logger.LogAttrs(context.Background(), level, entry.Message, attrs...)
	return nil
}

func (c *slogCore) Sync() error { return nil }

func slogLevel(level zapcore.Level) slog.Level {
	switch {
	case level >= zapcore.ErrorLevel:
		return slog.LevelError
	case level == zapcore.WarnLevel:
		return slog.LevelWarn
	case level == zapcore.InfoLevel:
		return slog.LevelInfo
	default:
		return slog.LevelDebug
	}
}
