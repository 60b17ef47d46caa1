package controlplane

import (
	"context"
	"fmt"
	"net/http"
	"reflect"
	"strings"
	"time"

	corev1 "k8s.io/api/core/v1"
	networkingv1 "k8s.io/api/networking/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/util/intstr"

	"github.com/devplane/devplane/apiserver/builtin"
	"github.com/devplane/devplane/apiserver/endpoints"
	"github.com/devplane/devplane/apiserver/kubevalidation"
	"github.com/devplane/devplane/apiserver/openapi"
	"github.com/devplane/devplane/apiserver/printers"
	"github.com/devplane/devplane/apiserver/registry"
	"github.com/devplane/devplane/apiserver/registry/core/componentstatus"
	"github.com/devplane/devplane/apiserver/registry/core/namespace"
	"github.com/devplane/devplane/apiserver/registry/core/node"
	"github.com/devplane/devplane/apiserver/registry/core/pod"
	"github.com/devplane/devplane/apiserver/registry/core/service"
	"github.com/devplane/devplane/apiserver/registry/networking/ipaddress"
	"github.com/devplane/devplane/apiserver/registry/networking/servicecidr"
	"github.com/devplane/devplane/apiserver/registry/strategies"
	"github.com/devplane/devplane/apiserver/request"
	"github.com/devplane/devplane/apiserver/storage"
	"github.com/devplane/devplane/apiserver/version"
)

// systemNamespaces exist in every cluster; the bootstrap hook creates them.
// Built-in pods and pod templates get kube's own checks of volume sources,
// container resources and sysctls.
func init() { builtin.SetKubePodSpecChecks(kubevalidation.PodSpec, kubevalidation.PodUpdate) }

var systemNamespaces = []string{metav1.NamespaceDefault, metav1.NamespaceSystem, metav1.NamespacePublic, corev1.NamespaceNodeLease}

// installCoreAPI serves every built-in kind from a watch cache over etcd
// and adds the hooks that create what every cluster has.
func (cp *ControlPlane) installCoreAPI() error {
	reg := registry.New()
	var cachers []*storage.Cacher
	stored := map[schema.GroupVersionResource]*storage.Cacher{}
	for _, k := range builtin.Kinds() {
		if k.StoredAs != nil {
			continue
		}
		cfg := registry.StorageConfig(k)
		cacher, err := storage.NewCacher(storage.NewStore(cp.Etcd.Client(), cfg), cfg,
			storage.CacherOptions{Logger: cp.logger.With("component", "watch-cache", "resource", cfg.Resource.String())})
		if err != nil {
			return fmt.Errorf("watch cache for %s: %w", cfg.Resource, err)
		}
		cachers = append(cachers, cacher)
		stored[k.GroupVersion.WithResource(k.Resource)] = cacher
	}
	for _, k := range builtin.Kinds() {
		var store storage.Interface = stored[k.GroupVersion.WithResource(k.Resource)]
		if k.StoredAs != nil {
			// Served from another version's storage, converted both ways.
			from, ok := builtin.Lookup(*k.StoredAs)
			under := stored[*k.StoredAs]
			if !ok || under == nil {
				return fmt.Errorf("%s is stored as %s, which is not stored", k.GroupVersion.WithResource(k.Resource), *k.StoredAs)
			}
			store = storage.NewConverting(under, storage.Conversion{NewStored: from.New, NewStoredList: from.NewList,
				ToStored: k.ToStored, FromStored: k.FromStored})
			k.StoragePrefix = from.StoragePrefix // the same objects, under the same keys
		}
		res := registry.NewResourceFromBuiltin(k, store, registry.WithEventTTL(cp.opts.EventTTL),
			strategies.For(k.GroupVersion.WithResource(k.Resource).GroupResource()))
		res.Table = printers.For(res.GVR.GroupResource())
		if k.GroupVersion.Group == "" && k.Resource == "services" {
			repair := service.InstallAllocation(res.Store, cp.Etcd.Client(), cp.opts.ServiceClusterIPRange, cp.logger)
			if err := cp.Core.AddPostStartHook("start-service-ip-repair", func(ctx context.Context) error {
				go repair(ctx)
				return nil
			}); err != nil {
				return err
			}
		}
		reg.Add(res)
	}
	cp.CoreRegistry = reg
	pod.InstallBinding(reg)
	pod.InstallSubresources(reg, cp.podContainers)
	pod.InstallEviction(reg)
	namespace.InstallFinalize(reg)
	node.InstallProxy(reg)
	service.InstallProxy(reg)
	componentstatus.Install(reg, componentstatus.Components{EtcdReady: cp.Etcd.Ready,
		ControllersRun: !cp.opts.DisableControllers, SchedulerRuns: cp.opts.Nodes > 0 && !cp.opts.DisableControllers})
	cp.installAdmission()
	cp.Core.SetAPIHandler(func(next http.Handler) http.Handler {
		return endpoints.NewAPIHandler(reg, endpoints.Options{
			Scheme:   builtin.Scheme,
			Codecs:   builtin.Codecs,
			NotFound: next,
			// CRD groups are listed in /apis with the built-in ones.
			DiscoveryRegistries: cp.extensionRegistries(),
			Tables:              func(gr schema.GroupResource) registry.TableConvertor { return printers.For(gr) },
		})
	})
	cp.cachers = cachers
	if err := cp.installFlowControl(); err != nil {
		return err
	}
	if err := cp.installServiceCIDRs(); err != nil {
		return err
	}
	if err := cp.Core.AddPostStartHook("bootstrap-namespaces", cp.bootstrapNamespaces); err != nil {
		return err
	}
	if err := cp.Core.AddPostStartHook("bootstrap-kubernetes-service", cp.bootstrapKubernetesService); err != nil {
		return err
	}
	if cp.opts.DisableControllers {
		return nil
	}
	if err := cp.installControllers(); err != nil {
		return err
	}
	return cp.installWorkloads()
}

