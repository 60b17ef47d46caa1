package serviceaccount

// Legacy service account tokens: the long-lived JWTs kube's token
// controller writes into Secrets of type kubernetes.io/service-account-token
// (annotated with the service account's name). They do not expire; they
// are good while that Secret holds them and the service account is the
// same one.

import (
	"crypto/subtle"
	"encoding/json"
	"errors"
	"fmt"

	"github.com/devplane/devplane/apiserver/request"
)

// LegacyIssuer is the iss of legacy tokens.
const LegacyIssuer = "kubernetes/serviceaccount"

// legacyClaims is a legacy token's payload, as kube writes it.
type legacyClaims struct {
	Issuer             string `json:"iss"`
	Namespace          string `json:"kubernetes.io/serviceaccount/namespace"`
	SecretName         string `json:"kubernetes.io/serviceaccount/secret.name"`
	ServiceAccountName string `json:"kubernetes.io/serviceaccount/service-account.name"`
	ServiceAccountUID  string `json:"kubernetes.io/serviceaccount/service-account.uid"`
	Subject            string `json:"sub"`
}

// IssueLegacy signs a legacy token for sa, to be kept in the Secret
// secretName of sa's namespace.
func (i *Issuer) IssueLegacy(sa ServiceAccountRef, secretName string) (string, error) {
	if sa.Namespace == "" || sa.Name == "" || sa.UID == "" || secretName == "" {
		return "", errors.New("service account namespace, name and uid and the secret's name are required")
	}
	return signJWT(i.key, i.kid, legacyClaims{
		Issuer:             LegacyIssuer,
		Namespace:          sa.Namespace,
		SecretName:         secretName,
		ServiceAccountName: sa.Name,
		ServiceAccountUID:  sa.UID,
		Subject:            ServiceAccountUsername(sa.Namespace, sa.Name),
	})
}

// SecretTokenLookup finds a service-account-token Secret that is not
// being deleted: the token it holds and the service account it names.
type SecretTokenLookup func(namespace, name string) (token []byte, serviceAccount string, exists bool)

// WithLegacySecrets also accepts legacy tokens, checked against the
// Secrets that hold them; without it they are refused.
func (a *TokenAuthenticator) WithLegacySecrets(lookup SecretTokenLookup) *TokenAuthenticator {
	a.secrets = lookup
	return a
}

func (a *TokenAuthenticator) authenticateLegacy(token string, header jwtHeader, payload []byte, signingInput string, sig []byte) (*request.User, bool, error) {
	if a.secrets == nil {
		return nil, false, fmt.Errorf("token issuer %q is not %q", LegacyIssuer, a.issuer.URL())
	}
	if header.Alg != es256 || !verifyES256(a.issuer.PublicKey(), signingInput, sig) {
		return nil, false, errors.New("invalid service account token signature")
	}
	var c legacyClaims
	if err := json.Unmarshal(payload, &c); err != nil {
		return nil, false, fmt.Errorf("malformed token claims: %w", err)
	}
	if c.Namespace == "" || c.SecretName == "" || c.ServiceAccountName == "" || c.ServiceAccountUID == "" {
		return nil, false, errors.New("token lacks the kubernetes.io service account claims")
	}
	if c.Subject != ServiceAccountUsername(c.Namespace, c.ServiceAccountName) {
		return nil, false, errors.New("token subject does not match its service account")
	}
	held, sa, exists := a.secrets(c.Namespace, c.SecretName)
	if !exists || sa != c.ServiceAccountName || subtle.ConstantTimeCompare(held, []byte(token)) != 1 {
		return nil, false, errInvalidated
	}
	if a.lookup != nil {
		if uid, exists := a.lookup(c.Namespace, c.ServiceAccountName); !exists || uid != c.ServiceAccountUID {
			return nil, false, errInvalidated
		}
	}
	return serviceAccountUser(c.Namespace, c.ServiceAccountName, c.ServiceAccountUID), true, nil
}
