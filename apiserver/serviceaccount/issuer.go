// Package serviceaccount issues and verifies service account tokens: kube's
// bound, audience-scoped JWTs (TokenRequest, projected volumes,
// `kubectl create token`), and serves the OIDC discovery documents that
// let others verify them.
package serviceaccount

import (
	"crypto/ecdsa"
	"crypto/rand"
	"errors"
	"fmt"
	"time"
)

// DefaultIssuerURL is kube's default --service-account-issuer.
const DefaultIssuerURL = "https://kubernetes.default.svc"

// DefaultExpiration is TokenRequest's default lifetime.
const DefaultExpiration = time.Hour

// BoundObjectRef is the object a token is bound to: it stops working when
// that object is deleted. Kind is "Pod", "Secret" or "Node".
type BoundObjectRef struct {
	Kind string
	Name string
	UID  string
	// Node is, for a pod, the node it runs on (kube's pod node info in
	// the token, and node-name/node-uid in its user's extra).
	Node *BoundObjectRef
}

// ServiceAccountRef names the service account a token is for.
type ServiceAccountRef struct {
	Namespace string
	Name      string
	UID       string
}

// Issuer signs service account tokens.
type Issuer struct {
	key *ecdsa.PrivateKey
	kid string
	url string
	now func() time.Time
}

// NewIssuer returns an issuer signing with key (P-256) as issuerURL
// ("" for DefaultIssuerURL).
func NewIssuer(key *ecdsa.PrivateKey, issuerURL string) (*Issuer, error) {
	if key == nil {
		return nil, errors.New("no service account signing key")
	}
	if issuerURL == "" {
		issuerURL = DefaultIssuerURL
	}
	if _, err := publicJWK(&key.PublicKey); err != nil {
		return nil, err
	}
	kid, err := KeyID(&key.PublicKey)
	if err != nil {
		return nil, err
	}
	return &Issuer{key: key, kid: kid, url: issuerURL, now: time.Now}, nil
}

// URL is the iss claim of the tokens.
func (i *Issuer) URL() string { return i.url }

// PublicKey verifies the tokens.
func (i *Issuer) PublicKey() *ecdsa.PublicKey { return &i.key.PublicKey }

// claims is the payload of a kube service account token.
type claims struct {
	Issuer     string      `json:"iss"`
	Subject    string      `json:"sub"`
	Audience   audience    `json:"aud"`
	Expiry     int64       `json:"exp"`
	IssuedAt   int64       `json:"iat"`
	NotBefore  int64       `json:"nbf"`
	ID         string      `json:"jti"`
	Kubernetes *kubeClaims `json:"kubernetes.io,omitempty"`
}

type kubeClaims struct {
	Namespace      string `json:"namespace"`
	ServiceAccount ref    `json:"serviceaccount"`
	Pod            *ref   `json:"pod,omitempty"`
	Secret         *ref   `json:"secret,omitempty"`
	Node           *ref   `json:"node,omitempty"`
	WarnAfter      *int64 `json:"warnafter,omitempty"`
}

type ref struct {
	Name string `json:"name"`
	UID  string `json:"uid"`
}

// Issue signs a token for sa, valid for audiences (the issuer URL when
// none) for expiration (DefaultExpiration when zero). bound, when not nil,
// ties the token to the lifetime of a pod, secret or node.
func (i *Issuer) Issue(sa ServiceAccountRef, audiences []string, expiration time.Duration, bound *BoundObjectRef) (token string, expiresAt time.Time, err error) {
	if sa.Namespace == "" || sa.Name == "" {
		return "", time.Time{}, errors.New("service account namespace and name are required")
	}
	if expiration <= 0 {
		expiration = DefaultExpiration
	}
	if len(audiences) == 0 {
		audiences = []string{i.url}
	}
	now := i.now()
	expiresAt = now.Add(expiration).Truncate(time.Second)
	kc := &kubeClaims{
		Namespace:      sa.Namespace,
		ServiceAccount: ref{Name: sa.Name, UID: sa.UID},
	}
	if bound != nil {
		r := &ref{Name: bound.Name, UID: bound.UID}
		switch bound.Kind {
		case "Pod":
			kc.Pod = r
			if n := bound.Node; n != nil {
				kc.Node = &ref{Name: n.Name, UID: n.UID}
			}
		case "Secret":
			kc.Secret = r
		case "Node":
			kc.Node = r
		default:
			return "", time.Time{}, fmt.Errorf("cannot bind a token to a %q", bound.Kind)
		}
	}
	c := claims{
		Issuer:     i.url,
		Subject:    ServiceAccountUsername(sa.Namespace, sa.Name),
		Audience:   audiences,
		Expiry:     expiresAt.Unix(),
		IssuedAt:   now.Unix(),
		NotBefore:  now.Unix(),
		ID:         newUUID(),
		Kubernetes: kc,
	}
	token, err = signJWT(i.key, i.kid, c)
	return token, expiresAt, err
}

// ServiceAccountUsername is the user a service account's tokens act as.
func ServiceAccountUsername(namespace, name string) string {
	return "system:serviceaccount:" + namespace + ":" + name
}

// ServiceAccountGroups are the groups every service account of namespace
// belongs to.
func ServiceAccountGroups(namespace string) []string {
	return []string{"system:serviceaccounts", "system:serviceaccounts:" + namespace}
}

// newUUID returns a random (version 4) UUID for the jti claim.
func newUUID() string {
	var u [16]byte
	_, _ = rand.Read(u[:])
	u[6] = u[6]&0x0f | 0x40
	u[8] = u[8]&0x3f | 0x80
	return fmt.Sprintf("%x-%x-%x-%x-%x", u[0:4], u[4:6], u[6:8], u[8:10], u[10:16])
}
