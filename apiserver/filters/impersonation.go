package filters

import (
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"slices"
	"strings"

	apierrors "k8s.io/apimachinery/pkg/api/errors"

	"github.com/devplane/devplane/apiserver/audit"
	"github.com/devplane/devplane/apiserver/authn"
	"github.com/devplane/devplane/apiserver/authz"
	"github.com/devplane/devplane/apiserver/request"
)

// Impersonation headers (kubectl --as, --as-group, --as-uid, client-go's
// rest.ImpersonationConfig).
const (
	ImpersonateUserHeader        = "Impersonate-User"
	ImpersonateGroupHeader       = "Impersonate-Group"
	ImpersonateUIDHeader         = "Impersonate-Uid"
	ImpersonateExtraHeaderPrefix = "Impersonate-Extra-"
)

const authenticationGroup = "authentication.k8s.io"

// WithImpersonation lets a user act as another when it may "impersonate"
// each part of the requested identity, as kube-apiserver does: users,
// groups, uids and userextras/<key> (service accounts when the user name
// is system:serviceaccount:<ns>:<name>). The impersonation headers are
// removed before h sees the request; h sees only the impersonated user.
func WithImpersonation(h http.Handler, a authz.Authorizer) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		checks, err := impersonationChecks(r.Header)
		if err != nil {
			WriteStatus(w, apierrors.NewBadRequest(err.Error()))
			return
		}
		if len(checks) == 0 {
			h.ServeHTTP(w, r)
			return
		}
		requestor, ok := request.UserFrom(r.Context())
		if !ok {
			WriteStatus(w, apierrors.NewInternalError(errors.New("no user found for request")))
			return
		}

		var (
			username string
			uid      string
			groups   []string
			extra    = map[string][]string{}
		)
		groupsGiven := slices.ContainsFunc(checks, func(c impersonationCheck) bool { return c.kind == "Group" })
		for _, c := range checks {
			attrs := authz.Attributes{User: requestor, Verb: "impersonate", Name: c.name, ResourceRequest: true}
			switch c.kind {
			case "ServiceAccount":
				attrs.Resource, attrs.APIVersion, attrs.Namespace = "serviceaccounts", "v1", c.namespace
				username = authz.ServiceAccountUsername(c.namespace, c.name)
				if !groupsGiven {
					// a service account's groups are fixed; fill them in.
					groups = append(groups, authz.ServiceAccountsAll, authz.ServiceAccountsAll+":"+c.namespace)
				}
			case "User":
				attrs.Resource = "users"
				username = c.name
			case "Group":
				attrs.Resource = "groups"
				groups = append(groups, c.name)
			case "UserExtra":
				attrs.APIGroup, attrs.APIVersion = authenticationGroup, "v1"
				attrs.Resource, attrs.Subresource = "userextras", c.extraKey
				extra[c.extraKey] = append(extra[c.extraKey], c.name)
			case "UID":
				attrs.APIGroup, attrs.APIVersion = authenticationGroup, "v1"
				attrs.Resource = "uids"
				uid = c.name
			}
			decision, reason, err := a.Authorize(r.Context(), attrs)
			if err != nil || decision != authz.Allow {
				WriteStatus(w, authz.Forbidden(attrs, reason))
				return
			}
		}

		groups = withAuthenticationGroup(username, groups)
		if len(extra) == 0 {
			extra = nil
		}
		impersonated := &request.User{Name: username, UID: uid, Groups: groups, Extra: extra}
		audit.LogImpersonatedUser(r.Context(), impersonated)

		// Whoever comes next must see only the impersonated identity.
		r = r.Clone(request.WithUser(r.Context(), impersonated))
		r.Header.Del(ImpersonateUserHeader)
		r.Header.Del(ImpersonateGroupHeader)
		r.Header.Del(ImpersonateUIDHeader)
		for key := range r.Header {
			if strings.HasPrefix(key, ImpersonateExtraHeaderPrefix) {
				r.Header.Del(key)
			}
		}
		h.ServeHTTP(w, r)
	})
}

// withAuthenticationGroup adds system:authenticated (system:unauthenticated
// for anonymous) unless the caller already chose one, as kube does.
func withAuthenticationGroup(username string, groups []string) []string {
	if username == authn.Anonymous {
		if !slices.Contains(groups, authn.Unauthenticated) {
			groups = append(groups, authn.Unauthenticated)
		}
		return groups
	}
	if !slices.Contains(groups, authn.Authenticated) && !slices.Contains(groups, authn.Unauthenticated) {
		groups = append(groups, authn.Authenticated)
	}
	return groups
}

// impersonationCheck is one part of the requested identity that must be
// authorized on its own.
type impersonationCheck struct {
	kind      string // User, ServiceAccount, Group, UserExtra, UID
	namespace string // ServiceAccount only
	name      string
	extraKey  string // UserExtra only
}

func (c impersonationCheck) String() string {
	switch c.kind {
	case "ServiceAccount":
		return fmt.Sprintf("%s %s/%s", c.kind, c.namespace, c.name)
	case "UserExtra":
		return fmt.Sprintf("%s %s=%s", c.kind, c.extraKey, c.name)
	}
	return c.kind + " " + c.name
}

// impersonationChecks reads the impersonation headers: the user first,
// then groups, extras and uid. Anything but a user needs a user too.
func impersonationChecks(header http.Header) ([]impersonationCheck, error) {
	var checks []impersonationCheck
	user := header.Get(ImpersonateUserHeader)
	hasUser := user != ""
	if hasUser {
		if ns, name, ok := authz.SplitServiceAccountUsername(user); ok {
			checks = append(checks, impersonationCheck{kind: "ServiceAccount", namespace: ns, name: name})
		} else {
			checks = append(checks, impersonationCheck{kind: "User", name: user})
		}
	}
	var others []impersonationCheck
	for _, g := range header.Values(ImpersonateGroupHeader) {
		others = append(others, impersonationCheck{kind: "Group", name: g})
	}
	var extraHeaders []string
	for key := range header {
		if strings.HasPrefix(key, ImpersonateExtraHeaderPrefix) {
			extraHeaders = append(extraHeaders, key)
		}
	}
	slices.Sort(extraHeaders) // deterministic check order
	for _, key := range extraHeaders {
		extraKey := unescapeExtraKey(strings.ToLower(key[len(ImpersonateExtraHeaderPrefix):]))
		for _, v := range header.Values(key) {
			others = append(others, impersonationCheck{kind: "UserExtra", name: v, extraKey: extraKey})
		}
	}
	if uid := header.Get(ImpersonateUIDHeader); uid != "" {
		others = append(others, impersonationCheck{kind: "UID", name: uid})
	}
	if !hasUser && len(others) > 0 {
		return nil, fmt.Errorf("requested %v without impersonating a user", others)
	}
	return append(checks, others...), nil
}

// unescapeExtraKey decodes %-escapes: header names cannot carry the
// characters (like "/") that extra keys commonly contain.
func unescapeExtraKey(encoded string) string {
	key, err := url.PathUnescape(encoded)
	if err != nil {
		return encoded
	}
	return key
}
