package certs

import (
	"crypto/rand"
	"crypto/x509"
	"encoding/pem"
	"errors"
	"fmt"
	"time"
)

// requestBackdate backdates certificates signed for requests, as kube's
// CSR signer does: long enough for clocks a little behind, short against
// the shortest validity a request may ask for (ten minutes).
const requestBackdate = 5 * time.Minute

// SignRequest signs a certificate for a PKCS#10 request with the main CA:
// the request's subject, names and public key, the given usages, valid
// from a few minutes ago for ttl (never past the CA's own expiry). The
// caller decides whether the request deserves it.
func (b *Bundle) SignRequest(req *x509.CertificateRequest, keyUsage x509.KeyUsage, extKeyUsage []x509.ExtKeyUsage, ttl time.Duration) ([]byte, error) {
	if b.CA == nil || b.CA.Cert == nil || b.CA.Key == nil {
		return nil, errors.New("certs: no CA to sign with")
	}
	if err := req.CheckSignature(); err != nil {
		return nil, fmt.Errorf("certs: request signature: %w", err)
	}
	if ttl <= 0 {
		ttl = LeafValidity
	}
	serial, err := randomSerial()
	if err != nil {
		return nil, err
	}
	now := b.clock()
	template := &x509.Certificate{
		SerialNumber:          serial,
		Subject:               req.Subject,
		DNSNames:              req.DNSNames,
		IPAddresses:           req.IPAddresses,
		EmailAddresses:        req.EmailAddresses,
		URIs:                  req.URIs,
		KeyUsage:              keyUsage,
		ExtKeyUsage:           extKeyUsage,
		BasicConstraintsValid: true,
		NotBefore:             now.Add(-requestBackdate),
		NotAfter:              now.Add(ttl),
	}
	if template.NotAfter.After(b.CA.Cert.NotAfter) {
		template.NotAfter = b.CA.Cert.NotAfter
	}
	der, err := x509.CreateCertificate(rand.Reader, template, b.CA.Cert, req.PublicKey, b.CA.Key)
	if err != nil {
		return nil, fmt.Errorf("certs: sign request: %w", err)
	}
	return pem.EncodeToMemory(&pem.Block{Type: pemCertificate, Bytes: der}), nil
}
