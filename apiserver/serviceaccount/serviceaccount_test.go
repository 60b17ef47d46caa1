package serviceaccount

import (
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/sha256"
	"encoding/base64"
	"encoding/json"
	"io"
	"math/big"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"testing"
	"time"
)

func newTestIssuer(t *testing.T) *Issuer {
	t.Helper()
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	iss, err := NewIssuer(key, "")
	if err != nil {
		t.Fatal(err)
	}
	return iss
}

var sa = ServiceAccountRef{Namespace: "ci", Name: "builder", UID: "sa-uid-1"}

func saExists(ns, name string) (string, bool) {
	if ns == "ci" && name == "builder" {
		return "sa-uid-1", true
	}
	return "", false
}

func bearer(token string) *http.Request {
	r := httptest.NewRequest("GET", "/api", nil)
	r.Header.Set("Authorization", "Bearer "+token)
	return r
}

func decodeSegment(t *testing.T, token string, i int) map[string]any {
	t.Helper()
	raw, err := base64.RawURLEncoding.DecodeString(strings.Split(token, ".")[i])
	if err != nil {
		t.Fatal(err)
	}
	m := map[string]any{}
	if err := json.Unmarshal(raw, &m); err != nil {
		t.Fatal(err)
	}
	return m
}

func TestIssueAuthenticateRoundTrip(t *testing.T) {
	iss := newTestIssuer(t)
	before := time.Now()
	token, exp, err := iss.Issue(sa, []string{"api", "vault"}, 10*time.Minute, &BoundObjectRef{Kind: "Pod", Name: "web-0", UID: "pod-uid"})
	if err != nil {
		t.Fatal(err)
	}
	if d := exp.Sub(before); d < 9*time.Minute || d > 11*time.Minute {
		t.Errorf("expires in %v", d)
	}

	header := decodeSegment(t, token, 0)
	kid, _ := KeyID(iss.PublicKey())
	if header["alg"] != "ES256" || header["kid"] != kid {
		t.Errorf("header = %v", header)
	}
	c := decodeSegment(t, token, 1)
	if c["iss"] != DefaultIssuerURL || c["sub"] != "system:serviceaccount:ci:builder" || c["jti"] == "" {
		t.Errorf("claims = %v", c)
	}
	for _, k := range []string{"exp", "iat", "nbf"} {
		if _, ok := c[k].(float64); !ok {
			t.Errorf("claim %s = %v", k, c[k])
		}
	}
	kube := c["kubernetes.io"].(map[string]any)
	if kube["namespace"] != "ci" ||
		kube["serviceaccount"].(map[string]any)["uid"] != "sa-uid-1" ||
		kube["pod"].(map[string]any)["name"] != "web-0" {
		t.Errorf("kubernetes.io = %v", kube)
	}

	authn := Authenticator(iss, []string{"api"}, saExists).WithBoundObjects(func(kind, ns, name string) (string, bool) {
		return "pod-uid", kind == "Pod" && ns == "ci" && name == "web-0"
	})
	user, ok, err := authn.AuthenticateRequest(bearer(token))
	if err != nil || !ok {
		t.Fatalf("authenticate: %v %v", ok, err)
	}
	if user.Name != "system:serviceaccount:ci:builder" || user.UID != "sa-uid-1" {
		t.Errorf("user = %+v", user)
	}
	wantGroups := []string{"system:serviceaccounts", "system:serviceaccounts:ci", "system:authenticated"}
	if !slices.Equal(user.Groups, wantGroups) {
		t.Errorf("groups = %v", user.Groups)
	}
	if got := user.Extra[CredentialIDKey]; len(got) != 1 || got[0] != "JTI="+c["jti"].(string) {
		t.Errorf("credential id = %v", got)
	}
	if user.Extra[PodNameKey][0] != "web-0" || user.Extra[PodUIDKey][0] != "pod-uid" {
		t.Errorf("pod extras = %v", user.Extra)
	}

	t.Run("bound pod deleted", func(t *testing.T) {
		gone := Authenticator(iss, []string{"api"}, saExists).WithBoundObjects(func(string, string, string) (string, bool) { return "", false })
		if _, ok, err := gone.AuthenticateRequest(bearer(token)); ok || err == nil {
			t.Errorf("token of deleted pod accepted: %v %v", ok, err)
		}
	})
}

