// Package healthz serves /healthz, /livez and /readyz the way kube-apiserver
// does: named checks, "?verbose" lists them, "?exclude=name" skips some,
// "/readyz/<name>" runs one, 200 "ok" when healthy and 500 otherwise. Why a
// check failed goes to the log, never into the body.
package healthz

import (
	"bytes"
	"fmt"
	"log/slog"
	"net/http"
	"sort"
	"strings"
	"sync"
)

// Checker is one named health check.
type Checker interface {
	Name() string
	Check(r *http.Request) error
}

// NamedCheck makes a Checker from a function.
func NamedCheck(name string, check func(r *http.Request) error) Checker {
	return &funcCheck{name: name, check: check}
}

type funcCheck struct {
	name  string
	check func(r *http.Request) error
}

func (c *funcCheck) Name() string                { return c.name }
func (c *funcCheck) Check(r *http.Request) error { return c.check(r) }

// Ping always succeeds: the server answers HTTP.
var Ping = NamedCheck("ping", func(*http.Request) error { return nil })

// Log succeeds while logging works (it never blocks in devplane: slog
// handlers write synchronously), as kube-apiserver's "log" check.
var Log = NamedCheck("log", func(*http.Request) error { return nil })

// Set is a mutable, ordered list of checks behind one endpoint.
type Set struct {
	mu     sync.RWMutex
	name   string // "healthz", "livez", "readyz"
	checks []Checker
	logger *slog.Logger
}

// NewSet returns an empty set for the endpoint name ("readyz").
func NewSet(name string, logger *slog.Logger) *Set {
	if logger == nil {
		logger = slog.Default()
	}
	return &Set{name: name, logger: logger}
}

// Add appends checks; a name already present is an error.
func (s *Set) Add(checks ...Checker) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	for _, c := range checks {
		for _, have := range s.checks {
			if have.Name() == c.Name() {
				return fmt.Errorf("%s check %q is already registered", s.name, c.Name())
			}
		}
		s.checks = append(s.checks, c)
	}
	return nil
}

// Checks returns the registered checks in order.
func (s *Set) Checks() []Checker {
	s.mu.RLock()
	defer s.mu.RUnlock()
	return append([]Checker(nil), s.checks...)
}

// Result is the outcome of one check.
type Result struct {
	Name string
	Err  error
}

// Run runs every check not excluded and returns the results in order.
func (s *Set) Run(r *http.Request, exclude map[string]bool) []Result {
	checks := s.Checks()
	out := make([]Result, 0, len(checks))
	for _, c := range checks {
		if exclude[c.Name()] {
			continue
		}
		out = append(out, Result{Name: c.Name(), Err: c.Check(r)})
	}
	return out
}

// ServeHTTP answers "/<name>" and "/<name>/<check>".
func (s *Set) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	w.Header().Set("Content-Type", "text/plain; charset=utf-8")
	w.Header().Set("X-Content-Type-Options", "nosniff")
	if one := strings.TrimPrefix(strings.TrimPrefix(r.URL.Path, "/"+s.name), "/"); one != "" {
		s.serveOne(w, r, one)
		return
	}
	exclude := map[string]bool{}
	for _, e := range r.URL.Query()["exclude"] {
		for _, name := range strings.Split(e, ",") {
			exclude[strings.TrimSpace(name)] = true
		}
	}
	results := s.Run(r, exclude)
	var body bytes.Buffer
	failed := []string{}
	for _, res := range results {
		if res.Err != nil {
			failed = append(failed, res.Name)
			fmt.Fprintf(&body, "[-]%s failed: reason withheld\n", res.Name)
			s.logger.Info(s.name+" check failed", "check", res.Name, "err", res.Err)
		} else {
			fmt.Fprintf(&body, "[+]%s ok\n", res.Name)
		}
	}
	for name := range exclude {
		if !s.has(name) {
			fmt.Fprintf(&body, "warn: some health checks cannot be excluded: no matches for %q\n", name)
		}
	}
	_, verbose := r.URL.Query()["verbose"]
	if len(failed) > 0 {
		sort.Strings(failed)
		fmt.Fprintf(&body, "%s check failed\n", s.name)
		w.WriteHeader(http.StatusInternalServerError)
		_, _ = w.Write(body.Bytes())
		return
	}
	if verbose {
		fmt.Fprintf(&body, "%s check passed\n", s.name)
		_, _ = w.Write(body.Bytes())
		return
	}
	_, _ = w.Write([]byte("ok"))
}

func (s *Set) has(name string) bool {
	for _, c := range s.Checks() {
		if c.Name() == name {
			return true
		}
	}
	return false
}

func (s *Set) serveOne(w http.ResponseWriter, r *http.Request, name string) {
	for _, c := range s.Checks() {
		if c.Name() != name {
			continue
		}
		if err := c.Check(r); err != nil {
			s.logger.Info(s.name+" check failed", "check", name, "err", err)
			w.WriteHeader(http.StatusInternalServerError)
			fmt.Fprintf(w, "[-]%s failed: reason withheld\n%s check failed\n", name, s.name)
			return
		}
		_, _ = w.Write([]byte("ok"))
		return
	}
	http.NotFound(w, r)
}
