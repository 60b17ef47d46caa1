package certs

import (
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/x509"
	"crypto/x509/pkix"
	"slices"
	"testing"
	"time"
)

// A request is signed as asked (subject, names, key, usages), backdated a
// little, never past the CA; a request whose signature fails is not.
func TestSignRequest(t *testing.T) {
	b, _ := ensure(t, Options{Dir: t.TempDir()})
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	der, err := x509.CreateCertificateRequest(rand.Reader, &x509.CertificateRequest{
		Subject: pkix.Name{CommonName: "system:node:n1", Organization: []string{"system:nodes"}}, DNSNames: []string{"n1.example"}}, key)
	if err != nil {
		t.Fatal(err)
	}
	req, err := x509.ParseCertificateRequest(der)
	if err != nil {
		t.Fatal(err)
	}
	certPEM, err := b.SignRequest(req, x509.KeyUsageDigitalSignature, []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth}, time.Hour)
	if err != nil {
		t.Fatal(err)
	}
	c := mustParseCert(t, certPEM)
	if c.Subject.CommonName != "system:node:n1" || !slices.Equal(c.DNSNames, []string{"n1.example"}) || !c.PublicKey.(*ecdsa.PublicKey).Equal(&key.PublicKey) ||
		c.KeyUsage != x509.KeyUsageDigitalSignature || !slices.Equal(c.ExtKeyUsage, []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth}) || c.IsCA {
		t.Errorf("signed: %v %v usages %v %v CA %v", c.Subject, c.DNSNames, c.KeyUsage, c.ExtKeyUsage, c.IsCA)
	}
	if err := verifyFor(c, b.CAPool(), x509.ExtKeyUsageServerAuth, "n1.example"); err != nil {
		t.Errorf("does not verify: %v", err)
	}
	if back := time.Since(c.NotBefore); back < 4*time.Minute || back > 6*time.Minute {
		t.Errorf("backdated %v, want 5m", back)
	}
	if life := time.Until(c.NotAfter); life < 59*time.Minute || life > time.Hour {
		t.Errorf("lives %v, want 1h", life)
	}
	certPEM, err = b.SignRequest(req, x509.KeyUsageDigitalSignature, nil, 100*365*24*time.Hour)
	if err != nil {
		t.Fatal(err)
	}
	if c := mustParseCert(t, certPEM); !c.NotAfter.Equal(b.CA.Cert.NotAfter) {
		t.Errorf("outlives the CA: %v after %v", c.NotAfter, b.CA.Cert.NotAfter)
	}
	req.Signature[len(req.Signature)-1] ^= 0xff
	if _, err := b.SignRequest(req, x509.KeyUsageDigitalSignature, nil, time.Hour); err == nil {
		t.Error("signed a request whose signature fails")
	}
}
