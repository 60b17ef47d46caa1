// Package certs creates, or loads and checks, every certificate and key the
// devplane control plane needs, under one PKI directory.
//
// All keys are ECDSA P-256: generation takes microseconds, so a fresh start
// costs a few milliseconds. Only the standard library is used.
package certs

import (
	"crypto"
	"crypto/ecdsa"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"os"
	"path/filepath"
	"time"
)

// File names under Options.Dir.
const (
	CACertFile               = "ca.crt"
	CAKeyFile                = "ca.key"
	ServingCertFile          = "apiserver.crt"
	ServingKeyFile           = "apiserver.key"
	AdminCertFile            = "admin.crt"
	AdminKeyFile             = "admin.key"
	FrontProxyCACertFile     = "front-proxy-ca.crt"
	FrontProxyCAKeyFile      = "front-proxy-ca.key"
	FrontProxyClientCertFile = "front-proxy-client.crt"
	FrontProxyClientKeyFile  = "front-proxy-client.key"
	ServiceAccountKeyFile    = "sa.key"
	ServiceAccountPubFile    = "sa.pub"
)

// Subject names and lifetimes.
const (
	CACommonName               = "devplane-ca"
	FrontProxyCACommonName     = "devplane-front-proxy-ca"
	ServingCommonName          = "devplane-apiserver"
	AdminCommonName            = "devplane-admin"
	AdminGroup                 = "system:masters"
	FrontProxyClientCommonName = "front-proxy-client"

	CAValidity   = 10 * 365 * 24 * time.Hour
	LeafValidity = 365 * 24 * time.Hour

	// RenewBefore: a certificate expiring sooner than this is replaced, so a
	// running control plane never crosses an expiry between restarts of a day.
	RenewBefore = 24 * time.Hour

	// clockSkew backdates NotBefore so hosts with slightly slow clocks
	// (VMs, CI runners) accept a certificate created seconds ago.
	clockSkew = time.Hour
)

// DefaultServingDNSNames are always in the serving certificate: the names
// in-cluster clients use for the kubernetes service, plus localhost.
var DefaultServingDNSNames = []string{
	"kubernetes",
	"kubernetes.default",
	"kubernetes.default.svc",
	"kubernetes.default.svc.cluster.local",
	"localhost",
}

// DefaultServingIPs are always in the serving certificate.
var DefaultServingIPs = []net.IP{net.IPv4(127, 0, 0, 1), net.IPv6loopback}

// DefaultServiceIP is the first address of the default service CIDR; callers
// should pass it (or their own first service IP) in Options.IPs.
var DefaultServiceIP = net.IPv4(10, 0, 0, 1)

// Options says where the PKI lives and what the serving cert must cover.
type Options struct {
	Dir      string       // e.g. <data-dir>/pki
	DNSNames []string     // extra DNS SANs for the serving cert (e.g. the host name)
	IPs      []net.IP     // extra IP SANs: bind/advertise address, first service IP ...
	Logger   *slog.Logger // nil → slog.Default()
	Now      func() time.Time
}

// Bundle is the full set of credentials, loaded or freshly created.
type Bundle struct {
	Dir               string
	CA                *Pair // self-signed "devplane-ca"
	Serving           *Pair // kube-apiserver serving cert, signed by CA
	Admin             *Pair // client cert CN devplane-admin, O system:masters
	FrontProxyCA      *Pair // separate self-signed CA for request-header auth
	FrontProxyClient  *Pair // client cert the aggregator presents to backends
	ServiceAccountKey *ecdsa.PrivateKey

	now func() time.Time
}

// Pair is one certificate with its private key, parsed and as PEM.
type Pair struct {
	Cert              *x509.Certificate
	Key               crypto.Signer
	CertPEM, KeyPEM   []byte
	CertFile, KeyFile string
}

// TLSCertificate returns the pair ready for tls.Config.Certificates.
// The leaf is already parsed, so no re-parsing happens per handshake.
func (p *Pair) TLSCertificate() (tls.Certificate, error) {
	if p == nil || p.Cert == nil || p.Key == nil {
		return tls.Certificate{}, errors.New("certs: empty pair")
	}
	return tls.Certificate{
		Certificate: [][]byte{p.Cert.Raw},
		PrivateKey:  p.Key,
		Leaf:        p.Cert,
	}, nil
}

