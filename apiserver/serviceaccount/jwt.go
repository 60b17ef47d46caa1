package serviceaccount

import (
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/sha256"
	"crypto/x509"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"math/big"
	"strings"
)

// A compact-serialized JWS signed with ES256 (ECDSA P-256, SHA-256), the
// only form devplane issues or accepts. Written by hand to keep the
// dependency surface small; it is the whole of what the tokens need.

const es256 = "ES256"

var b64 = base64.RawURLEncoding

type jwtHeader struct {
	Alg string `json:"alg"`
	Kid string `json:"kid,omitempty"`
	Typ string `json:"typ,omitempty"`
}

// signJWT serializes claims and signs them with key under key id kid.
func signJWT(key *ecdsa.PrivateKey, kid string, claims any) (string, error) {
	header, err := json.Marshal(jwtHeader{Alg: es256, Kid: kid})
	if err != nil {
		return "", err
	}
	payload, err := json.Marshal(claims)
	if err != nil {
		return "", err
	}
	signingInput := b64.EncodeToString(header) + "." + b64.EncodeToString(payload)
	digest := sha256.Sum256([]byte(signingInput))
	r, s, err := ecdsa.Sign(rand.Reader, key, digest[:])
	if err != nil {
		return "", err
	}
	// JWS wants r and s as fixed-size big-endian integers, not ASN.1.
	sig := make([]byte, 64)
	r.FillBytes(sig[:32])
	s.FillBytes(sig[32:])
	return signingInput + "." + b64.EncodeToString(sig), nil
}

var errNotJWT = errors.New("not a JWT")

// parseJWT splits a token and decodes header and payload without
// verifying anything; errNotJWT means it does not even look like one.
func parseJWT(token string) (header jwtHeader, payload []byte, signingInput string, sig []byte, err error) {
	parts := strings.Split(token, ".")
	if len(parts) != 3 {
		return header, nil, "", nil, errNotJWT
	}
	rawHeader, err := b64.DecodeString(parts[0])
	if err != nil {
		return header, nil, "", nil, errNotJWT
	}
	if err := json.Unmarshal(rawHeader, &header); err != nil {
		return header, nil, "", nil, errNotJWT
	}
	if payload, err = b64.DecodeString(parts[1]); err != nil {
		return header, nil, "", nil, errNotJWT
	}
	if sig, err = b64.DecodeString(parts[2]); err != nil {
		return header, nil, "", nil, fmt.Errorf("malformed signature: %w", err)
	}
	return header, payload, parts[0] + "." + parts[1], sig, nil
}

// verifyES256 checks a JWS signature made by pub.
func verifyES256(pub *ecdsa.PublicKey, signingInput string, sig []byte) bool {
	if len(sig) != 64 {
		return false
	}
	digest := sha256.Sum256([]byte(signingInput))
	r := new(big.Int).SetBytes(sig[:32])
	s := new(big.Int).SetBytes(sig[32:])
	return ecdsa.Verify(pub, digest[:], r, s)
}

// KeyID is kube's key id for a public key: the unpadded base64url SHA-256
// of its PKIX DER encoding, so verifiers can pick the key from the JWKS.
func KeyID(pub *ecdsa.PublicKey) (string, error) {
	der, err := x509.MarshalPKIXPublicKey(pub)
	if err != nil {
		return "", err
	}
	sum := sha256.Sum256(der)
	return b64.EncodeToString(sum[:]), nil
}

// jwk is one key of a JSON Web Key Set (RFC 7517), EC form.
type jwk struct {
	Use string `json:"use"`
	Kty string `json:"kty"`
	Kid string `json:"kid"`
	Crv string `json:"crv"`
	Alg string `json:"alg"`
	X   string `json:"x"`
	Y   string `json:"y"`
}

func publicJWK(pub *ecdsa.PublicKey) (jwk, error) {
	if pub.Curve != elliptic.P256() {
		return jwk{}, errors.New("service account key must be ECDSA P-256")
	}
	kid, err := KeyID(pub)
	if err != nil {
		return jwk{}, err
	}
	point, err := pub.Bytes() // 0x04 || X || Y, each 32 bytes
	if err != nil {
		return jwk{}, err
	}
	return jwk{
		Use: "sig", Kty: "EC", Kid: kid, Crv: "P-256", Alg: es256,
		X: b64.EncodeToString(point[1:33]),
		Y: b64.EncodeToString(point[33:65]),
	}, nil
}
