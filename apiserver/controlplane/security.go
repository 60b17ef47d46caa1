package controlplane

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"sync"
	"sync/atomic"
	"time"

	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	"k8s.io/apimachinery/pkg/api/equality"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"

	"github.com/devplane/devplane/apiserver/authn"
	"github.com/devplane/devplane/apiserver/authz"
	"github.com/devplane/devplane/apiserver/registry"
	"github.com/devplane/devplane/apiserver/registry/authentication/selfsubjectreview"
	"github.com/devplane/devplane/apiserver/registry/authentication/tokenreview"
	"github.com/devplane/devplane/apiserver/registry/authorization/accessreview"
	"github.com/devplane/devplane/apiserver/registry/certificates/certificatesigningrequest"
	serviceaccountregistry "github.com/devplane/devplane/apiserver/registry/core/serviceaccount"
	rbacregistry "github.com/devplane/devplane/apiserver/registry/rbac"
	"github.com/devplane/devplane/apiserver/request"
	"github.com/devplane/devplane/apiserver/serviceaccount"
)

// security is who may do what: the authenticators, the authorizer, the
// service account token issuer and the RBAC escalation checks.
type security struct {
	cp            *ControlPlane
	mode          string
	issuer        *serviceaccount.Issuer
	saTokens      *serviceaccount.TokenAuthenticator
	staticTokens  *authn.Tokens // nil without --token-auth-file
	authenticator authn.Authenticator
	authorizer    authz.Authorizer
	rbac          *authz.RBAC // nil in AlwaysAllow mode
}

// newSecurity builds the authenticators and the authorizer. The stores they
// read are installed later (installSecurity); nothing reads them before
// the server serves.
func (cp *ControlPlane) newSecurity() (*security, error) {
	s := &security{cp: cp, mode: cp.opts.AuthorizationMode}
	var err error
	if s.issuer, err = serviceaccount.NewIssuer(cp.Certs.ServiceAccountKey, cp.opts.ServiceAccountIssuer); err != nil {
		return nil, fmt.Errorf("service account issuer: %w", err)
	}
	s.saTokens = serviceaccount.Authenticator(s.issuer, nil, s.lookupServiceAccount).WithBoundObjects(s.lookupBoundObject).
		WithLegacySecrets(s.lookupTokenSecret)
	union := authn.Union{authn.ClientCert{}}
	if cp.opts.TokenAuthFile != "" {
		if s.staticTokens, err = authn.LoadTokenFile(cp.opts.TokenAuthFile); err != nil {
			return nil, fmt.Errorf("--token-auth-file: %w", err)
		}
		union = append(union, s.staticTokens)
	}
	union = append(union, s.saTokens, unknownBearer{})
	s.authenticator = union
	// Options.Validate allowed only these two modes.
	if s.mode == AuthorizationModeAlwaysAllow {
		s.authorizer = authz.AlwaysAllow{}
	} else {
		s.rbac = authz.NewRBAC(storeRules{cp})
		s.authorizer = s.rbac
	}
	return s, nil
}

// anonymousAuth: with RBAC, requests without credentials go on as
// system:anonymous and RBAC decides, as in kube. With AlwaysAllow that
// would open everything, so only health and version stay public.
func (s *security) anonymousAuth() bool { return s.rbac != nil }

// unknownBearer refuses a bearer token no authenticator recognised, so a
// wrong token is a 401 rather than an anonymous request.
type unknownBearer struct{}

func (unknownBearer) AuthenticateRequest(r *http.Request) (*request.User, bool, error) {
	if _, ok := authn.BearerToken(r); ok {
		return nil, false, errors.New("invalid bearer token")
	}
	return nil, false, nil
}

// authenticateToken is TokenReview's authentication of a bearer token: a
// static token, or a service-account token meant for audiences (none: the
// issuer's own).
func (s *security) authenticateToken(ctx context.Context, token string, audiences []string) (*request.User, bool, error) {
	saTokens := s.saTokens
	if len(audiences) > 0 {
		saTokens = serviceaccount.Authenticator(s.issuer, audiences, s.lookupServiceAccount).WithBoundObjects(s.lookupBoundObject).
			WithLegacySecrets(s.lookupTokenSecret)
	}
	if s.staticTokens != nil {
		r, _ := http.NewRequestWithContext(ctx, http.MethodPost, "/", nil)
		r.Header.Set("Authorization", "Bearer "+token)
		if u, ok, err := s.staticTokens.AuthenticateRequest(r); ok || err != nil {
			return u, ok, err
		}
	}
	return saTokens.AuthenticateToken(token)
}

