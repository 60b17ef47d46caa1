// Package filters wraps every request the way kube-apiserver's handler chain
// does: panic recovery, request info, logging, authentication, in-flight
// limits and timeouts. Only the head of the delegation chain applies them,
// once, before dispatching down the chain.
package filters

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"runtime/debug"
	"strings"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/devplane/devplane/apiserver/audit"
	"github.com/devplane/devplane/apiserver/authn"
	"github.com/devplane/devplane/apiserver/request"
)

// WriteStatus answers with err as a JSON metav1.Status. Filters run before
// content negotiation, so they always speak JSON, as kube's do.
func WriteStatus(w http.ResponseWriter, err error) {
	var status metav1.Status
	var apiStatus apierrors.APIStatus
	if errors.As(err, &apiStatus) {
		status = apiStatus.Status()
	} else {
		status = apierrors.NewInternalError(err).Status()
	}
	status.Kind = "Status"
	status.APIVersion = "v1"
	body, _ := json.Marshal(&status)
	audit.LogStatusTo(w, &status, body)
	w.Header().Set("Content-Type", "application/json")
	w.Header().Set("X-Content-Type-Options", "nosniff")
	code := int(status.Code)
	if code == 0 {
		code = http.StatusInternalServerError
	}
	w.WriteHeader(code)
	_, _ = w.Write(body)
}

// WithPanicRecovery turns a handler panic into a 500 Status and a log line
// with the stack, so one bad request never takes the server down.
func WithPanicRecovery(h http.Handler, logger *slog.Logger) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		defer func() {
			if v := recover(); v != nil {
				if v == http.ErrAbortHandler { // the client went away: let net/http handle it
					panic(v)
				}
				logger.Error("panic serving request", "method", r.Method, "path", r.URL.Path,
					"panic", v, "stack", string(debug.Stack()))
				WriteStatus(w, apierrors.NewInternalError(fmt.Errorf("panic: %v", v)))
			}
		}()
		h.ServeHTTP(w, r)
	})
}

// WithRequestInfo parses the path once so every later stage (limits,
// timeouts, dispatch, authorization) reads the same answer.
func WithRequestInfo(h http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		info, err := request.Parse(r)
		if err != nil {
			WriteStatus(w, apierrors.NewBadRequest(err.Error()))
			return
		}
		h.ServeHTTP(w, r.WithContext(request.WithRequestInfo(r.Context(), info)))
	})
}

// WithLogging logs each request at debug level with its outcome.
func WithLogging(h http.Handler, logger *slog.Logger) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if !logger.Enabled(r.Context(), slog.LevelDebug) {
			h.ServeHTTP(w, r)
			return
		}
		start := time.Now()
		rw := &statusRecorder{ResponseWriter: w}
		h.ServeHTTP(rw, r)
		user := ""
		if u, ok := request.UserFrom(r.Context()); ok {
			user = u.Name
		}
		logger.Debug("request", "method", r.Method, "uri", r.URL.RequestURI(), "status", rw.code(),
			"user", user, "duration", time.Since(start), "proto", r.Proto)
	})
}

// AnonymousAllowed lists the paths an unauthenticated client may reach.
func AnonymousAllowed(path string) bool {
	switch path {
	case "/healthz", "/livez", "/readyz", "/version":
		return true
	}
	for _, p := range []string{"/healthz/", "/livez/", "/readyz/"} {
		if strings.HasPrefix(path, p) {
			return true
		}
	}
	return false
}

// WithAuthentication puts the requesting user into the context. Invalid
// credentials are a 401; no credentials make the request anonymous, which
// allowAnonymous decides on (a 401 Status when it says no).
func WithAuthentication(h http.Handler, a authn.Authenticator, allowAnonymous func(r *http.Request) bool, logger *slog.Logger) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		user, ok, err := a.AuthenticateRequest(r)
		if err != nil {
			logger.Info("authentication failed", "path", r.URL.Path, "err", err)
			audit.FailedAuthentication(r.Context())
			WriteStatus(w, apierrors.NewUnauthorized("Unauthorized"))
			return
		}
		if !ok {
			if !allowAnonymous(r) {
				audit.FailedAuthentication(r.Context())
				WriteStatus(w, apierrors.NewUnauthorized("Unauthorized"))
				return
			}
			user = authn.AnonymousUser()
		}
		// The credentials have done their job; extension servers must never see them.
		r.Header.Del("Authorization")
		h.ServeHTTP(w, r.WithContext(request.WithUser(r.Context(), user)))
	})
}

