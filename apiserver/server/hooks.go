package server

import (
	"context"
	"fmt"
	"net/http"
	"sync"
	"time"

	"github.com/devplane/devplane/apiserver/healthz"
)

// PostStartHookFunc runs once the server listens. ctx ends at shutdown.
type PostStartHookFunc func(ctx context.Context) error

// HookState is where a post-start hook is in its life.
type HookState int

const (
	HookPending HookState = iota
	HookRunning
	HookDone
	HookFailed
)

func (s HookState) String() string {
	return [...]string{"pending", "running", "done", "failed"}[s]
}

// PostStartHook is a named hook with its progress, which the readyz check
// "poststarthook/<name>" and the dashboard report.
type PostStartHook struct {
	Name   string
	Server string // which server of the chain registered it
	fn     PostStartHookFunc

	mu       sync.Mutex
	state    HookState
	started  time.Time
	finished time.Time
	err      error
}

// HookStatus is a snapshot of a hook's progress.
type HookStatus struct {
	Name     string
	Server   string
	State    HookState
	Duration time.Duration
	Err      error
}

// Status returns the hook's progress now.
func (h *PostStartHook) Status() HookStatus {
	h.mu.Lock()
	defer h.mu.Unlock()
	st := HookStatus{Name: h.Name, Server: h.Server, State: h.state, Err: h.err}
	switch h.state {
	case HookRunning:
		st.Duration = time.Since(h.started)
	case HookDone, HookFailed:
		st.Duration = h.finished.Sub(h.started)
	}
	return st
}

func (h *PostStartHook) run(ctx context.Context) {
	h.mu.Lock()
	h.state, h.started = HookRunning, time.Now()
	h.mu.Unlock()
	err := func() (err error) {
		defer func() {
			if v := recover(); v != nil {
				err = fmt.Errorf("post-start hook %q panicked: %v", h.Name, v)
			}
		}()
		return h.fn(ctx)
	}()
	h.mu.Lock()
	h.finished, h.err = time.Now(), err
	if err != nil {
		h.state = HookFailed
	} else {
		h.state = HookDone
	}
	h.mu.Unlock()
}

// check fails until the hook has finished successfully.
func (h *PostStartHook) check() healthz.Checker {
	return healthz.NamedCheck("poststarthook/"+h.Name, func(*http.Request) error {
		st := h.Status()
		switch st.State {
		case HookDone:
			return nil
		case HookFailed:
			return st.Err
		default:
			return fmt.Errorf("not finished")
		}
	})
}

type hookSet struct {
	mu      sync.Mutex
	hooks   []*PostStartHook
	started bool
}

func newHookSet() *hookSet { return &hookSet{} }

func (s *hookSet) add(h *PostStartHook) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.started {
		return fmt.Errorf("cannot add post-start hook %q: the server has already started", h.Name)
	}
	for _, have := range s.hooks {
		if have.Name == h.Name {
			return fmt.Errorf("post-start hook %q is already registered", h.Name)
		}
	}
	s.hooks = append(s.hooks, h)
	return nil
}

func (s *hookSet) list() []*PostStartHook {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]*PostStartHook(nil), s.hooks...)
}

// AddPostStartHook registers fn to run in its own goroutine once the server
// listens; a readyz check "poststarthook/<name>" fails until it is done.
// Registering after start is an error.
func (s *GenericAPIServer) AddPostStartHook(name string, fn PostStartHookFunc) error {
	if name == "" || fn == nil {
		return fmt.Errorf("post-start hook needs a name and a function")
	}
	h := &PostStartHook{Name: name, Server: s.name, fn: fn}
	if err := s.hooks.add(h); err != nil {
		return err
	}
	return s.readyz.Add(h.check())
}

// HookStatuses reports every hook of this server and those below it.
func (s *GenericAPIServer) HookStatuses() []HookStatus {
	hooks := s.hooks.list()
	out := make([]HookStatus, len(hooks))
	for i, h := range hooks {
		out[i] = h.Status()
	}
	return out
}

func (s *GenericAPIServer) runPostStartHooks(ctx context.Context) {
	s.hooks.mu.Lock()
	s.hooks.started = true
	hooks := append([]*PostStartHook(nil), s.hooks.hooks...)
	s.hooks.mu.Unlock()
	for _, h := range hooks {
		go func(h *PostStartHook) {
			h.run(ctx)
			if st := h.Status(); st.State == HookFailed {
				s.logger.Error("post-start hook failed", "hook", h.Name, "err", st.Err)
			}
		}(h)
	}
}

// PreShutdownHook runs after the server stops accepting requests and
// before storage closes.
type PreShutdownHook struct {
	Name string
	Fn   func() error
}

// AddPreShutdownHook registers fn to run during graceful shutdown.
func (s *GenericAPIServer) AddPreShutdownHook(name string, fn func() error) error {
	for _, h := range s.preShutdownHooks {
		if h.Name == name {
			return fmt.Errorf("pre-shutdown hook %q is already registered", name)
		}
	}
	s.preShutdownHooks = append(s.preShutdownHooks, &PreShutdownHook{Name: name, Fn: fn})
	return nil
}
