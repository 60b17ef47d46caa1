package sandbox

import (
	"bytes"
	"io"
	"sync"
	"time"

	"k8s.io/utils/clock"
)

// Stream tells a container's standard output from its standard error.
type Stream uint8

const (
	Stdout Stream = iota
	Stderr
)

func (s Stream) String() string {
	if s == Stderr {
		return "stderr"
	}
	return "stdout"
}

// DefaultLogLimit is how many bytes of output a container's log keeps in
// memory (the oldest lines go first, as after a rotation): a tenth of the
// kubelet's containerLogMaxSize, as devplane keeps every log in its heap.
const DefaultLogLimit = 1 << 20

// maxLineLength splits longer lines, as container runtimes write lines of
// at most 16 KiB and mark the pieces partial.
const maxLineLength = 16 << 10

// LogLine is one line a container wrote, stamped when it was written.
type LogLine struct {
	Time   time.Time
	Stream Stream
	// Text is the line without its newline.
	Text []byte
	// Partial marks a piece of a longer line, or a last line that had no
	// newline.
	Partial bool
}

// Log is a container's captured output: lines with their time and stream,
// bounded like a rotated log file (the oldest lines go first).
type Log struct {
	clock clock.PassiveClock
	limit int

	mu      sync.Mutex
	lines   []LogLine
	size    int
	pending [2][]byte
	pendAt  [2]time.Time
	changed chan struct{}
	// attached are the attach sessions receiving what is written, as it
	// is written (a new slice on each change).
	attached []*attachment
}

// NewLog returns an empty log keeping at most limit bytes (0: the default).
func NewLog(clk clock.PassiveClock, limit int) *Log {
	if limit <= 0 {
		limit = DefaultLogLimit
	}
	if clk == nil {
		clk = clock.RealClock{}
	}
	return &Log{clock: clk, limit: limit, changed: make(chan struct{})}
}

type streamWriter struct {
	log    *Log
	stream Stream
}

func (w *streamWriter) Write(p []byte) (int, error) {
	for _, a := range w.log.write(w.stream, p) {
		a.write(w.stream, p)
	}
	return len(p), nil
}

// Writer returns the writer a container's stream goes to.
func (l *Log) Writer(s Stream) io.Writer { return &streamWriter{log: l, stream: s} }

// write adds what a stream wrote; it returns the attach sessions to give
// it to.
func (l *Log) write(s Stream, p []byte) []*attachment {
	l.mu.Lock()
	defer l.mu.Unlock()
	now := l.clock.Now()
	added := false
	for len(p) > 0 {
		if len(l.pending[s]) == 0 {
			l.pendAt[s] = now
		}
		i := bytes.IndexByte(p, '\n')
		room := maxLineLength - len(l.pending[s])
		switch {
		case i >= 0 && i <= room:
			l.appendLine(LogLine{Time: l.pendAt[s], Stream: s, Text: append(l.pending[s], p[:i]...)})
			l.pending[s] = nil
			p = p[i+1:]
			added = true
		case len(p) >= room:
			l.appendLine(LogLine{Time: l.pendAt[s], Stream: s, Text: append(l.pending[s], p[:room]...), Partial: true})
			l.pending[s] = nil
			p = p[room:]
			added = true
		default:
			l.pending[s] = append(l.pending[s], p...)
			p = nil
		}
	}
	if added {
		l.notifyLocked()
	}
	return l.attached
}

func (l *Log) appendLine(line LogLine) {
	l.lines = append(l.lines, line)
	l.size += len(line.Text) + 1
	drop := 0
	for l.size > l.limit && drop < len(l.lines)-1 {
		l.size -= len(l.lines[drop].Text) + 1
		drop++
	}
	if drop > 0 {
		l.lines = append(l.lines[:0:0], l.lines[drop:]...)
	}
}

func (l *Log) notifyLocked() {
	close(l.changed)
	l.changed = make(chan struct{})
}

// Flush ends the lines still without a newline, as when the container exits.
func (l *Log) Flush() {
	l.mu.Lock()
	defer l.mu.Unlock()
	added := false
	for s := range l.pending {
		if len(l.pending[s]) > 0 {
			l.appendLine(LogLine{Time: l.pendAt[s], Stream: Stream(s), Text: l.pending[s], Partial: true})
			l.pending[s] = nil
			added = true
		}
	}
	if added {
		l.notifyLocked()
	}
}

// Lines returns the lines kept so far.
func (l *Log) Lines() []LogLine {
	l.mu.Lock()
	defer l.mu.Unlock()
	return append([]LogLine(nil), l.lines...)
}

// Changed returns a channel closed when the next line is added, for
// following the log.
func (l *Log) Changed() <-chan struct{} {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.changed
}

// LogOptions are the options of pods/log that select and shape lines.
type LogOptions struct {
	// Timestamps prefixes each line with its RFC 3339 time.
	Timestamps bool
	// Since keeps the lines written at or after it (zero: all).
	Since time.Time
	// TailLines keeps the last lines only (negative: all).
	TailLines int64
	// LimitBytes cuts the output at that many bytes (0: no limit).
	LimitBytes int64
}

// Format writes the selected lines as `kubectl logs` prints them.
func Format(lines []LogLine, opts LogOptions) []byte {
	start := 0
	if !opts.Since.IsZero() {
		for start < len(lines) && lines[start].Time.Before(opts.Since) {
			start++
		}
	}
	if opts.TailLines >= 0 && int64(len(lines)-start) > opts.TailLines {
		start = len(lines) - int(opts.TailLines)
	}
	var out []byte
	for _, line := range lines[start:] {
		if opts.Timestamps {
			out = line.Time.UTC().AppendFormat(out, time.RFC3339Nano)
			out = append(out, ' ')
		}
		out = append(out, line.Text...)
		if !line.Partial {
			out = append(out, '\n')
		}
		if opts.LimitBytes > 0 && int64(len(out)) >= opts.LimitBytes {
			return out[:opts.LimitBytes]
		}
	}
	return out
}