// installServiceCIDRs keeps the default ServiceCIDR for the service cluster
// IP range and the IPAddress records of allocated Service IPs.
func (cp *ControlPlane) installServiceCIDRs() error {
	cidrs, ok1 := cp.CoreRegistry.Lookup(networkingv1.GroupName, "v1", "servicecidrs")
	ips, ok2 := cp.CoreRegistry.Lookup(networkingv1.GroupName, "v1", "ipaddresses")
	services, ok3 := cp.CoreRegistry.Lookup("", "v1", "services")
	if !ok1 || !ok2 || !ok3 || cidrs.Store == nil || ips.Store == nil || services.Store == nil || cp.opts.ServiceClusterIPRange == nil {
		return nil
	}
	return cp.Core.AddPostStartHook("start-kubernetes-service-cidr-controller", func(ctx context.Context) error {
		ctx = request.AsAPIServer(ctx)
		if err := retry(ctx, func() error { return servicecidr.EnsureDefault(ctx, cidrs.Store, cp.opts.ServiceClusterIPRange) }); err != nil {
			return err
		}
		go ipaddress.KeepRecords(ctx, services.Store, ips.Store, cp.logger)
		return nil
	})
}

// installOpenAPI serves /openapi/v2 and /openapi/v3 from the head and keeps
// the documents in step with the registry.
func (cp *ControlPlane) installOpenAPI() {
	svc := openapi.NewService(version.Get().GitVersion)
	cp.openAPI = svc // the aggregator adds the remote APIServices' documents
	svc.Follow(cp.openAPIState)
	cp.CoreRegistry.OnChange(svc.Invalidate)
	cp.onExtensionsChange(svc.Invalidate)
	cp.Aggregator.Handle("/openapi/v2", svc)
	cp.Aggregator.Handle("/openapi/v3", svc)
	cp.Aggregator.Handle("/openapi/v3/*path", svc)
}

func openAPIResources(reg *registry.Registry) []openapi.Resource {
	var out []openapi.Resource
	for _, r := range reg.Resources() {
		var kindSubs map[string][]string
		if r.Store != nil {
			for sub := range r.Store.UpdateSubresources {
				if kindSubs == nil {
					kindSubs = map[string][]string{}
				}
				kindSubs[sub] = r.SubresourceVerbs(sub)
			}
		}
		out = append(out, openapi.Resource{
			Group: r.GVR.Group, Version: r.GVR.Version, Resource: r.GVR.Resource,
			Kind: r.Kind, ListKind: r.ListKind, Namespaced: r.Namespaced,
			Verbs: r.Verbs, Subresources: r.Subresources(), KindSubresources: kindSubs,
			DefinitionName: definitionName(r),
		})
	}
	return out
}

