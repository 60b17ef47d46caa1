// Package extensions is devplane's apiextensions-apiserver: it stores and
// serves apiextensions.k8s.io/v1 CustomResourceDefinitions and, for each
// one, serves its custom resources live — validated, defaulted, pruned and
// converted by the crdschema package — from the moment the CRD is
// Established.
package extensions

import (
	"context"
	"fmt"
	"log/slog"
	"net/http"
	"sync"

	clientv3 "go.etcd.io/etcd/client/v3"
	autoscalingv1 "k8s.io/api/autoscaling/v1"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	metav1beta1 "k8s.io/apimachinery/pkg/apis/meta/v1beta1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/runtime/serializer"
	utilruntime "k8s.io/apimachinery/pkg/util/runtime"

	"github.com/devplane/devplane/apiserver/endpoints"
	"github.com/devplane/devplane/apiserver/healthz"
	"github.com/devplane/devplane/apiserver/registry"
	"github.com/devplane/devplane/apiserver/server"
	"github.com/devplane/devplane/apiserver/storage"
)

// Hook names, as kube-apiserver calls them.
const (
	ControllersHook    = "start-apiextensions-controllers"
	InformerSyncedHook = "crd-informer-synced"
)

// CleanupFinalizer holds a CRD until all its custom resources are deleted.
const CleanupFinalizer = "customresourcecleanup.apiextensions.k8s.io"

// Deps are what the extensions server needs from the control plane.
type Deps struct {
	// Server is the extensions server of the delegation chain.
	Server *server.GenericAPIServer
	// Client is the etcd client custom resources and CRDs are stored with.
	Client *clientv3.Client
	Logger *slog.Logger
	// CoreRegistry returns the built-in resources (nil until they exist: the
	// extensions server is built before the core server that delegates to
	// it, as its hooks must be registered first). CRD names may not shadow
	// them, conversion webhook Services resolve through its Services,
	// EndpointSlices and Endpoints, and namespaces are checked on create.
	CoreRegistry func() *registry.Registry
	// Registry is what the extensions server serves into (CRDs and custom
	// resources); nil makes a new one. Registry() returns it.
	Registry *registry.Registry
}

// Extensions is the installed extensions server.
type Extensions struct {
	deps   Deps
	logger *slog.Logger
	scheme *runtime.Scheme
	codecs serializer.CodecFactory

	reg       *registry.Registry
	crdStore  *registry.Store
	crdCacher *storage.Cacher

	mu       sync.Mutex
	served   map[string]*servedCRD // by CRD name
	versions map[schema.GroupVersionResource]*servedVersion
	cleaning map[string]bool // CRDs whose custom resources are being deleted

	listenersMu sync.Mutex
	listeners   []func()

	synced     chan struct{}
	syncedOnce sync.Once
}

// CRDResource is the GroupVersionResource of CustomResourceDefinitions.
var CRDResource = apiextensionsv1.SchemeGroupVersion.WithResource("customresourcedefinitions")

// Install builds the extensions server's API on deps.Server: the
// CustomResourceDefinition resource, the custom resources of every CRD
// (served as they are established), the CRD controllers as post-start hooks
// and a readiness check that waits until existing CRDs are served.
func Install(deps Deps) (*Extensions, error) {
	if deps.Server == nil || deps.Client == nil {
		return nil, fmt.Errorf("extensions: a server and an etcd client are required")
	}
	logger := deps.Logger
	if logger == nil {
		logger = slog.Default()
	}
	e := &Extensions{
		deps:     deps,
		logger:   logger.With("component", "apiextensions"),
		scheme:   newScheme(),
		reg:      deps.Registry,
		served:   map[string]*servedCRD{},
		versions: map[schema.GroupVersionResource]*servedVersion{},
		cleaning: map[string]bool{},
		synced:   make(chan struct{}),
	}
	if e.reg == nil {
		e.reg = registry.New()
	}
	e.codecs = serializer.NewCodecFactory(e.scheme)
	if err := e.installCRDResource(); err != nil {
		return nil, err
	}
	e.reg.OnChange(e.notify)
	deps.Server.SetAPIHandler(func(next http.Handler) http.Handler {
		return e.wrap(endpoints.NewAPIHandler(e.reg, endpoints.Options{
			Scheme:     e.scheme,
			Codecs:     e.codecs,
			NotFound:   next,
			AppendJSON: appendCRDJSON,
		}))
	})
	if err := deps.Server.AddPostStartHook(ControllersHook, func(ctx context.Context) error {
		go e.runController(ctx)
		return nil
	}); err != nil {
		return nil, err
	}
	if err := deps.Server.AddPostStartHook(InformerSyncedHook, func(ctx context.Context) error {
		select {
		case <-e.synced:
			return nil
		case <-ctx.Done():
			return ctx.Err()
		}
	}); err != nil {
		return nil, err
	}
	if err := deps.Server.AddReadyzChecks(healthz.NamedCheck("crd-informer-synced", func(*http.Request) error {
		if !e.Synced() {
			return fmt.Errorf("existing CustomResourceDefinitions are not served yet")
		}
		return nil
	})); err != nil {
		return nil, err
	}
	if err := deps.Server.AddPreShutdownHook("stop-apiextensions-caches", func() error {
		e.stopAll()
		return nil
	}); err != nil {
		return nil, err
	}
	return e, nil
}

// core is the core registry, or nil.
func (e *Extensions) core() *registry.Registry {
	if e.deps.CoreRegistry == nil {
		return nil
	}
	return e.deps.CoreRegistry()
}

// Registry holds what the extensions server serves: CRDs and every served
// version of every established CRD. Give it to the core server's discovery
// (endpoints.Options.DiscoveryRegistries).
func (e *Extensions) Registry() *registry.Registry { return e.reg }

// Synced reports whether the CRDs that existed at start are served.
func (e *Extensions) Synced() bool {
	select {
	case <-e.synced:
		return true
	default:
		return false
	}
}

// WaitSynced returns once the CRDs that existed at start are served, or
// with ctx's error.
func (e *Extensions) WaitSynced(ctx context.Context) error {
	select {
	case <-e.synced:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}

// OnChange registers f to run after the served custom resources or their
// schemas change (OpenAPI documents are rebuilt from OpenAPI()).
func (e *Extensions) OnChange(f func()) {
	e.listenersMu.Lock()
	e.listeners = append(e.listeners, f)
	e.listenersMu.Unlock()
}

func (e *Extensions) notify() {
	e.listenersMu.Lock()
	ls := append([]func(){}, e.listeners...)
	e.listenersMu.Unlock()
	for _, f := range ls {
		f()
	}
}

func newScheme() *runtime.Scheme {
	scheme := runtime.NewScheme()
	for _, add := range []func(*runtime.Scheme) error{
		apiextensionsv1.AddToScheme,
		autoscalingv1.AddToScheme,
		metav1.AddMetaToScheme,
		metav1beta1.AddMetaToScheme,
	} {
		utilruntime.Must(add(scheme))
	}
	metav1.AddToGroupVersion(scheme, schema.GroupVersion{Version: "v1"})
	metav1.AddToGroupVersion(scheme, metav1.SchemeGroupVersion)
	return scheme
}
