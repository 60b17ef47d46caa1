package aggregator

import (
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"strings"
	"sync"
	"time"

	clientv3 "go.etcd.io/etcd/client/v3"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/watch"
	apiregv1 "k8s.io/kube-aggregator/pkg/apis/apiregistration/v1"

	"github.com/devplane/devplane/apiserver/endpoints"
	"github.com/devplane/devplane/apiserver/healthz"
	"github.com/devplane/devplane/apiserver/registry"
	"github.com/devplane/devplane/apiserver/request"
	"github.com/devplane/devplane/apiserver/server"
	"github.com/devplane/devplane/apiserver/storage"
	"github.com/devplane/devplane/certs"
)

// Deps is what the aggregator needs from the control plane.
type Deps struct {
	// Server is the aggregator link of the delegation chain (head).
	Server *server.GenericAPIServer
	// Client is the etcd client APIServices are stored with.
	Client *clientv3.Client
	// Certs provides the front-proxy client identity and the CAs.
	Certs *certs.Bundle
	// Registries are the delegates' registries (core, extensions): the
	// group/versions they serve become local APIServices, and the core one
	// serves the Services, Endpoints, EndpointSlices and ConfigMaps used here.
	Registries []*registry.Registry
	// Dynamic, one of Registries, serves what CRDs define: its
	// group/versions' APIServices are automanaged "true", not "onstart".
	Dynamic *registry.Registry
	// DynamicSynced, when set, returns once Dynamic serves what storage
	// held at start (the extensions server's CRDs).
	DynamicSynced func(ctx context.Context) error
	Logger        *slog.Logger
	// OpenAPI, when set, receives the remote APIServices' OpenAPI
	// documents (see runOpenAPI).
	OpenAPI OpenAPISink
}

// Aggregator is an installed aggregator.
type Aggregator struct {
	deps     Deps
	logger   *slog.Logger
	reg      *registry.Registry // apiregistration.k8s.io, served by the aggregator itself
	store    *registry.Store
	cacher   *storage.Cacher
	frontTLS tls.Certificate

	startOnce sync.Once
	synced    chan struct{} // closed after the first list of APIServices

	mu       sync.RWMutex
	services map[string]*apiregv1.APIService // by name, as last seen in storage
	backends map[string]*backend             // remote APIServices' transports, by name

	discovery *discoveryCache

	kickRegistration, kickAvailability, kickDiscovery chan struct{}
	kickOpenAPI                                       chan struct{}
}

// User is who the aggregator's own storage calls and probes act as.
var User = &request.User{Name: "system:kube-aggregator", Groups: []string{"system:masters"}}

func systemContext(ctx context.Context) context.Context { return request.WithUser(ctx, User) }

// Install serves apiregistration.k8s.io/v1 from the aggregator link,
// routes remote group/versions to their backends, merges discovery, and
// adds the post-start hooks and readyz checks that keep it all current.
func Install(deps Deps) (*Aggregator, error) {
	if deps.Server == nil || deps.Client == nil || deps.Certs == nil {
		return nil, errors.New("aggregator: Server, Client and Certs are required")
	}
	if deps.Logger == nil {
		deps.Logger = slog.Default()
	}
	front, err := deps.Certs.FrontProxyClient.TLSCertificate()
	if err != nil {
		return nil, fmt.Errorf("aggregator: front-proxy client certificate: %w", err)
	}
	cfg := StorageConfig()
	cacher, err := storage.NewCacher(storage.NewStore(deps.Client, cfg), cfg,
		storage.CacherOptions{Logger: deps.Logger.With("component", "watch-cache", "resource", cfg.Resource.String())})
	if err != nil {
		return nil, fmt.Errorf("aggregator: watch cache: %w", err)
	}
	a := &Aggregator{
		deps:             deps,
		logger:           deps.Logger.With("component", "aggregator"),
		reg:              registry.New(),
		cacher:           cacher,
		frontTLS:         front,
		synced:           make(chan struct{}),
		services:         map[string]*apiregv1.APIService{},
		backends:         map[string]*backend{},
		discovery:        newDiscoveryCache(),
		kickRegistration: make(chan struct{}, 1),
		kickAvailability: make(chan struct{}, 1),
		kickDiscovery:    make(chan struct{}, 1),
		kickOpenAPI:      make(chan struct{}, 1),
	}
	res := NewResource(cacher)
	a.reg.Add(res)
	a.store = res.Store
	for _, r := range a.localRegistries() {
		r.OnChange(func() { kick(a.kickRegistration) })
	}

	s := deps.Server
	s.SetAPIHandler(func(next http.Handler) http.Handler {
		own := endpoints.NewAPIHandler(a.reg, endpoints.Options{Scheme: Scheme, Codecs: Codecs, NotFound: next})
		return &handler{a: a, own: own, next: next}
	})
	hooks := []struct {
		name string
		fn   server.PostStartHookFunc
	}{
		{"apiservice-registration-controller", a.runRegistration},
		{"apiservice-status-available-controller", a.runAvailability},
		{"apiservice-discovery-controller", a.runDiscovery},
		{"apiservice-openapi-controller", a.runOpenAPI},
		{"extension-apiserver-authentication", a.runAuthConfig},
	}
	for _, h := range hooks {
		if err := s.AddPostStartHook(h.name, h.fn); err != nil {
			return nil, err
		}
	}
	if err := s.AddPreShutdownHook("stop-apiservice-watch-cache", func() error { cacher.Stop(); return nil }); err != nil {
		return nil, err
	}
	if err := s.AddReadyzChecks(healthz.NamedCheck("autoregister-completion", a.checkAutoregistered)); err != nil {
		return nil, err
	}
	return a, nil
}