func TestAuthenticateRejects(t *testing.T) {
	iss := newTestIssuer(t)
	valid, _, err := iss.Issue(sa, nil, time.Hour, nil)
	if err != nil {
		t.Fatal(err)
	}
	other := newTestIssuer(t)
	forged, _, _ := other.Issue(sa, nil, time.Hour, nil)

	otherURL, _ := NewIssuer(other.key, "https://elsewhere.example")
	wrongIssuer, _, _ := otherURL.Issue(sa, nil, time.Hour, nil)

	past := newTestIssuer(t)
	past.key = iss.key
	past.now = func() time.Time { return time.Now().Add(-2 * time.Hour) }
	expired, _, _ := past.Issue(sa, nil, time.Hour, nil)

	// within the leeway: expired 30s ago still works
	justExpired := &Issuer{key: iss.key, kid: iss.kid, url: iss.url, now: func() time.Time { return time.Now().Add(-time.Hour - 30*time.Second) }}
	lenient, _, _ := justExpired.Issue(sa, nil, time.Hour, nil)

	parts := strings.Split(valid, ".")
	payload, _ := base64.RawURLEncoding.DecodeString(parts[1])
	tamperedPayload := strings.Replace(string(payload), `"builder"`, `"admin00"`, -1)
	tampered := parts[0] + "." + base64.RawURLEncoding.EncodeToString([]byte(tamperedPayload)) + "." + parts[2]
	sig, _ := base64.RawURLEncoding.DecodeString(parts[2])
	sig[5] ^= 0xff
	badSig := parts[0] + "." + parts[1] + "." + base64.RawURLEncoding.EncodeToString(sig)

	a := Authenticator(iss, nil, saExists)
	tests := []struct {
		name, token, wantErr string
	}{
		{"forged with another key", forged, "signature"},
		{"tampered payload", tampered, "signature"},
		{"tampered signature", badSig, "signature"},
		{"wrong issuer", wrongIssuer, "issuer"},
		{"expired", expired, "expired"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, ok, err := a.AuthenticateRequest(bearer(tt.token))
			if ok || err == nil || !strings.Contains(err.Error(), tt.wantErr) {
				t.Errorf("got ok=%v err=%v, want error containing %q", ok, err, tt.wantErr)
			}
		})
	}

	t.Run("within leeway", func(t *testing.T) {
		if _, ok, err := a.AuthenticateRequest(bearer(lenient)); !ok || err != nil {
			t.Errorf("got %v %v", ok, err)
		}
	})
	t.Run("wrong audience", func(t *testing.T) {
		_, ok, err := Authenticator(iss, []string{"vault"}, saExists).AuthenticateRequest(bearer(valid))
		if ok || err == nil || !strings.Contains(err.Error(), "audiences") {
			t.Errorf("got %v %v", ok, err)
		}
	})
	t.Run("service account deleted", func(t *testing.T) {
		gone := func(string, string) (string, bool) { return "", false }
		if _, ok, err := Authenticator(iss, nil, gone).AuthenticateRequest(bearer(valid)); ok || err == nil {
			t.Errorf("got %v %v", ok, err)
		}
	})
	t.Run("service account re-created", func(t *testing.T) {
		recreated := func(string, string) (string, bool) { return "sa-uid-2", true }
		if _, ok, err := Authenticator(iss, nil, recreated).AuthenticateRequest(bearer(valid)); ok || err == nil {
			t.Errorf("got %v %v", ok, err)
		}
	})
	t.Run("not a JWT is left to others", func(t *testing.T) {
		if _, ok, err := a.AuthenticateRequest(bearer("static-token-abc")); ok || err != nil {
			t.Errorf("got %v %v", ok, err)
		}
		if _, ok, err := a.AuthenticateRequest(httptest.NewRequest("GET", "/", nil)); ok || err != nil {
			t.Errorf("no header: %v %v", ok, err)
		}
	})
}

