package serviceaccount

import (
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"slices"
	"time"

	"github.com/devplane/devplane/apiserver/authn"
	"github.com/devplane/devplane/apiserver/request"
)

// Extra keys kube sets on service account users.
const (
	CredentialIDKey = "authentication.kubernetes.io/credential-id"
	PodNameKey      = "authentication.kubernetes.io/pod-name"
	PodUIDKey       = "authentication.kubernetes.io/pod-uid"
	NodeNameKey     = "authentication.kubernetes.io/node-name"
	NodeUIDKey      = "authentication.kubernetes.io/node-uid"
)

// leeway absorbs clock skew between issuer and verifier (go-jose's
// default, which kube uses).
const leeway = time.Minute

// Lookup reports whether a service account still exists, and its uid.
type Lookup func(namespace, name string) (uid string, exists bool)

// BoundObjectLookup is Lookup for the objects tokens can be bound to:
// kind "Pod", "Secret" or "Node" (namespace "" for nodes).
type BoundObjectLookup func(kind, namespace, name string) (uid string, exists bool)

// TokenAuthenticator accepts service account tokens signed by an Issuer's
// key. It implements authn.Authenticator.
type TokenAuthenticator struct {
	issuer    *Issuer
	audiences []string
	lookup    Lookup
	bound     BoundObjectLookup
	secrets   SecretTokenLookup // legacy tokens; nil refuses them
	now       func() time.Time
}

var _ authn.Authenticator = (*TokenAuthenticator)(nil)

// Authenticator verifies tokens of issuer meant for any of audiences
// (the issuer URL when none). lookup finds live service accounts; a token
// whose service account is gone or was re-created is refused.
func Authenticator(issuer *Issuer, audiences []string, lookup Lookup) *TokenAuthenticator {
	if len(audiences) == 0 {
		audiences = []string{issuer.URL()}
	}
	return &TokenAuthenticator{issuer: issuer, audiences: audiences, lookup: lookup, now: time.Now}
}

// WithBoundObjects also refuses tokens whose bound pod, secret or node is
// gone or was re-created.
func (a *TokenAuthenticator) WithBoundObjects(lookup BoundObjectLookup) *TokenAuthenticator {
	a.bound = lookup
	return a
}

var (
	errExpired     = errors.New("service account token has expired")
	errNotYetValid = errors.New("service account token is not valid yet")
	errInvalidated = errors.New("service account token has been invalidated")
)

// AuthenticateRequest reads an "Authorization: Bearer" header. A bearer
// token that is not a JWT is left to other authenticators; a JWT that
// fails verification is an error (401).
func (a *TokenAuthenticator) AuthenticateRequest(r *http.Request) (*request.User, bool, error) {
	token, ok := authn.BearerToken(r)
	if !ok {
		return nil, false, nil
	}
	return a.AuthenticateToken(token)
}

// AuthenticateToken verifies token (for TokenReview as well as requests).
func (a *TokenAuthenticator) AuthenticateToken(token string) (*request.User, bool, error) {
	header, payload, signingInput, sig, err := parseJWT(token)
	if errors.Is(err, errNotJWT) {
		return nil, false, nil
	}
	if err != nil {
		return nil, false, err
	}
	var c claims
	if err := json.Unmarshal(payload, &c); err != nil {
		return nil, false, fmt.Errorf("malformed token claims: %w", err)
	}
	if c.Issuer == LegacyIssuer {
		return a.authenticateLegacy(token, header, payload, signingInput, sig)
	}
	if c.Issuer != a.issuer.URL() {
		return nil, false, fmt.Errorf("token issuer %q is not %q", c.Issuer, a.issuer.URL())
	}
	if header.Alg != es256 || !verifyES256(a.issuer.PublicKey(), signingInput, sig) {
		return nil, false, errors.New("invalid service account token signature")
	}
	now := a.now()
	if c.Expiry == 0 || now.After(time.Unix(c.Expiry, 0).Add(leeway)) {
		return nil, false, errExpired
	}
	if c.NotBefore != 0 && now.Add(leeway).Before(time.Unix(c.NotBefore, 0)) {
		return nil, false, errNotYetValid
	}
	if !slices.ContainsFunc(c.Audience, func(aud string) bool { return slices.Contains(a.audiences, aud) }) {
		return nil, false, fmt.Errorf("token audiences %q is invalid for the target audiences %q", []string(c.Audience), a.audiences)
	}
	kc := c.Kubernetes
	if kc == nil || kc.Namespace == "" || kc.ServiceAccount.Name == "" {
		return nil, false, errors.New("token lacks the kubernetes.io service account claims")
	}
	if c.Subject != ServiceAccountUsername(kc.Namespace, kc.ServiceAccount.Name) {
		return nil, false, errors.New("token subject does not match its service account")
	}
	if a.lookup != nil {
		if uid, exists := a.lookup(kc.Namespace, kc.ServiceAccount.Name); !exists || uid != kc.ServiceAccount.UID {
			return nil, false, errInvalidated
		}
	}
	user := serviceAccountUser(kc.Namespace, kc.ServiceAccount.Name, kc.ServiceAccount.UID)
	if c.ID != "" {
		user.Extra[CredentialIDKey] = []string{"JTI=" + c.ID}
	}
	for _, b := range []struct {
		kind, namespace string
		ref             *ref
		nameKey, uidKey string
	}{
		{"Pod", kc.Namespace, kc.Pod, PodNameKey, PodUIDKey},
		{"Secret", kc.Namespace, kc.Secret, "", ""},
		{"Node", "", kc.Node, NodeNameKey, NodeUIDKey},
	} {
		if b.ref == nil {
			continue
		}
		if a.bound != nil {
			if uid, exists := a.bound(b.kind, b.namespace, b.ref.Name); !exists || uid != b.ref.UID {
				return nil, false, errInvalidated
			}
		}
		if b.nameKey != "" {
			user.Extra[b.nameKey] = []string{b.ref.Name}
			user.Extra[b.uidKey] = []string{b.ref.UID}
		}
	}
	return user, true, nil
}

// serviceAccountUser is who a service account's token signs in as.
func serviceAccountUser(namespace, name, uid string) *request.User {
	return &request.User{
		Name:   ServiceAccountUsername(namespace, name),
		UID:    uid,
		Groups: append(ServiceAccountGroups(namespace), authn.Authenticated),
		Extra:  map[string][]string{},
	}
}

// audience is the aud claim: a string or a list of strings.
type audience []string

func (a audience) MarshalJSON() ([]byte, error) {
	return json.Marshal([]string(a))
}

func (a *audience) UnmarshalJSON(b []byte) error {
	var one string
	if err := json.Unmarshal(b, &one); err == nil {
		*a = audience{one}
		return nil
	}
	var many []string
	if err := json.Unmarshal(b, &many); err != nil {
		return err
	}
	*a = many
	return nil
}
