// Package authn decides who sent a request: a client certificate signed by
// devplane's CA, or a bearer token. Requests that prove nothing are
// anonymous; the authentication filter decides what anonymous may reach.
package authn

import (
	"crypto/subtle"
	"encoding/csv"
	"errors"
	"fmt"
	"io"
	"net/http"
	"os"
	"strings"

	"github.com/devplane/devplane/apiserver/request"
)

// Well-known identities.
const (
	Anonymous       = "system:anonymous"
	Unauthenticated = "system:unauthenticated"
	Authenticated   = "system:authenticated"
	SystemMasters   = "system:masters"
)

// Authenticator finds the user behind a request. ok is false when the
// request carries no credentials this authenticator understands; err is set
// when it carries credentials that are invalid (a 401, not anonymous).
type Authenticator interface {
	AuthenticateRequest(r *http.Request) (u *request.User, ok bool, err error)
}

// Union tries each authenticator in turn.
type Union []Authenticator

func (u Union) AuthenticateRequest(r *http.Request) (*request.User, bool, error) {
	var errs []error
	for _, a := range u {
		user, ok, err := a.AuthenticateRequest(r)
		if err != nil {
			errs = append(errs, err)
			continue
		}
		if ok {
			return user, true, nil
		}
	}
	return nil, false, errors.Join(errs...)
}

// ClientCert accepts certificates the TLS layer already verified against
// the client CA (tls.VerifyClientCertIfGiven): user = CN, groups = O.
type ClientCert struct{}

func (ClientCert) AuthenticateRequest(r *http.Request) (*request.User, bool, error) {
	if r.TLS == nil || len(r.TLS.VerifiedChains) == 0 || len(r.TLS.VerifiedChains[0]) == 0 {
		return nil, false, nil
	}
	leaf := r.TLS.VerifiedChains[0][0]
	if leaf.Subject.CommonName == "" {
		return nil, false, errors.New("client certificate has no common name")
	}
	return withAuthenticated(&request.User{
		Name:   leaf.Subject.CommonName,
		Groups: append([]string(nil), leaf.Subject.Organization...),
	}), true, nil
}

// Tokens authenticates static bearer tokens (kube's --token-auth-file).
type Tokens struct {
	byToken map[string]request.User
}

// NewTokens returns an authenticator for the given token → user map.
func NewTokens(tokens map[string]request.User) *Tokens {
	return &Tokens{byToken: tokens}
}

// LoadTokenFile reads a CSV file of token,user,uid[,"group1,group2"] lines.
func LoadTokenFile(path string) (*Tokens, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	rd := csv.NewReader(f)
	rd.FieldsPerRecord = -1
	rd.TrimLeadingSpace = true
	rd.Comment = '#'
	tokens := map[string]request.User{}
	for line := 1; ; line++ {
		rec, err := rd.Read()
		if err == io.EOF {
			break
		}
		if err != nil {
			return nil, fmt.Errorf("%s: %w", path, err)
		}
		if len(rec) < 3 || rec[0] == "" || rec[1] == "" {
			return nil, fmt.Errorf("%s line %d: want token,user,uid[,groups]", path, line)
		}
		u := request.User{Name: rec[1], UID: rec[2]}
		if len(rec) > 3 && rec[3] != "" {
			for _, g := range strings.Split(rec[3], ",") {
				u.Groups = append(u.Groups, strings.TrimSpace(g))
			}
		}
		if _, dup := tokens[rec[0]]; dup {
			return nil, fmt.Errorf("%s line %d: duplicate token", path, line)
		}
		tokens[rec[0]] = u
	}
	return &Tokens{byToken: tokens}, nil
}

func (t *Tokens) AuthenticateRequest(r *http.Request) (*request.User, bool, error) {
	token, ok := BearerToken(r)
	if !ok {
		return nil, false, nil
	}
	for candidate, u := range t.byToken {
		if subtle.ConstantTimeCompare([]byte(candidate), []byte(token)) == 1 {
			user := u
			user.Groups = append([]string(nil), u.Groups...)
			return withAuthenticated(&user), true, nil
		}
	}
	return nil, false, nil
}

// BearerToken returns the token of an "Authorization: Bearer" header.
func BearerToken(r *http.Request) (string, bool) {
	h := r.Header.Get("Authorization")
	const prefix = "bearer "
	if len(h) <= len(prefix) || !strings.EqualFold(h[:len(prefix)], prefix) {
		return "", false
	}
	token := strings.TrimSpace(h[len(prefix):])
	return token, token != ""
}

// AnonymousUser is who an unauthenticated request acts as.
func AnonymousUser() *request.User {
	return &request.User{Name: Anonymous, Groups: []string{Unauthenticated}}
}

func withAuthenticated(u *request.User) *request.User {
	for _, g := range u.Groups {
		if g == Authenticated {
			return u
		}
	}
	u.Groups = append(u.Groups, Authenticated)
	return u
}