// CAPool returns a pool holding only the main CA: use it to verify the
// serving cert (clients) and client certs (the apiserver).
func (b *Bundle) CAPool() *x509.CertPool {
	pool := x509.NewCertPool()
	pool.AddCert(b.CA.Cert)
	return pool
}

// FrontProxyCAPool returns a pool holding only the front-proxy CA: the
// aggregated backends trust request headers only from clients it signed.
func (b *Bundle) FrontProxyCAPool() *x509.CertPool {
	pool := x509.NewCertPool()
	pool.AddCert(b.FrontProxyCA.Cert)
	return pool
}

// ServiceAccountKeyPath is the file holding the token signing key (PKCS8 PEM).
func (b *Bundle) ServiceAccountKeyPath() string {
	return filepath.Join(b.Dir, ServiceAccountKeyFile)
}

// ServiceAccountPublicKeyPath is the file holding the token verifying key (PKIX PEM).
func (b *Bundle) ServiceAccountPublicKeyPath() string {
	return filepath.Join(b.Dir, ServiceAccountPubFile)
}

// clock tolerates a Bundle assembled by hand (without Ensure).
func (b *Bundle) clock() time.Time {
	if b.now == nil {
		return time.Now()
	}
	return b.now()
}

// IssueClient signs a fresh client certificate (CN=user, O=groups) with the
// main CA. Nothing is written to disk. ttl <= 0 means LeafValidity.
func (b *Bundle) IssueClient(user string, groups []string, ttl time.Duration) (certPEM, keyPEM []byte, err error) {
	if user == "" {
		return nil, nil, errors.New("certs: IssueClient needs a user name")
	}
	template := clientTemplate(user, groups)
	p, err := issue(template, b.CA, b.clock(), ttl)
	if err != nil {
		return nil, nil, err
	}
	return p.CertPEM, p.KeyPEM, nil
}

// IssueServing signs a serving certificate for hosts (DNS names or IP
// literals) with the main CA. Nothing is written to disk. ttl <= 0 means
// LeafValidity.
func (b *Bundle) IssueServing(hosts []string, ttl time.Duration) (certPEM, keyPEM []byte, err error) {
	if len(hosts) == 0 {
		return nil, nil, errors.New("certs: IssueServing needs at least one host")
	}
	var dnsNames []string
	var ips []net.IP
	for _, h := range hosts {
		if ip := net.ParseIP(h); ip != nil {
			ips = append(ips, ip)
		} else {
			dnsNames = append(dnsNames, h)
		}
	}
	template := servingTemplate(hosts[0], dnsNames, ips)
	p, err := issue(template, b.CA, b.clock(), ttl)
	if err != nil {
		return nil, nil, err
	}
	return p.CertPEM, p.KeyPEM, nil
}

// Ensure loads each file if present and valid, otherwise (re)creates it and
// logs why. A regenerated CA invalidates everything it signed, which is then
// regenerated too (detected by signature check, not by bookkeeping).
func Ensure(opts Options) (*Bundle, error) {
	if opts.Dir == "" {
		return nil, errors.New("certs: Options.Dir is required")
	}
	if opts.Logger == nil {
		opts.Logger = slog.Default()
	}
	if opts.Now == nil {
		opts.Now = time.Now
	}
	if err := ensurePrivateDir(opts.Dir); err != nil {
		return nil, err
	}
	e := &ensurer{dir: opts.Dir, log: opts.Logger, now: opts.Now()}
	b := &Bundle{Dir: opts.Dir, now: opts.Now}

	var err error
	if b.CA, err = e.pair(CACertFile, CAKeyFile, caTemplate(CACommonName), nil, CAValidity, nil); err != nil {
		return nil, err
	}
	wantDNS := uniqueStrings(append(append([]string{}, DefaultServingDNSNames...), opts.DNSNames...))
	wantIPs := uniqueIPs(append(append([]net.IP{}, DefaultServingIPs...), opts.IPs...))
	coversSANs := func(c *x509.Certificate) string { return missingSANs(c, wantDNS, wantIPs) }
	if b.Serving, err = e.pair(ServingCertFile, ServingKeyFile,
		servingTemplate(ServingCommonName, wantDNS, wantIPs), b.CA, LeafValidity, coversSANs); err != nil {
		return nil, err
	}
	if b.Admin, err = e.pair(AdminCertFile, AdminKeyFile,
		clientTemplate(AdminCommonName, []string{AdminGroup}), b.CA, LeafValidity, nil); err != nil {
		return nil, err
	}
	if b.FrontProxyCA, err = e.pair(FrontProxyCACertFile, FrontProxyCAKeyFile,
		caTemplate(FrontProxyCACommonName), nil, CAValidity, nil); err != nil {
		return nil, err
	}
	if b.FrontProxyClient, err = e.pair(FrontProxyClientCertFile, FrontProxyClientKeyFile,
		clientTemplate(FrontProxyClientCommonName, nil), b.FrontProxyCA, LeafValidity, nil); err != nil {
		return nil, err
	}
	if b.ServiceAccountKey, err = e.serviceAccountKey(); err != nil {
		return nil, err
	}
	return b, nil
}