// definitionName is the OpenAPI name of a built-in kind, derived from its
// Go package path (k8s.io/api/apps/v1.Deployment → io.k8s.api.apps.v1.Deployment).
func definitionName(r *registry.Resource) string {
	pkgPath := reflect.TypeOf(r.New()).Elem().PkgPath()
	parts := strings.Split(pkgPath, "/")
	// k8s.io/api/<group>/<version> → io.k8s.api.<group>.<version>
	if len(parts) >= 2 && parts[0] == "k8s.io" {
		parts[0] = "io.k8s"
	}
	return strings.Join(parts, ".") + "." + r.Kind
}

func (cp *ControlPlane) store(group, version, resource string) *registry.Store {
	res, ok := cp.CoreRegistry.Lookup(group, version, resource)
	if !ok {
		panic("controlplane: built-in resource missing: " + resource)
	}
	return res.Store
}

func (cp *ControlPlane) bootstrapNamespaces(ctx context.Context) error {
	ctx = request.AsAPIServer(ctx)
	namespaces := cp.store("", "v1", "namespaces")
	for _, name := range systemNamespaces {
		err := retry(ctx, func() error {
			_, err := namespaces.Create(ctx, "", &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: name}}, metav1.CreateOptions{})
			if apierrors.IsAlreadyExists(err) {
				return nil
			}
			return err
		})
		if err != nil {
			return fmt.Errorf("creating namespace %s: %w", name, err)
		}
	}
	return nil
}

// bootstrapKubernetesService creates the kubernetes Service in default with
// the first service IP.
func (cp *ControlPlane) bootstrapKubernetesService(ctx context.Context) error {
	ctx = request.AsAPIServer(ctx)
	if err := waitForNamespace(ctx, cp.store("", "v1", "namespaces"), metav1.NamespaceDefault); err != nil {
		return err
	}
	ip := FirstServiceIP(cp.opts.ServiceClusterIPRange).String()
	port := int32(cp.Port())
	svc := &corev1.Service{
		ObjectMeta: metav1.ObjectMeta{Name: "kubernetes", Namespace: metav1.NamespaceDefault,
			Labels: map[string]string{"component": "apiserver", "provider": "kubernetes"}},
		Spec: corev1.ServiceSpec{
			Type:      corev1.ServiceTypeClusterIP,
			ClusterIP: ip, ClusterIPs: []string{ip},
			Ports: []corev1.ServicePort{{Name: "https", Protocol: corev1.ProtocolTCP, Port: 443,
				TargetPort: intstr.FromInt32(port)}},
			SessionAffinity: corev1.ServiceAffinityNone,
		},
	}
	if err := createIfAbsent(ctx, cp.store("", "v1", "services"), svc); err != nil {
		return fmt.Errorf("creating the kubernetes Service: %w", err)
	}
	// The Endpoints and EndpointSlice list the live replicas: the lease
	// endpoint reconciler (controllers) keeps them.
	return nil
}

func waitForNamespace(ctx context.Context, namespaces *registry.Store, name string) error {
	return retry(ctx, func() error {
		_, err := namespaces.Get(ctx, "", name, metav1.GetOptions{})
		return err
	})
}

func createIfAbsent(ctx context.Context, s *registry.Store, obj runtime.Object) error {
	return retry(ctx, func() error {
		// Look first: creating has side effects (a Service allocates its IP)
		// that fail before the store would notice the object exists.
		_, err := s.Get(ctx, namespaceOf(obj), nameOf(obj), metav1.GetOptions{})
		if err == nil || !apierrors.IsNotFound(err) {
			return err
		}
		_, err = s.Create(ctx, namespaceOf(obj), obj.DeepCopyObject(), metav1.CreateOptions{})
		if apierrors.IsAlreadyExists(err) {
			return nil
		}
		return err
	})
}

// retry runs fn until it succeeds, ctx ends, or ten seconds pass: bootstrap
// races the watch caches' first lists.
func retry(ctx context.Context, fn func() error) error {
	deadline := time.Now().Add(10 * time.Second)
	delay := 5 * time.Millisecond
	for {
		err := fn()
		if err == nil || time.Now().After(deadline) || ctx.Err() != nil {
			return err
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(delay):
		}
		if delay < 200*time.Millisecond {
			delay *= 2
		}
	}
}

func namespaceOf(obj runtime.Object) string {
	acc, err := meta.Accessor(obj)
	if err != nil {
		return ""
	}
	return acc.GetNamespace()
}

func nameOf(obj runtime.Object) string {
	acc, err := meta.Accessor(obj)
	if err != nil {
		return ""
	}
	return acc.GetName()
}