func uidOf(obj runtime.Object) types.UID {
	acc, err := meta.Accessor(obj)
	if err != nil {
		return ""
	}
	return acc.GetUID()
}

// lookupCtx bounds the cache reads done on behalf of authn and authz.
func lookupCtx() (context.Context, context.CancelFunc) {
	return context.WithTimeout(request.AsAPIServer(context.Background()), 5*time.Second)
}

func (s *security) lookupServiceAccount(namespace, name string) (string, bool) {
	return s.lookupBoundObject("ServiceAccount", namespace, name)
}

// lookupTokenSecret finds a service-account-token Secret for a legacy
// token: its token and service account, unless it is being deleted.
func (s *security) lookupTokenSecret(namespace, name string) ([]byte, string, bool) {
	res, ok := s.cp.CoreRegistry.Lookup("", "v1", "secrets")
	if !ok || res.Store == nil {
		return nil, "", false
	}
	ctx, cancel := lookupCtx()
	defer cancel()
	obj, err := res.Store.Get(ctx, namespace, name, metav1.GetOptions{ResourceVersion: "0"})
	if err != nil {
		return nil, "", false
	}
	secret, ok := obj.(*corev1.Secret)
	if !ok || secret.Type != corev1.SecretTypeServiceAccountToken || secret.DeletionTimestamp != nil {
		return nil, "", false
	}
	return secret.Data[corev1.ServiceAccountTokenKey], secret.Annotations[corev1.ServiceAccountNameKey], true
}

var boundResources = map[string]string{"ServiceAccount": "serviceaccounts", "Pod": "pods", "Secret": "secrets", "Node": "nodes"}

func (s *security) lookupBoundObject(kind, namespace, name string) (string, bool) {
	resource, ok := boundResources[kind]
	if !ok || s.cp.CoreRegistry == nil {
		return "", false
	}
	res, ok := s.cp.CoreRegistry.Lookup("", "v1", resource)
	if !ok || res.Store == nil {
		return "", false
	}
	ctx, cancel := lookupCtx()
	defer cancel()
	obj, err := res.Store.Get(ctx, namespace, name, metav1.GetOptions{ResourceVersion: "0"})
	if err != nil {
		return "", false
	}
	return string(uidOf(obj)), true
}

// storeRules is the RBAC RuleSource over the rbac watch caches: reads at
// resourceVersion 0 are served from memory. Objects are shared with the
// cache and never modified.
type storeRules struct{ cp *ControlPlane }

func (r storeRules) rbacStore(resource string) *registry.Store {
	return r.cp.store(rbacv1.GroupName, "v1", resource)
}

func (r storeRules) ListClusterRoleBindings() []*rbacv1.ClusterRoleBinding {
	ctx, cancel := lookupCtx()
	defer cancel()
	obj, err := r.rbacStore("clusterrolebindings").List(ctx, "", metav1.ListOptions{ResourceVersion: "0"})
	if err != nil {
		return nil
	}
	items := obj.(*rbacv1.ClusterRoleBindingList).Items
	out := make([]*rbacv1.ClusterRoleBinding, len(items))
	for i := range items {
		out[i] = &items[i]
	}
	return out
}

func (r storeRules) ListRoleBindings(namespace string) []*rbacv1.RoleBinding {
	if namespace == "" {
		return nil
	}
	ctx, cancel := lookupCtx()
	defer cancel()
	obj, err := r.rbacStore("rolebindings").List(ctx, namespace, metav1.ListOptions{ResourceVersion: "0"})
	if err != nil {
		return nil
	}
	items := obj.(*rbacv1.RoleBindingList).Items
	out := make([]*rbacv1.RoleBinding, len(items))
	for i := range items {
		out[i] = &items[i]
	}
	return out
}

func (r storeRules) GetClusterRole(name string) (*rbacv1.ClusterRole, bool) {
	ctx, cancel := lookupCtx()
	defer cancel()
	obj, err := r.rbacStore("clusterroles").Get(ctx, "", name, metav1.GetOptions{ResourceVersion: "0"})
	if err != nil {
		return nil, false
	}
	return obj.(*rbacv1.ClusterRole), true
}