func TestDiscoveryServesVerifiableJWKS(t *testing.T) {
	iss := newTestIssuer(t)
	token, _, err := iss.Issue(sa, nil, time.Hour, nil)
	if err != nil {
		t.Fatal(err)
	}
	h, err := DiscoveryHandler(iss.URL(), "https://10.0.0.1:6443/", iss.PublicKey())
	if err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewServer(h)
	defer srv.Close()

	get := func(path string) (*http.Response, []byte) {
		resp, err := http.Get(srv.URL + path)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		body, _ := io.ReadAll(resp.Body)
		return resp, body
	}

	resp, body := get(OpenIDConfigPath)
	var config map[string]any
	if err := json.Unmarshal(body, &config); err != nil || resp.Header.Get("Content-Type") != "application/json" {
		t.Fatalf("config %s: %v %s", resp.Header.Get("Content-Type"), err, body)
	}
	if config["issuer"] != DefaultIssuerURL || config["jwks_uri"] != "https://10.0.0.1:6443/openid/v1/jwks" {
		t.Errorf("config = %v", config)
	}
	if algs := config["id_token_signing_alg_values_supported"].([]any); len(algs) != 1 || algs[0] != "ES256" {
		t.Errorf("algs = %v", algs)
	}

	resp, body = get(JWKSPath)
	if resp.Header.Get("Content-Type") != "application/jwk-set+json" {
		t.Errorf("jwks content type %q", resp.Header.Get("Content-Type"))
	}
	var set struct {
		Keys []struct{ Use, Kty, Kid, Crv, Alg, X, Y string }
	}
	if err := json.Unmarshal(body, &set); err != nil || len(set.Keys) != 1 {
		t.Fatalf("jwks %v %s", err, body)
	}
	k := set.Keys[0]
	if k.Use != "sig" || k.Kty != "EC" || k.Crv != "P-256" || k.Alg != "ES256" {
		t.Errorf("key = %+v", k)
	}

	// verify the token with nothing but the published key
	x, _ := base64.RawURLEncoding.DecodeString(k.X)
	y, _ := base64.RawURLEncoding.DecodeString(k.Y)
	pub, err := ecdsa.ParseUncompressedPublicKey(elliptic.P256(), append(append([]byte{4}, x...), y...))
	if err != nil {
		t.Fatal(err)
	}
	parts := strings.Split(token, ".")
	header := decodeSegment(t, token, 0)
	if header["kid"] != k.Kid {
		t.Errorf("token kid %v, jwks kid %v", header["kid"], k.Kid)
	}
	sig, _ := base64.RawURLEncoding.DecodeString(parts[2])
	digest := sha256.Sum256([]byte(parts[0] + "." + parts[1]))
	if !ecdsa.Verify(pub, digest[:], new(big.Int).SetBytes(sig[:32]), new(big.Int).SetBytes(sig[32:])) {
		t.Error("token does not verify with the published JWKS key")
	}

	if resp, _ := get("/openid/v1/other"); resp.StatusCode != http.StatusNotFound {
		t.Errorf("unknown path = %d", resp.StatusCode)
	}
}

func TestNewIssuerRejectsOtherCurves(t *testing.T) {
	key, _ := ecdsa.GenerateKey(elliptic.P384(), rand.Reader)
	if _, err := NewIssuer(key, ""); err == nil {
		t.Error("P-384 key accepted")
	}
	if _, err := NewIssuer(nil, ""); err == nil {
		t.Error("nil key accepted")
	}
}

func TestUUIDFormat(t *testing.T) {
	u := newUUID()
	if len(u) != 36 || u[14] != '4' || strings.Count(u, "-") != 4 || u == newUUID() {
		t.Errorf("uuid %q", u)
	}
}
