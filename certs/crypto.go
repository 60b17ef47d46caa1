package certs

import (
	"bytes"
	"crypto"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/sha256"
	"crypto/x509"
	"encoding/pem"
	"errors"
	"fmt"
	"log/slog"
	"math/big"
	"net"
	"os"
	"path/filepath"
	"slices"
	"time"
)

const (
	pemCertificate = "CERTIFICATE"
	pemPrivateKey  = "PRIVATE KEY"    // PKCS8
	pemECKey       = "EC PRIVATE KEY" // SEC1, accepted on load only
	pemPublicKey   = "PUBLIC KEY"     // PKIX
)

// issue creates a new key and a certificate for it from template, signed by
// issuer (or self-signed when issuer is nil). template is not modified.
func issue(template *x509.Certificate, issuer *Pair, now time.Time, ttl time.Duration) (*Pair, error) {
	if ttl <= 0 {
		ttl = LeafValidity
	}
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		return nil, fmt.Errorf("generate key: %w", err)
	}
	serial, err := randomSerial()
	if err != nil {
		return nil, err
	}
	ski, err := subjectKeyID(&key.PublicKey)
	if err != nil {
		return nil, err
	}

	cert := *template
	cert.SerialNumber = serial
	cert.SubjectKeyId = ski
	cert.NotBefore = now.Add(-clockSkew)
	cert.NotAfter = now.Add(ttl)

	parent, signer := &cert, crypto.Signer(key)
	if issuer != nil {
		parent, signer = issuer.Cert, issuer.Key
		// A leaf outliving its CA would fail verification early anyway; say so honestly.
		if cert.NotAfter.After(issuer.Cert.NotAfter) {
			cert.NotAfter = issuer.Cert.NotAfter
		}
	}
	der, err := x509.CreateCertificate(rand.Reader, &cert, parent, &key.PublicKey, signer)
	if err != nil {
		return nil, fmt.Errorf("sign certificate: %w", err)
	}
	parsed, err := x509.ParseCertificate(der)
	if err != nil {
		return nil, fmt.Errorf("parse new certificate: %w", err)
	}
	keyPEM, err := encodePrivateKey(key)
	if err != nil {
		return nil, err
	}
	return &Pair{
		Cert:    parsed,
		Key:     key,
		CertPEM: pem.EncodeToMemory(&pem.Block{Type: pemCertificate, Bytes: der}),
		KeyPEM:  keyPEM,
	}, nil
}

var serialLimit = new(big.Int).Lsh(big.NewInt(1), 128)

// randomSerial returns a random positive 128-bit serial number.
func randomSerial() (*big.Int, error) {
	for {
		n, err := rand.Int(rand.Reader, serialLimit)
		if err != nil {
			return nil, fmt.Errorf("serial number: %w", err)
		}
		if n.Sign() > 0 {
			return n, nil
		}
	}
}

// subjectKeyID hashes the encoded public key point (RFC 7093 method 1:
// SHA-256 truncated to 160 bits), so issuers and leaves chain by key ID.
func subjectKeyID(pub *ecdsa.PublicKey) ([]byte, error) {
	ecdhKey, err := pub.ECDH()
	if err != nil {
		return nil, fmt.Errorf("subject key id: %w", err)
	}
	sum := sha256.Sum256(ecdhKey.Bytes())
	return sum[:20], nil
}

func encodePrivateKey(key *ecdsa.PrivateKey) ([]byte, error) {
	der, err := x509.MarshalPKCS8PrivateKey(key)
	if err != nil {
		return nil, fmt.Errorf("encode private key: %w", err)
	}
	return pem.EncodeToMemory(&pem.Block{Type: pemPrivateKey, Bytes: der}), nil
}

func encodePublicKey(pub *ecdsa.PublicKey) ([]byte, error) {
	der, err := x509.MarshalPKIXPublicKey(pub)
	if err != nil {
		return nil, fmt.Errorf("encode public key: %w", err)
	}
	return pem.EncodeToMemory(&pem.Block{Type: pemPublicKey, Bytes: der}), nil
}

func parseCertPEM(data []byte) (*x509.Certificate, error) {
	block, _ := pem.Decode(data)
	if block == nil || block.Type != pemCertificate {
		return nil, errors.New("no CERTIFICATE PEM block")
	}
	return x509.ParseCertificate(block.Bytes)
}

// parseKeyPEM accepts PKCS8 (what we write) and SEC1 (what openssl and
// older tools write), so a hand-placed key keeps working.
func parseKeyPEM(data []byte) (crypto.Signer, error) {
	block, _ := pem.Decode(data)
	if block == nil {
		return nil, errors.New("no PEM block")
	}
	switch block.Type {
	case pemECKey:
		return x509.ParseECPrivateKey(block.Bytes)
	case pemPrivateKey:
		key, err := x509.ParsePKCS8PrivateKey(block.Bytes)
		if err != nil {
			return nil, err
		}
		signer, ok := key.(crypto.Signer)
		if !ok {
			return nil, fmt.Errorf("unsupported key type %T", key)
		}
		return signer, nil
	default:
		return nil, fmt.Errorf("unexpected PEM block %q", block.Type)
	}
}

func publicKeysEqual(a, b crypto.PublicKey) bool {
	comparable, ok := a.(interface{ Equal(crypto.PublicKey) bool })
	return ok && comparable.Equal(b)
}

