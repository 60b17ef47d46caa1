package audit

import (
	"bufio"
	"errors"
	"net"
	"net/http"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// responseWriter is the writer an audited request answers through: it
// tells the record the response's code (the ResponseStarted stage of a
// watch) and counts its bytes, keeping Flush and Hijack. It lives in the
// Record, so a request costs one allocation for both.
type responseWriter struct {
	http.ResponseWriter
	rec     *Record
	bytes   int64
	started bool
}

func (w *responseWriter) WriteHeader(code int) {
	if !w.started {
		w.started = true
		w.rec.auditor.responseStarted(w.rec, code)
	}
	w.ResponseWriter.WriteHeader(code)
}

func (w *responseWriter) Write(b []byte) (int, error) {
	if !w.started {
		w.started = true
		w.rec.auditor.responseStarted(w.rec, http.StatusOK)
	}
	n, err := w.ResponseWriter.Write(b)
	w.bytes += int64(n)
	return n, err
}

func (w *responseWriter) Flush() {
	if f, ok := w.ResponseWriter.(http.Flusher); ok {
		f.Flush()
	}
}

func (w *responseWriter) Hijack() (net.Conn, *bufio.ReadWriter, error) {
	h, ok := w.ResponseWriter.(http.Hijacker)
	if !ok {
		return nil, nil, errors.New("response writer does not support hijacking")
	}
	if !w.started {
		w.started = true
		w.rec.auditor.responseStarted(w.rec, http.StatusSwitchingProtocols)
	}
	return h.Hijack()
}

func (w *responseWriter) Unwrap() http.ResponseWriter { return w.ResponseWriter }

// LogResponseStatus takes the Status a filter answers with (LogStatusTo).
func (w *responseWriter) LogResponseStatus(st *metav1.Status, body []byte) {
	w.rec.LogResponseStatus(st, body)
}