// ensurePrivateDir creates dir as 0700, and tightens it if it already exists
// with looser permissions: it holds private keys.
func ensurePrivateDir(dir string) error {
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return fmt.Errorf("certs: create %s: %w", dir, err)
	}
	info, err := os.Stat(dir)
	if err != nil {
		return fmt.Errorf("certs: %w", err)
	}
	if info.Mode().Perm()&0o077 != 0 {
		if err := os.Chmod(dir, 0o700); err != nil {
			return fmt.Errorf("certs: restrict %s: %w", dir, err)
		}
	}
	return nil
}

type ensurer struct {
	dir string
	log *slog.Logger
	now time.Time
}

// pair loads certFile/keyFile, checks them against template and issuer, and
// replaces them when anything is wrong. issuer nil means a self-signed CA.
// extraCheck returns a non-empty reason when the cert must be replaced.
func (e *ensurer) pair(certFile, keyFile string, template *x509.Certificate, issuer *Pair,
	validity time.Duration, extraCheck func(*x509.Certificate) string) (*Pair, error) {
	certPath := filepath.Join(e.dir, certFile)
	keyPath := filepath.Join(e.dir, keyFile)

	existing, reason := loadPair(certPath, keyPath)
	if reason == "" {
		reason = e.problem(existing, template, issuer)
	}
	if reason == "" && extraCheck != nil {
		reason = extraCheck(existing.Cert)
	}
	if reason == "" {
		tightenKeyPermissions(keyPath, e.log)
		return existing, nil
	}

	fresh, err := issue(template, issuer, e.now, validity)
	if err != nil {
		return nil, fmt.Errorf("certs: create %s: %w", certFile, err)
	}
	fresh.CertFile, fresh.KeyFile = certPath, keyPath
	// Key first: a crash between the two writes leaves a cert/key mismatch,
	// which the next Ensure detects and repairs.
	if err := writeFileAtomic(keyPath, fresh.KeyPEM, 0o600); err != nil {
		return nil, err
	}
	if err := writeFileAtomic(certPath, fresh.CertPEM, 0o644); err != nil {
		return nil, err
	}
	e.logWrite(certPath, keyPath, reason, fresh.Cert)
	return fresh, nil
}

func (e *ensurer) logWrite(certPath, keyPath, reason string, cert *x509.Certificate) {
	msg := "regenerated certificate"
	if reason == reasonMissing {
		msg = "created certificate"
	}
	e.log.Info(msg,
		"cert", certPath,
		"key", keyPath,
		"reason", reason,
		"subject", cert.Subject.String(),
		"not_after", cert.NotAfter.UTC().Format(time.RFC3339))
}

const reasonMissing = "missing"