// serviceAccountKey loads sa.key (the token signing key) or creates it.
// A missing or stale sa.pub is rebuilt from sa.key rather than rotating the
// key, because rotation would invalidate every issued token.
func (e *ensurer) serviceAccountKey() (*ecdsa.PrivateKey, error) {
	keyPath := filepath.Join(e.dir, ServiceAccountKeyFile)
	pubPath := filepath.Join(e.dir, ServiceAccountPubFile)

	key, reason := loadECKey(keyPath)
	if reason == "" {
		tightenKeyPermissions(keyPath, e.log)
	} else {
		var err error
		if key, err = ecdsa.GenerateKey(elliptic.P256(), rand.Reader); err != nil {
			return nil, fmt.Errorf("certs: generate service account key: %w", err)
		}
		keyPEM, err := encodePrivateKey(key)
		if err != nil {
			return nil, err
		}
		if err := writeFileAtomic(keyPath, keyPEM, 0o600); err != nil {
			return nil, err
		}
		msg := "regenerated service account key"
		if reason == reasonMissing {
			msg = "created service account key"
		}
		e.log.Info(msg, "key", keyPath, "reason", reason)
	}

	wantPub, err := encodePublicKey(&key.PublicKey)
	if err != nil {
		return nil, err
	}
	havePub, err := os.ReadFile(pubPath)
	switch {
	case err == nil && bytes.Equal(havePub, wantPub):
		return key, nil
	case errors.Is(err, os.ErrNotExist):
		reason = reasonMissing
	case err != nil:
		reason = "unreadable: " + err.Error()
	default:
		reason = "does not match " + ServiceAccountKeyFile
	}
	if err := writeFileAtomic(pubPath, wantPub, 0o644); err != nil {
		return nil, err
	}
	e.log.Info("wrote service account public key", "file", pubPath, "reason", reason)
	return key, nil
}

func loadECKey(path string) (*ecdsa.PrivateKey, string) {
	data, err := os.ReadFile(path)
	if errors.Is(err, os.ErrNotExist) {
		return nil, reasonMissing
	}
	if err != nil {
		return nil, "unreadable: " + err.Error()
	}
	signer, err := parseKeyPEM(data)
	if err != nil {
		return nil, "unparseable: " + err.Error()
	}
	key, ok := signer.(*ecdsa.PrivateKey)
	if !ok {
		return nil, fmt.Sprintf("unsupported key type %T", signer)
	}
	return key, ""
}

// tightenKeyPermissions repairs a private key left group/world readable
// (e.g. copied by hand). Failure is logged, not fatal: the key still works.
func tightenKeyPermissions(path string, log *slog.Logger) {
	info, err := os.Stat(path)
	if err != nil || info.Mode().Perm()&0o077 == 0 {
		return
	}
	if err := os.Chmod(path, 0o600); err != nil {
		log.Warn("private key is readable by others and could not be restricted", "file", path, "err", err)
		return
	}
	log.Warn("restricted private key permissions to 0600", "file", path, "was", info.Mode().Perm().String())
}

// writeFileAtomic writes via a temp file in the same directory and renames
// it into place, so readers never see a half-written file. No fsync: after a
// power loss a truncated file fails to parse and is simply regenerated.
func writeFileAtomic(path string, data []byte, mode os.FileMode) (err error) {
	tmp, err := os.CreateTemp(filepath.Dir(path), "."+filepath.Base(path)+".tmp-*")
	if err != nil {
		return fmt.Errorf("certs: write %s: %w", path, err)
	}
	defer func() {
		if err != nil {
			tmp.Close()
			os.Remove(tmp.Name())
		}
	}()
	// Set the mode before any key material lands in the file.
	if err = tmp.Chmod(mode); err != nil {
		return fmt.Errorf("certs: write %s: %w", path, err)
	}
	if _, err = tmp.Write(data); err != nil {
		return fmt.Errorf("certs: write %s: %w", path, err)
	}
	if err = tmp.Close(); err != nil {
		return fmt.Errorf("certs: write %s: %w", path, err)
	}
	if err = os.Rename(tmp.Name(), path); err != nil {
		return fmt.Errorf("certs: write %s: %w", path, err)
	}
	return nil
}

func uniqueStrings(in []string) []string {
	out := make([]string, 0, len(in))
	for _, s := range in {
		if s != "" && !slices.Contains(out, s) {
			out = append(out, s)
		}
	}
	return out
}

func uniqueIPs(in []net.IP) []net.IP {
	out := make([]net.IP, 0, len(in))
	for _, ip := range in {
		if ip != nil && !containsIP(out, ip) {
			out = append(out, ip)
		}
	}
	return out
}

func containsString(list []string, s string) bool { return slices.Contains(list, s) }

func containsIP(list []net.IP, ip net.IP) bool {
	return slices.ContainsFunc(list, ip.Equal)
}

// equalStringSets ignores order, because DER sorts the values of a
// multi-valued RDN (several O= groups come back reordered), and treats nil
// and empty alike.
func equalStringSets(a, b []string) bool {
	if len(a) != len(b) {
		return false
	}
	return slices.Equal(slices.Sorted(slices.Values(a)), slices.Sorted(slices.Values(b)))
}

func equalUsages(a, b []x509.ExtKeyUsage) bool {
	return len(a) == len(b) && (len(a) == 0 || slices.Equal(a, b))
}
