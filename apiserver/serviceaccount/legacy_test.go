package serviceaccount

import (
	"slices"
	"strings"
	"testing"
)

// A legacy token carries kube's claims, and signs in while the Secret it
// names holds it for the same account, and the account is the same one.
func TestLegacyTokens(t *testing.T) {
	iss := newTestIssuer(t)
	token, err := iss.IssueLegacy(sa, "builder-token")
	if err != nil {
		t.Fatal(err)
	}
	claims := decodeSegment(t, token, 1)
	for k, v := range map[string]string{
		"iss": LegacyIssuer, "sub": "system:serviceaccount:ci:builder",
		"kubernetes.io/serviceaccount/namespace":            "ci",
		"kubernetes.io/serviceaccount/secret.name":          "builder-token",
		"kubernetes.io/serviceaccount/service-account.name": "builder",
		"kubernetes.io/serviceaccount/service-account.uid":  "sa-uid-1",
	} {
		if claims[k] != v {
			t.Errorf("claim %s = %v, want %q", k, claims[k], v)
		}
	}
	if _, ok := claims["exp"]; ok {
		t.Error("a legacy token expires")
	}
	held := map[string]string{"ci/builder-token": token}
	secrets := func(ns, name string) ([]byte, string, bool) {
		tok, ok := held[ns+"/"+name]
		return []byte(tok), "builder", ok
	}
	a := Authenticator(iss, nil, saExists).WithLegacySecrets(secrets)
	user, ok, err := a.AuthenticateToken(token)
	if err != nil || !ok || user.Name != "system:serviceaccount:ci:builder" || user.UID != "sa-uid-1" || !slices.Contains(user.Groups, "system:serviceaccounts:ci") {
		t.Fatalf("legacy token: %+v %v %v", user, ok, err)
	}
	if _, ok, err := Authenticator(iss, nil, saExists).AuthenticateToken(token); ok || err == nil {
		t.Error("accepted without the Secrets to check it against")
	}
	held["ci/builder-token"] = "another"
	if _, ok, err := a.AuthenticateToken(token); ok || err != errInvalidated {
		t.Errorf("accepted though its Secret holds another token: %v", err)
	}
	held["ci/builder-token"] = token
	recreated := Authenticator(iss, nil, func(string, string) (string, bool) { return "sa-uid-2", true }).WithLegacySecrets(secrets)
	if _, ok, err := recreated.AuthenticateToken(token); ok || err != errInvalidated {
		t.Errorf("accepted for a re-created account: %v", err)
	}
	parts := strings.Split(token, ".")
	forged := parts[0] + "." + parts[1] + "." + strings.Repeat("A", len(parts[2]))
	if _, ok, err := a.AuthenticateToken(forged); ok || err == nil {
		t.Error("accepted a bad signature")
	}
	other := newTestIssuer(t)
	foreign, err := other.IssueLegacy(sa, "builder-token")
	if err != nil {
		t.Fatal(err)
	}
	held["ci/builder-token"] = foreign
	if _, ok, err := a.AuthenticateToken(foreign); ok || err == nil {
		t.Error("accepted a token signed by another key")
	}
}
