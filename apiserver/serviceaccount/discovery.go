package serviceaccount

import (
	"crypto/ecdsa"
	"encoding/json"
	"net/http"
	"strings"
)

// Paths of kube's service account issuer discovery.
const (
	OpenIDConfigPath = "/.well-known/openid-configuration"
	JWKSPath         = "/openid/v1/jwks"
)

type openIDMetadata struct {
	Issuer        string   `json:"issuer"`
	JWKSURI       string   `json:"jwks_uri"`
	ResponseTypes []string `json:"response_types_supported"`
	SubjectTypes  []string `json:"subject_types_supported"`
	SigningAlgs   []string `json:"id_token_signing_alg_values_supported"`
}

type jwks struct {
	Keys []jwk `json:"keys"`
}

// DiscoveryHandler serves OpenIDConfigPath and JWKSPath as kube-apiserver
// does, so OIDC-aware clients (cloud IAM, Vault, ...) can verify service
// account tokens. externalURL is where clients reach this server; the
// jwks_uri points there (the issuer URL when empty).
func DiscoveryHandler(issuerURL, externalURL string, pub *ecdsa.PublicKey) (http.Handler, error) {
	if issuerURL == "" {
		issuerURL = DefaultIssuerURL
	}
	if externalURL == "" {
		externalURL = issuerURL
	}
	key, err := publicJWK(pub)
	if err != nil {
		return nil, err
	}
	config, err := json.Marshal(openIDMetadata{
		Issuer:        issuerURL,
		JWKSURI:       strings.TrimSuffix(externalURL, "/") + JWKSPath,
		ResponseTypes: []string{"id_token"},
		SubjectTypes:  []string{"public"},
		SigningAlgs:   []string{es256},
	})
	if err != nil {
		return nil, err
	}
	keySet, err := json.Marshal(jwks{Keys: []jwk{key}})
	if err != nil {
		return nil, err
	}
	mux := http.NewServeMux()
	mux.Handle("GET "+OpenIDConfigPath, serveStatic(config, "application/json"))
	mux.Handle("GET "+JWKSPath, serveStatic(keySet, "application/jwk-set+json"))
	return mux, nil
}

func serveStatic(body []byte, contentType string) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", contentType)
		// kube lets caches keep these for an hour; keys rotate rarely.
		w.Header().Set("Cache-Control", "public, max-age=3600")
		_, _ = w.Write(body)
	})
}