func (r storeRules) GetRole(namespace, name string) (*rbacv1.Role, bool) {
	ctx, cancel := lookupCtx()
	defer cancel()
	obj, err := r.rbacStore("roles").Get(ctx, namespace, name, metav1.GetOptions{ResourceVersion: "0"})
	if err != nil {
		return nil, false
	}
	return obj.(*rbacv1.Role), true
}

// installSecurity serves the review and token resources, guards the RBAC
// stores against escalation, and adds the RBAC bootstrap and aggregation.
func (cp *ControlPlane) installSecurity(s *security) error {
	var rules accessreview.RuleResolver // nil: AlwaysAllow
	if s.rbac != nil {
		rules = s.rbac
	}
	accessreview.Install(cp.CoreRegistry, s.authorizer, rules)
	tokenreview.Install(cp.CoreRegistry, s.authenticateToken, []string{s.issuer.URL()})
	selfsubjectreview.Install(cp.CoreRegistry)
	serviceaccountregistry.InstallToken(cp.CoreRegistry, s.issuer)
	certificatesigningrequest.Install(cp.CoreRegistry, s.authorizer)
	if s.rbac == nil {
		return nil
	}
	rbacregistry.GuardEscalation(cp.CoreRegistry, s.rbac)
	if err := cp.Core.AddPostStartHook("rbac/bootstrap-roles", s.bootstrapRBAC); err != nil {
		return err
	}
	return cp.Core.AddPostStartHook("start-cluster-role-aggregation", func(ctx context.Context) error {
		go s.runAggregation(ctx)
		return nil
	})
}

// installDiscovery serves the OIDC discovery documents of the service
// account issuer from the head of the chain.
func (cp *ControlPlane) installIssuerDiscovery(s *security) error {
	h, err := serviceaccount.DiscoveryHandler(s.issuer.URL(), cp.URL(), s.issuer.PublicKey())
	if err != nil {
		return err
	}
	cp.Aggregator.Handle(serviceaccount.OpenIDConfigPath, h)
	cp.Aggregator.Handle(serviceaccount.JWKSPath, h)
	return nil
}

// bootstrapRBAC creates the bootstrap policy, and brings existing bootstrap
// objects up to date unless annotated rbac.authorization.kubernetes.io/autoupdate=false.
func (s *security) bootstrapRBAC(ctx context.Context) error {
	ctx = request.AsAPIServer(ctx)
	for _, ns := range []string{metav1.NamespaceSystem, metav1.NamespacePublic} {
		if err := waitForNamespace(ctx, s.cp.store("", "v1", "namespaces"), ns); err != nil {
			return fmt.Errorf("waiting for namespace %s: %w", ns, err)
		}
	}
	// The objects are independent (a binding may name a role not yet
	// created), so they are written side by side: concurrent etcd
	// transactions share fsyncs, and this hook gates /readyz.
	objects := authz.BootstrapObjects()
	errs := make([]error, len(objects))
	var next atomic.Int64
	var wg sync.WaitGroup
	for range bootstrapWorkers {
		wg.Go(func() {
			for i := int(next.Add(1)) - 1; i < len(objects); i = int(next.Add(1)) - 1 {
				obj := objects[i]
				if err := retry(ctx, func() error { return s.reconcileBootstrap(ctx, obj) }); err != nil {
					errs[i] = fmt.Errorf("bootstrap %T %s: %w", obj, nameOf(obj), err)
				}
			}
		})
	}
	wg.Wait()
	return errors.Join(errs...)
}

// bootstrapWorkers bound the bootstrap policy objects written at once.
const bootstrapWorkers = 8

