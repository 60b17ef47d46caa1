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
		go rbacregistry.RunAggregation(ctx, s.cp.store(rbacv1.GroupName, "v1", "clusterroles"), s.cp.logger)
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
				if err := retry(ctx, func() error { return rbacregistry.ReconcileBootstrapObject(ctx, s.cp.CoreRegistry, obj) }); err != nil {
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