// WithMaxInFlight bounds concurrent requests: readOnly for reads and
// mutating for writes; past the bound a request gets 429 with Retry-After,
// which client-go honours. Long-running requests (watches) are not counted.
func WithMaxInFlight(h http.Handler, readOnly, mutating int) http.Handler {
	if readOnly <= 0 && mutating <= 0 {
		return h
	}
	var readSem, writeSem chan struct{}
	if readOnly > 0 {
		readSem = make(chan struct{}, readOnly)
	}
	if mutating > 0 {
		writeSem = make(chan struct{}, mutating)
	}
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		info, _ := request.RequestInfoFrom(r.Context())
		if info != nil && request.IsLongRunning(info) {
			h.ServeHTTP(w, r)
			return
		}
		sem := readSem
		if info != nil && request.IsMutating(info.Verb) {
			sem = writeSem
		}
		if sem == nil {
			h.ServeHTTP(w, r)
			return
		}
		select {
		case sem <- struct{}{}:
			defer func() { <-sem }()
			h.ServeHTTP(w, r)
		default:
			w.Header().Set("Retry-After", "1")
			WriteStatus(w, apierrors.NewTooManyRequests("Too many requests, please try again later.", 1))
		}
	})
}

// WithTimeout gives each short request a deadline; storage calls honour it.
// Watches have their own timeoutSeconds and are left alone.
func WithTimeout(h http.Handler, timeout time.Duration) http.Handler {
	if timeout <= 0 {
		return h
	}
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		info, _ := request.RequestInfoFrom(r.Context())
		if info != nil && request.IsLongRunning(info) {
			h.ServeHTTP(w, r)
			return
		}
		d := timeout
		if s := r.URL.Query().Get("timeout"); s != "" {
			if v, err := time.ParseDuration(s); err == nil && v > 0 && v < d {
				d = v
			}
		}
		ctx, cancel := context.WithTimeout(r.Context(), d)
		defer cancel()
		h.ServeHTTP(w, r.WithContext(ctx))
	})
}

// WithLongRunningStop ends long-running requests (watches) when stop closes,
// so a graceful shutdown does not wait for clients that never hang up.
func WithLongRunningStop(h http.Handler, stop <-chan struct{}) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		info, _ := request.RequestInfoFrom(r.Context())
		if info == nil || !request.IsLongRunning(info) {
			h.ServeHTTP(w, r)
			return
		}
		ctx, cancel := context.WithCancel(r.Context())
		defer cancel()
		go func() {
			select {
			case <-stop:
				cancel()
			case <-ctx.Done():
			}
		}()
		h.ServeHTTP(w, r.WithContext(ctx))
	})
}

// statusRecorder remembers the status code while keeping the writer's
// optional interfaces (Flush for watch streams, Hijack for upgrades).
type statusRecorder struct {
	http.ResponseWriter
	status int
}

func (s *statusRecorder) WriteHeader(code int) {
	if s.status == 0 {
		s.status = code
	}
	s.ResponseWriter.WriteHeader(code)
}

func (s *statusRecorder) Write(b []byte) (int, error) {
	if s.status == 0 {
		s.status = http.StatusOK
	}
	return s.ResponseWriter.Write(b)
}

func (s *statusRecorder) code() int {
	if s.status == 0 {
		return http.StatusOK
	}
	return s.status
}

func (s *statusRecorder) Flush() {
	if f, ok := s.ResponseWriter.(http.Flusher); ok {
		f.Flush()
	}
}

func (s *statusRecorder) Hijack() (net.Conn, *bufio.ReadWriter, error) {
	if h, ok := s.ResponseWriter.(http.Hijacker); ok {
		return h.Hijack()
	}
	return nil, nil, fmt.Errorf("response writer does not support hijacking")
}

func (s *statusRecorder) Unwrap() http.ResponseWriter { return s.ResponseWriter }

// WithCompressionDisabledFor marks requests from clients in cidrs so their
// responses are not gzipped: on loopback or a fast local network gzip only
// adds CPU on both ends and latency to large lists.
func WithCompressionDisabledFor(h http.Handler, cidrs []*net.IPNet) http.Handler {
	if len(cidrs) == 0 {
		return h
	}
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		host, _, err := net.SplitHostPort(r.RemoteAddr)
		if err != nil {
			host = r.RemoteAddr
		}
		if ip := net.ParseIP(host); ip != nil {
			for _, n := range cidrs {
				if n.Contains(ip) {
					r = r.WithContext(request.WithoutCompression(r.Context()))
					break
				}
			}
		}
		h.ServeHTTP(w, r)
	})
}