func (s *security) reconcileBootstrap(ctx context.Context, wanted runtime.Object) error {
	var resource string
	switch wanted.(type) {
	case *rbacv1.ClusterRole:
		resource = "clusterroles"
	case *rbacv1.ClusterRoleBinding:
		resource = "clusterrolebindings"
	case *rbacv1.Role:
		resource = "roles"
	case *rbacv1.RoleBinding:
		resource = "rolebindings"
	default:
		return fmt.Errorf("unexpected bootstrap object %T", wanted)
	}
	store := s.cp.store(rbacv1.GroupName, "v1", resource)
	ns, name := namespaceOf(wanted), nameOf(wanted)
	existing, err := store.Get(ctx, ns, name, metav1.GetOptions{})
	if apierrors.IsNotFound(err) {
		_, err = store.Create(ctx, ns, wanted.DeepCopyObject(), metav1.CreateOptions{})
		if apierrors.IsAlreadyExists(err) {
			return errors.New("created concurrently; retrying")
		}
		return err
	}
	if err != nil {
		return err
	}
	var result runtime.Object
	var update, recreate bool
	switch w := wanted.(type) {
	case *rbacv1.ClusterRole:
		result, update = authz.Reconcile(existing.(*rbacv1.ClusterRole), w)
	case *rbacv1.Role:
		result, update = authz.ReconcileRole(existing.(*rbacv1.Role), w)
	case *rbacv1.ClusterRoleBinding:
		e := existing.(*rbacv1.ClusterRoleBinding)
		recreate = authz.RoleRefChanged(e.RoleRef, w.RoleRef) && !protectedMeta(e.ObjectMeta)
		result, update = authz.ReconcileClusterRoleBinding(e, w)
	case *rbacv1.RoleBinding:
		e := existing.(*rbacv1.RoleBinding)
		recreate = authz.RoleRefChanged(e.RoleRef, w.RoleRef) && !protectedMeta(e.ObjectMeta)
		result, update = authz.ReconcileRoleBinding(e, w)
	}
	if recreate {
		// A roleRef cannot change: replace the binding.
		if _, _, err := store.Delete(ctx, ns, name, &metav1.DeleteOptions{}); err != nil && !apierrors.IsNotFound(err) {
			return err
		}
		_, err := store.Create(ctx, ns, wanted.DeepCopyObject(), metav1.CreateOptions{})
		return err
	}
	if !update {
		return nil
	}
	_, _, err = store.Update(ctx, ns, name, "", func(_ context.Context, _ runtime.Object) (runtime.Object, error) {
		return result.DeepCopyObject(), nil
	}, metav1.UpdateOptions{})
	return err
}

func protectedMeta(m metav1.ObjectMeta) bool {
	return m.Annotations[rbacv1.AutoUpdateAnnotationKey] == "false"
}

// runAggregation keeps aggregated ClusterRoles (admin, edit, view and any
// user-defined ones) current, as kube's clusterrole-aggregation controller:
// it watches ClusterRoles and recomputes after every change.
func (s *security) runAggregation(ctx context.Context) {
	ctx = request.AsAPIServer(ctx)
	store := s.cp.store(rbacv1.GroupName, "v1", "clusterroles")
	for ctx.Err() == nil {
		w, err := store.Watch(ctx, "", metav1.ListOptions{ResourceVersion: "0", AllowWatchBookmarks: false})
		if err != nil {
			s.cp.logger.Warn("cluster role aggregation: watch failed", "err", err)
			sleepCtx(ctx, time.Second)
			continue
		}
		s.aggregate(ctx, store)
	events:
		for {
			select {
			case <-ctx.Done():
				w.Stop()
				return
			case _, ok := <-w.ResultChan():
				if !ok {
					break events
				}
				// Coalesce bursts (the initial list, bulk edits).
				for drained := false; !drained; {
					select {
					case _, ok := <-w.ResultChan():
						if !ok {
							drained = true
						}
					case <-time.After(20 * time.Millisecond):
						drained = true
					}
				}
				s.aggregate(ctx, store)
			}
		}
		w.Stop()
		sleepCtx(ctx, 100*time.Millisecond)
	}
}

func (s *security) aggregate(ctx context.Context, store *registry.Store) {
	obj, err := store.List(ctx, "", metav1.ListOptions{ResourceVersion: "0"})
	if err != nil {
		return
	}
	items := obj.(*rbacv1.ClusterRoleList).Items
	roles := make([]*rbacv1.ClusterRole, len(items))
	for i := range items {
		roles[i] = &items[i]
	}
	for _, changed := range authz.AggregateClusterRoles(roles) {
		_, _, err := store.Update(ctx, "", changed.Name, "", func(_ context.Context, current runtime.Object) (runtime.Object, error) {
			out := current.DeepCopyObject().(*rbacv1.ClusterRole)
			if out.AggregationRule == nil || !equality.Semantic.DeepEqual(out.AggregationRule, changed.AggregationRule) {
				return nil, errors.New("aggregation rule changed meanwhile")
			}
			out.Rules = changed.Rules
			return out, nil
		}, metav1.UpdateOptions{})
		if err != nil && ctx.Err() == nil {
			s.cp.logger.Info("cluster role aggregation: update failed", "clusterrole", changed.Name, "err", err)
		}
	}
}

func sleepCtx(ctx context.Context, d time.Duration) {
	select {
	case <-ctx.Done():
	case <-time.After(d):
	}
}