// Registry is the registry the aggregator serves (apiservices).
func (a *Aggregator) Registry() *registry.Registry { return a.reg }

// localRegistries are every registry whose group/versions devplane serves.
func (a *Aggregator) localRegistries() []*registry.Registry {
	return append([]*registry.Registry{a.reg}, a.deps.Registries...)
}

// lookup finds a resource in the delegates' registries (services, ...).
func (a *Aggregator) lookup(group, version, resource string) *registry.Store {
	for _, r := range a.deps.Registries {
		if res, ok := r.Lookup(group, version, resource); ok && res.Store != nil {
			return res.Store
		}
	}
	return nil
}

func kick(ch chan struct{}) {
	select {
	case ch <- struct{}{}:
	default:
	}
}

// start runs the APIService informer once, for whichever hook comes first.
func (a *Aggregator) start(ctx context.Context) {
	a.startOnce.Do(func() { go a.runInformer(ctx) })
}

// waitSynced waits for the first APIService list.
func (a *Aggregator) waitSynced(ctx context.Context) error {
	select {
	case <-a.synced:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}

// runInformer keeps a.services equal to storage: list, then watch from the
// list's revision; relist whenever the watch ends.
func (a *Aggregator) runInformer(ctx context.Context) {
	ctx = systemContext(ctx)
	first := true
	for ctx.Err() == nil {
		obj, err := a.store.List(ctx, "", metav1.ListOptions{})
		if err != nil {
			a.logger.Warn("listing APIServices", "err", err)
			sleep(ctx, time.Second)
			continue
		}
		list := obj.(*apiregv1.APIServiceList)
		next := make(map[string]*apiregv1.APIService, len(list.Items))
		for i := range list.Items {
			next[list.Items[i].Name] = list.Items[i].DeepCopy()
		}
		a.mu.Lock()
		a.services = next
		a.mu.Unlock()
		a.changed()
		if first {
			close(a.synced)
			first = false
		}
		w, err := a.store.Watch(ctx, "", metav1.ListOptions{ResourceVersion: list.ResourceVersion})
		if err != nil {
			a.logger.Warn("watching APIServices", "err", err)
			sleep(ctx, time.Second)
			continue
		}
		a.consume(ctx, w)
		w.Stop()
	}
}

func (a *Aggregator) consume(ctx context.Context, w watch.Interface) {
	for {
		select {
		case <-ctx.Done():
			return
		case ev, ok := <-w.ResultChan():
			if !ok {
				return
			}
			s, isService := ev.Object.(*apiregv1.APIService)
			if !isService {
				return // an error event: relist
			}
			a.mu.Lock()
			switch ev.Type {
			case watch.Added, watch.Modified:
				a.services[s.Name] = s.DeepCopy()
			case watch.Deleted:
				delete(a.services, s.Name)
			}
			a.mu.Unlock()
			a.changed()
		}
	}
}

func (a *Aggregator) changed() {
	kick(a.kickRegistration)
	kick(a.kickAvailability)
	kick(a.kickDiscovery)
	kick(a.kickOpenAPI)
}

// apiServices returns a snapshot of the known APIServices (shared: do not modify).
func (a *Aggregator) apiServices() []*apiregv1.APIService {
	a.mu.RLock()
	defer a.mu.RUnlock()
	out := make([]*apiregv1.APIService, 0, len(a.services))
	for _, s := range a.services {
		out = append(out, s)
	}
	return out
}

// remoteFor returns the remote APIService serving gv, if any.
func (a *Aggregator) remoteFor(gv schema.GroupVersion) *apiregv1.APIService {
	a.mu.RLock()
	defer a.mu.RUnlock()
	s := a.services[apiServiceName(gv.Group, gv.Version)]
	if s == nil || isLocal(s) {
		return nil
	}
	return s
}

// servesRemoteGroup reports whether any remote APIService is in group.
func (a *Aggregator) servesRemoteGroup(group string) bool {
	a.mu.RLock()
	defer a.mu.RUnlock()
	for _, s := range a.services {
		if !isLocal(s) && s.Spec.Group == group {
			return true
		}
	}
	return false
}

// sleep waits d or until ctx ends.
func sleep(ctx context.Context, d time.Duration) {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-ctx.Done():
	case <-t.C:
	}
}

// handler routes: merged /apis, remote groups (discovery and proxy),
// apiregistration.k8s.io to the own API handler, the rest to the delegate.
type handler struct {
	a    *Aggregator
	own  http.Handler
	next http.Handler
}

func (h *handler) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	parts := strings.Split(strings.Trim(r.URL.Path, "/"), "/")
	if parts[0] != "apis" {
		h.next.ServeHTTP(w, r)
		return
	}
	switch {
	case len(parts) == 1:
		h.a.serveAPIs(w, r, h.own, h.next)
		return
	case len(parts) >= 3:
		if s := h.a.remoteFor(schema.GroupVersion{Group: parts[1], Version: parts[2]}); s != nil {
			h.a.proxy(w, r, s)
			return
		}
	case len(parts) == 2 && h.a.servesRemoteGroup(parts[1]):
		h.a.serveGroup(w, r, parts[1])
		return
	}
	if parts[1] == GroupVersion.Group {
		h.own.ServeHTTP(w, r)
		return
	}
	h.next.ServeHTTP(w, r)
}