// loadPair reads and parses both files. On failure it returns a reason to
// regenerate, naming the file at fault.
func loadPair(certPath, keyPath string) (*Pair, string) {
	certPEM, certErr := os.ReadFile(certPath)
	keyPEM, keyErr := os.ReadFile(keyPath)
	switch {
	case errors.Is(certErr, os.ErrNotExist) && errors.Is(keyErr, os.ErrNotExist):
		return nil, reasonMissing
	case errors.Is(certErr, os.ErrNotExist):
		return nil, filepath.Base(certPath) + " missing"
	case errors.Is(keyErr, os.ErrNotExist):
		return nil, filepath.Base(keyPath) + " missing"
	case certErr != nil:
		return nil, "unreadable: " + certErr.Error()
	case keyErr != nil:
		return nil, "unreadable: " + keyErr.Error()
	}
	cert, err := parseCertPEM(certPEM)
	if err != nil {
		return nil, filepath.Base(certPath) + " unparseable: " + err.Error()
	}
	key, err := parseKeyPEM(keyPEM)
	if err != nil {
		return nil, filepath.Base(keyPath) + " unparseable: " + err.Error()
	}
	return &Pair{Cert: cert, Key: key, CertPEM: certPEM, KeyPEM: keyPEM, CertFile: certPath, KeyFile: keyPath}, ""
}

// problem returns why a loaded pair cannot be kept, or "" if it can.
func (e *ensurer) problem(p *Pair, template *x509.Certificate, issuer *Pair) string {
	if !publicKeysEqual(p.Cert.PublicKey, p.Key.Public()) {
		return "key does not match certificate"
	}
	if e.now.Before(p.Cert.NotBefore) {
		return "not yet valid (clock moved back?)"
	}
	if !e.now.Before(p.Cert.NotAfter) {
		return "expired " + p.Cert.NotAfter.UTC().Format(time.RFC3339)
	}
	if !e.now.Add(RenewBefore).Before(p.Cert.NotAfter) {
		return "expires within 24h (" + p.Cert.NotAfter.UTC().Format(time.RFC3339) + ")"
	}
	if issuer == nil {
		if !p.Cert.IsCA || !p.Cert.BasicConstraintsValid {
			return "not a CA certificate"
		}
		if p.Cert.CheckSignatureFrom(p.Cert) != nil {
			return "not self-signed"
		}
	} else if p.Cert.CheckSignatureFrom(issuer.Cert) != nil {
		return "not signed by current CA"
	}
	if p.Cert.Subject.CommonName != template.Subject.CommonName ||
		!equalStringSets(p.Cert.Subject.Organization, template.Subject.Organization) {
		return "subject changed"
	}
	if !equalUsages(p.Cert.ExtKeyUsage, template.ExtKeyUsage) {
		return "key usage changed"
	}
	return ""
}

// missingSANs reports requested names/IPs the certificate does not cover.
// Extra SANs in the cert are fine: dropping a name never forces a rotation.
func missingSANs(c *x509.Certificate, dnsNames []string, ips []net.IP) string {
	var missing []string
	for _, name := range dnsNames {
		if !containsString(c.DNSNames, name) {
			missing = append(missing, name)
		}
	}
	for _, ip := range ips {
		if !containsIP(c.IPAddresses, ip) {
			missing = append(missing, ip.String())
		}
	}
	if len(missing) == 0 {
		return ""
	}
	return fmt.Sprintf("SANs changed: not covered %v", missing)
}

func caTemplate(commonName string) *x509.Certificate {
	return &x509.Certificate{
		Subject:               pkix.Name{CommonName: commonName},
		IsCA:                  true,
		BasicConstraintsValid: true,
		// Path length 0: these CAs sign leaves only.
		MaxPathLen:     0,
		MaxPathLenZero: true,
		KeyUsage:       x509.KeyUsageCertSign | x509.KeyUsageCRLSign | x509.KeyUsageDigitalSignature,
	}
}

func servingTemplate(commonName string, dnsNames []string, ips []net.IP) *x509.Certificate {
	return &x509.Certificate{
		Subject:     pkix.Name{CommonName: commonName},
		DNSNames:    dnsNames,
		IPAddresses: ips,
		// ECDSA keys sign; KeyEncipherment is for RSA key transport only.
		KeyUsage:              x509.KeyUsageDigitalSignature,
		ExtKeyUsage:           []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth},
		BasicConstraintsValid: true,
	}
}

func clientTemplate(user string, groups []string) *x509.Certificate {
	return &x509.Certificate{
		Subject:               pkix.Name{CommonName: user, Organization: groups},
		KeyUsage:              x509.KeyUsageDigitalSignature,
		ExtKeyUsage:           []x509.ExtKeyUsage{x509.ExtKeyUsageClientAuth},
		BasicConstraintsValid: true,
	}
}
