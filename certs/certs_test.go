package certs

import (
	"bytes"
	"crypto/ecdsa"
	"crypto/tls"
	"crypto/x509"
	"encoding/pem"
	"log/slog"
	"net"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"
)

var allFiles = []string{
	CACertFile, CAKeyFile,
	ServingCertFile, ServingKeyFile,
	AdminCertFile, AdminKeyFile,
	FrontProxyCACertFile, FrontProxyCAKeyFile,
	FrontProxyClientCertFile, FrontProxyClientKeyFile,
	ServiceAccountKeyFile, ServiceAccountPubFile,
}

// ensure runs Ensure and returns the bundle and everything it logged.
func ensure(t *testing.T, opts Options) (*Bundle, string) {
	t.Helper()
	var logs bytes.Buffer
	opts.Logger = slog.New(slog.NewTextHandler(&logs, nil))
	b, err := Ensure(opts)
	if err != nil {
		t.Fatalf("Ensure: %v", err)
	}
	return b, logs.String()
}

// snapshot reads every PKI file so tests can tell which ones were rewritten.
func snapshot(t *testing.T, dir string) map[string][]byte {
	t.Helper()
	files := map[string][]byte{}
	for _, name := range allFiles {
		data, err := os.ReadFile(filepath.Join(dir, name))
		if err != nil {
			t.Fatalf("read %s: %v", name, err)
		}
		files[name] = data
	}
	return files
}

// changedFiles lists files whose bytes differ between two snapshots.
func changedFiles(before, after map[string][]byte) []string {
	var changed []string
	for _, name := range allFiles {
		if !bytes.Equal(before[name], after[name]) {
			changed = append(changed, name)
		}
	}
	return changed
}

func verifyFor(cert *x509.Certificate, roots *x509.CertPool, usage x509.ExtKeyUsage, host string) error {
	_, err := cert.Verify(x509.VerifyOptions{
		Roots:     roots,
		DNSName:   host,
		KeyUsages: []x509.ExtKeyUsage{usage},
	})
	return err
}

func mustParseCert(t *testing.T, certPEM []byte) *x509.Certificate {
	t.Helper()
	cert, err := parseCertPEM(certPEM)
	if err != nil {
		t.Fatalf("parse cert: %v", err)
	}
	return cert
}

func TestServingCertVerifiesForEverySAN(t *testing.T) {
	extraIPs := []net.IP{DefaultServiceIP, net.ParseIP("192.168.7.20")}
	b, _ := ensure(t, Options{Dir: t.TempDir(), DNSNames: []string{"devbox.lan"}, IPs: extraIPs})

	hosts := append(slices.Clone(DefaultServingDNSNames), "devbox.lan", "127.0.0.1", "::1", "10.0.0.1", "192.168.7.20")
	for _, host := range hosts {
		if err := verifyFor(b.Serving.Cert, b.CAPool(), x509.ExtKeyUsageServerAuth, host); err != nil {
			t.Errorf("serving cert does not verify for %q: %v", host, err)
		}
	}
	if err := verifyFor(b.Serving.Cert, b.CAPool(), x509.ExtKeyUsageServerAuth, "not-requested.example"); err == nil {
		t.Error("serving cert verified for a host that was never requested")
	}
	if !slices.Equal(b.Serving.Cert.ExtKeyUsage, []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth}) {
		t.Errorf("serving ExtKeyUsage = %v, want [ServerAuth]", b.Serving.Cert.ExtKeyUsage)
	}
	if b.Serving.Cert.IsCA {
		t.Error("serving cert must not be a CA")
	}
}

func TestCASubjectsAndLifetimes(t *testing.T) {
	now := time.Date(2030, 5, 1, 12, 0, 0, 0, time.UTC)
	b, _ := ensure(t, Options{Dir: t.TempDir(), Now: func() time.Time { return now }})

	for _, tc := range []struct {
		pair     *Pair
		cn       string
		isCA     bool
		lifetime time.Duration
	}{
		{b.CA, "devplane-ca", true, CAValidity},
		{b.FrontProxyCA, "devplane-front-proxy-ca", true, CAValidity},
		{b.Serving, ServingCommonName, false, LeafValidity},
		{b.Admin, "devplane-admin", false, LeafValidity},
		{b.FrontProxyClient, "front-proxy-client", false, LeafValidity},
	} {
		c := tc.pair.Cert
		if c.Subject.CommonName != tc.cn || c.IsCA != tc.isCA {
			t.Errorf("%s: CN=%q IsCA=%v, want CN=%q IsCA=%v", tc.cn, c.Subject.CommonName, c.IsCA, tc.cn, tc.isCA)
		}
		if !c.NotBefore.Equal(now.Add(-time.Hour)) {
			t.Errorf("%s: NotBefore = %v, want now-1h", tc.cn, c.NotBefore)
		}
		if !c.NotAfter.Equal(now.Add(tc.lifetime)) {
			t.Errorf("%s: NotAfter = %v, want %v", tc.cn, c.NotAfter, now.Add(tc.lifetime))
		}
		if len(c.SubjectKeyId) == 0 {
			t.Errorf("%s: no subject key id", tc.cn)
		}
		if c.SerialNumber.BitLen() < 64 {
			t.Errorf("%s: serial %v is suspiciously short for a random 128-bit number", tc.cn, c.SerialNumber)
		}
	}
	if !bytes.Equal(b.Serving.Cert.AuthorityKeyId, b.CA.Cert.SubjectKeyId) {
		t.Error("serving cert authority key id does not name the CA")
	}
	if !bytes.Equal(b.FrontProxyClient.Cert.AuthorityKeyId, b.FrontProxyCA.Cert.SubjectKeyId) {
		t.Error("front-proxy client authority key id does not name the front-proxy CA")
	}
	if b.CA.Cert.SerialNumber.Cmp(b.FrontProxyCA.Cert.SerialNumber) == 0 {
		t.Error("two CAs share a serial number")
	}
}

func TestAdminCertIsSystemMastersClient(t *testing.T) {
	b, _ := ensure(t, Options{Dir: t.TempDir()})
	c := b.Admin.Cert
	if c.Subject.CommonName != "devplane-admin" || !slices.Equal(c.Subject.Organization, []string{"system:masters"}) {
		t.Errorf("admin subject = CN %q O %v", c.Subject.CommonName, c.Subject.Organization)
	}
	if !slices.Equal(c.ExtKeyUsage, []x509.ExtKeyUsage{x509.ExtKeyUsageClientAuth}) {
		t.Errorf("admin ExtKeyUsage = %v, want [ClientAuth]", c.ExtKeyUsage)
	}
	if err := verifyFor(c, b.CAPool(), x509.ExtKeyUsageClientAuth, ""); err != nil {
		t.Errorf("admin cert does not verify against CA: %v", err)
	}
	if err := verifyFor(c, b.CAPool(), x509.ExtKeyUsageServerAuth, ""); err == nil {
		t.Error("admin cert verified for server auth")
	}
}

func TestFrontProxyClientTrustedOnlyByFrontProxyCA(t *testing.T) {
	b, _ := ensure(t, Options{Dir: t.TempDir()})
	c := b.FrontProxyClient.Cert
	if c.Subject.CommonName != "front-proxy-client" {
		t.Errorf("front-proxy client CN = %q", c.Subject.CommonName)
	}
	if err := verifyFor(c, b.FrontProxyCAPool(), x509.ExtKeyUsageClientAuth, ""); err != nil {
		t.Errorf("front-proxy client does not verify against front-proxy CA: %v", err)
	}
	if err := verifyFor(c, b.CAPool(), x509.ExtKeyUsageClientAuth, ""); err == nil {
		t.Error("front-proxy client verified against the main CA")
	}
	if bytes.Equal(b.CA.CertPEM, b.FrontProxyCA.CertPEM) {
		t.Error("front-proxy CA is the main CA")
	}
}

// A real mutual-TLS handshake, the way kubectl talks to the apiserver.
func TestMutualTLSHandshake(t *testing.T) {
	b, _ := ensure(t, Options{Dir: t.TempDir()})
	serverCert, err := b.Serving.TLSCertificate()
	if err != nil {
		t.Fatal(err)
	}
	clientCert, err := b.Admin.TLSCertificate()
	if err != nil {
		t.Fatal(err)
	}
	serverConn, clientConn := net.Pipe()
	defer serverConn.Close()
	defer clientConn.Close()

	server := tls.Server(serverConn, &tls.Config{
		Certificates: []tls.Certificate{serverCert},
		ClientCAs:    b.CAPool(),
		ClientAuth:   tls.RequireAndVerifyClientCert,
	})
	client := tls.Client(clientConn, &tls.Config{
		Certificates: []tls.Certificate{clientCert},
		RootCAs:      b.CAPool(),
		ServerName:   "kubernetes.default.svc",
	})
	serverErr := make(chan error, 1)
	go func() { serverErr <- server.Handshake() }()
	if err := client.Handshake(); err != nil {
		t.Fatalf("client handshake: %v", err)
	}
	if err := <-serverErr; err != nil {
		t.Fatalf("server handshake: %v", err)
	}
	peers := server.ConnectionState().PeerCertificates
	if len(peers) == 0 || peers[0].Subject.CommonName != "devplane-admin" {
		t.Fatalf("server saw client %v, want devplane-admin", peers)
	}
}

func TestSecondEnsureReusesEverything(t *testing.T) {
	dir := t.TempDir()
	first, firstLogs := ensure(t, Options{Dir: dir})
	if got := strings.Count(firstLogs, "created certificate"); got != 5 {
		t.Errorf("first Ensure logged %d created certificates, want 5:\n%s", got, firstLogs)
	}
	before := snapshot(t, dir)

	second, logs := ensure(t, Options{Dir: dir})
	if changed := changedFiles(before, snapshot(t, dir)); len(changed) != 0 {
		t.Errorf("second Ensure rewrote %v", changed)
	}
	if logs != "" {
		t.Errorf("second Ensure logged:\n%s", logs)
	}
	if !bytes.Equal(first.CA.CertPEM, second.CA.CertPEM) || !bytes.Equal(first.CA.KeyPEM, second.CA.KeyPEM) {
		t.Error("second Ensure returned a different CA")
	}
	if !first.ServiceAccountKey.Equal(second.ServiceAccountKey) {
		t.Error("second Ensure returned a different service account key")
	}
}

func TestDeletedAdminKeyRegeneratesAdminOnly(t *testing.T) {
	dir := t.TempDir()
	ensure(t, Options{Dir: dir})
	before := snapshot(t, dir)
	if err := os.Remove(filepath.Join(dir, AdminKeyFile)); err != nil {
		t.Fatal(err)
	}

	b, logs := ensure(t, Options{Dir: dir})
	changed := changedFiles(before, snapshot(t, dir))
	if !slices.Equal(changed, []string{AdminCertFile, AdminKeyFile}) {
		t.Errorf("changed files = %v, want only admin.crt and admin.key", changed)
	}
	if !strings.Contains(logs, "admin.key missing") {
		t.Errorf("log does not say admin.key was missing:\n%s", logs)
	}
	if err := verifyFor(b.Admin.Cert, b.CAPool(), x509.ExtKeyUsageClientAuth, ""); err != nil {
		t.Errorf("regenerated admin cert does not verify: %v", err)
	}
}

func TestMismatchedKeyRegeneratesPair(t *testing.T) {
	dir := t.TempDir()
	ensure(t, Options{Dir: dir})
	otherKey, err := os.ReadFile(filepath.Join(dir, FrontProxyClientKeyFile))
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, AdminKeyFile), otherKey, 0o600); err != nil {
		t.Fatal(err)
	}

	b, logs := ensure(t, Options{Dir: dir})
	if !strings.Contains(logs, "key does not match certificate") {
		t.Errorf("log does not report the mismatch:\n%s", logs)
	}
	if _, err := tls.X509KeyPair(b.Admin.CertPEM, b.Admin.KeyPEM); err != nil {
		t.Errorf("admin pair still mismatched: %v", err)
	}
}

func TestNewIPRegeneratesServingOnly(t *testing.T) {
	dir := t.TempDir()
	ensure(t, Options{Dir: dir, IPs: []net.IP{DefaultServiceIP}})
	before := snapshot(t, dir)

	newIP := net.ParseIP("172.20.0.9")
	b, logs := ensure(t, Options{Dir: dir, IPs: []net.IP{DefaultServiceIP, newIP}})
	changed := changedFiles(before, snapshot(t, dir))
	if !slices.Equal(changed, []string{ServingCertFile, ServingKeyFile}) {
		t.Errorf("changed files = %v, want only apiserver.crt and apiserver.key", changed)
	}
	if !strings.Contains(logs, "SANs changed") || !strings.Contains(logs, "172.20.0.9") {
		t.Errorf("log does not explain the SAN change:\n%s", logs)
	}
	if err := verifyFor(b.Serving.Cert, b.CAPool(), x509.ExtKeyUsageServerAuth, "172.20.0.9"); err != nil {
		t.Errorf("new serving cert does not cover the new IP: %v", err)
	}

	// Asking for fewer SANs than the cert has is still covered: no churn.
	afterAdd := snapshot(t, dir)
	ensure(t, Options{Dir: dir})
	if changed := changedFiles(afterAdd, snapshot(t, dir)); len(changed) != 0 {
		t.Errorf("dropping an IP rewrote %v", changed)
	}
}

func TestNewDNSNameRegeneratesServing(t *testing.T) {
	dir := t.TempDir()
	ensure(t, Options{Dir: dir})
	b, logs := ensure(t, Options{Dir: dir, DNSNames: []string{"laptop.example"}})
	if !strings.Contains(logs, "laptop.example") {
		t.Errorf("log does not name the new DNS SAN:\n%s", logs)
	}
	if err := verifyFor(b.Serving.Cert, b.CAPool(), x509.ExtKeyUsageServerAuth, "laptop.example"); err != nil {
		t.Errorf("serving cert does not cover the new name: %v", err)
	}
}

func TestExpiringServingCertIsRegenerated(t *testing.T) {
	for _, tc := range []struct {
		name      string
		createdAt time.Time
		wantLog   string
	}{
		{"expired", time.Now().Add(-2 * LeafValidity), "expired"},
		{"expires within 24h", time.Now().Add(-LeafValidity + 12*time.Hour), "expires within 24h"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			dir := t.TempDir()
			old, _ := ensure(t, Options{Dir: dir, Now: func() time.Time { return tc.createdAt }})

			b, logs := ensure(t, Options{Dir: dir})
			if !strings.Contains(logs, ServingCertFile) || !strings.Contains(logs, tc.wantLog) {
				t.Errorf("log does not report %q for the serving cert:\n%s", tc.wantLog, logs)
			}
			if !b.Serving.Cert.NotAfter.After(time.Now().Add(300 * 24 * time.Hour)) {
				t.Errorf("serving cert still expires at %v", b.Serving.Cert.NotAfter)
			}
			if !bytes.Equal(old.CA.CertPEM, b.CA.CertPEM) {
				t.Error("CA was regenerated although it is still valid for years")
			}
			if err := verifyFor(b.Serving.Cert, b.CAPool(), x509.ExtKeyUsageServerAuth, "localhost"); err != nil {
				t.Errorf("regenerated serving cert does not verify now: %v", err)
			}
		})
	}
}

func TestCorruptCARegeneratesEverythingItSigned(t *testing.T) {
	dir := t.TempDir()
	ensure(t, Options{Dir: dir})
	before := snapshot(t, dir)
	if err := os.WriteFile(filepath.Join(dir, CACertFile), []byte("-----BEGIN CERTIFICATE-----\ngarbage\n"), 0o644); err != nil {
		t.Fatal(err)
	}

	b, logs := ensure(t, Options{Dir: dir})
	changed := changedFiles(before, snapshot(t, dir))
	want := []string{CACertFile, CAKeyFile, ServingCertFile, ServingKeyFile, AdminCertFile, AdminKeyFile}
	if !slices.Equal(changed, want) {
		t.Errorf("changed files = %v, want %v", changed, want)
	}
	if !strings.Contains(logs, "ca.crt unparseable") || !strings.Contains(logs, "not signed by current CA") {
		t.Errorf("log does not explain the CA regeneration:\n%s", logs)
	}
	if err := verifyFor(b.Serving.Cert, b.CAPool(), x509.ExtKeyUsageServerAuth, "kubernetes"); err != nil {
		t.Errorf("serving cert does not verify against the new CA: %v", err)
	}
	if err := verifyFor(b.Admin.Cert, b.CAPool(), x509.ExtKeyUsageClientAuth, ""); err != nil {
		t.Errorf("admin cert does not verify against the new CA: %v", err)
	}
}

func TestFilePermissions(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "pki")
	ensure(t, Options{Dir: dir})
	info, err := os.Stat(dir)
	if err != nil {
		t.Fatal(err)
	}
	if perm := info.Mode().Perm(); perm != 0o700 {
		t.Errorf("pki dir mode = %o, want 700", perm)
	}
	for _, name := range allFiles {
		info, err := os.Stat(filepath.Join(dir, name))
		if err != nil {
			t.Fatal(err)
		}
		want := os.FileMode(0o644)
		if strings.HasSuffix(name, ".key") {
			want = 0o600
		}
		if perm := info.Mode().Perm(); perm != want {
			t.Errorf("%s mode = %o, want %o", name, perm, want)
		}
	}
	entries, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	if len(entries) != len(allFiles) {
		t.Errorf("pki dir holds %d entries, want %d (temp files left behind?)", len(entries), len(allFiles))
	}
}

func TestLooseKeyPermissionsAreTightened(t *testing.T) {
	dir := t.TempDir()
	ensure(t, Options{Dir: dir})
	keyPath := filepath.Join(dir, CAKeyFile)
	if err := os.Chmod(keyPath, 0o644); err != nil {
		t.Fatal(err)
	}
	ensure(t, Options{Dir: dir})
	info, err := os.Stat(keyPath)
	if err != nil {
		t.Fatal(err)
	}
	if perm := info.Mode().Perm(); perm != 0o600 {
		t.Errorf("ca.key mode = %o after Ensure, want 600", perm)
	}
}

func TestServiceAccountKeyFiles(t *testing.T) {
	dir := t.TempDir()
	b, _ := ensure(t, Options{Dir: dir})

	keyBlock := readPEM(t, filepath.Join(dir, ServiceAccountKeyFile))
	if keyBlock.Type != "PRIVATE KEY" {
		t.Fatalf("sa.key PEM type = %q, want PRIVATE KEY", keyBlock.Type)
	}
	parsedKey, err := x509.ParsePKCS8PrivateKey(keyBlock.Bytes)
	if err != nil {
		t.Fatalf("sa.key is not PKCS8: %v", err)
	}
	if !b.ServiceAccountKey.Equal(parsedKey) {
		t.Error("sa.key does not hold Bundle.ServiceAccountKey")
	}
	pubBlock := readPEM(t, filepath.Join(dir, ServiceAccountPubFile))
	if pubBlock.Type != "PUBLIC KEY" {
		t.Fatalf("sa.pub PEM type = %q, want PUBLIC KEY", pubBlock.Type)
	}
	parsedPub, err := x509.ParsePKIXPublicKey(pubBlock.Bytes)
	if err != nil {
		t.Fatalf("sa.pub is not PKIX: %v", err)
	}
	if !b.ServiceAccountKey.PublicKey.Equal(parsedPub) {
		t.Error("sa.pub does not match sa.key")
	}

	// Losing sa.pub must not rotate the signing key: issued tokens would die.
	if err := os.Remove(filepath.Join(dir, ServiceAccountPubFile)); err != nil {
		t.Fatal(err)
	}
	again, logs := ensure(t, Options{Dir: dir})
	if !again.ServiceAccountKey.Equal(b.ServiceAccountKey) {
		t.Error("deleting sa.pub rotated the service account key")
	}
	if !strings.Contains(logs, "sa.pub") {
		t.Errorf("log does not mention rewriting sa.pub:\n%s", logs)
	}
	if _, err := os.Stat(filepath.Join(dir, ServiceAccountPubFile)); err != nil {
		t.Errorf("sa.pub not rewritten: %v", err)
	}
}

func readPEM(t *testing.T, path string) *pem.Block {
	t.Helper()
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	block, _ := pem.Decode(data)
	if block == nil {
		t.Fatalf("%s holds no PEM", path)
	}
	return block
}

func TestIssueClient(t *testing.T) {
	b, _ := ensure(t, Options{Dir: t.TempDir()})
	certPEM, keyPEM, err := b.IssueClient("alice", []string{"devs", "qa"}, time.Hour)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := tls.X509KeyPair(certPEM, keyPEM); err != nil {
		t.Fatalf("issued client cert and key do not pair: %v", err)
	}
	c := mustParseCert(t, certPEM)
	if c.Subject.CommonName != "alice" || !equalStringSets(c.Subject.Organization, []string{"devs", "qa"}) {
		t.Errorf("subject = CN %q O %v", c.Subject.CommonName, c.Subject.Organization)
	}
	if err := verifyFor(c, b.CAPool(), x509.ExtKeyUsageClientAuth, ""); err != nil {
		t.Errorf("issued client cert does not verify: %v", err)
	}
	if life := time.Until(c.NotAfter); life > time.Hour || life < 58*time.Minute {
		t.Errorf("issued client cert lives %v, want about 1h", life)
	}
	if _, _, err := b.IssueClient("", nil, time.Hour); err == nil {
		t.Error("IssueClient accepted an empty user")
	}
}

func TestIssueServing(t *testing.T) {
	b, _ := ensure(t, Options{Dir: t.TempDir()})
	hosts := []string{"webhook.default.svc", "127.0.0.1", "::1"}
	certPEM, keyPEM, err := b.IssueServing(hosts, 0)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := tls.X509KeyPair(certPEM, keyPEM); err != nil {
		t.Fatalf("issued serving cert and key do not pair: %v", err)
	}
	c := mustParseCert(t, certPEM)
	for _, host := range hosts {
		if err := verifyFor(c, b.CAPool(), x509.ExtKeyUsageServerAuth, host); err != nil {
			t.Errorf("issued serving cert does not verify for %q: %v", host, err)
		}
	}
	if err := verifyFor(c, b.CAPool(), x509.ExtKeyUsageServerAuth, "kubernetes"); err == nil {
		t.Error("issued serving cert verified for a host it was not issued for")
	}
	if _, _, err := b.IssueServing(nil, time.Hour); err == nil {
		t.Error("IssueServing accepted no hosts")
	}
	// Nothing issued on demand may land in the PKI dir.
	entries, _ := os.ReadDir(b.Dir)
	if len(entries) != len(allFiles) {
		t.Errorf("pki dir holds %d entries after issuing, want %d", len(entries), len(allFiles))
	}
}

func TestLoadsSEC1Keys(t *testing.T) {
	dir := t.TempDir()
	b, _ := ensure(t, Options{Dir: dir})
	der, err := x509.MarshalECPrivateKey(b.Admin.Key.(*ecdsa.PrivateKey))
	if err != nil {
		t.Fatal(err)
	}
	sec1 := pem.EncodeToMemory(&pem.Block{Type: "EC PRIVATE KEY", Bytes: der})
	if err := os.WriteFile(filepath.Join(dir, AdminKeyFile), sec1, 0o600); err != nil {
		t.Fatal(err)
	}
	again, logs := ensure(t, Options{Dir: dir})
	if logs != "" {
		t.Errorf("a SEC1-encoded admin key caused regeneration:\n%s", logs)
	}
	if !bytes.Equal(again.Admin.CertPEM, b.Admin.CertPEM) {
		t.Error("admin cert changed")
	}
}

func TestEnsureRequiresDir(t *testing.T) {
	if _, err := Ensure(Options{}); err == nil {
		t.Error("Ensure accepted an empty Dir")
	}
}

// BenchmarkEnsureFresh measures first-start cost: every key and cert created
// and written to an empty directory.
func BenchmarkEnsureFresh(b *testing.B) {
	root := b.TempDir()
	quiet := slog.New(slog.DiscardHandler)
	opts := Options{Logger: quiet, IPs: []net.IP{DefaultServiceIP}}
	for i := 0; b.Loop(); i++ {
		opts.Dir = filepath.Join(root, "pki-"+strconv.Itoa(i))
		if _, err := Ensure(opts); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkEnsureExisting measures every later start: load and check only.
func BenchmarkEnsureExisting(b *testing.B) {
	opts := Options{Dir: b.TempDir(), Logger: slog.New(slog.DiscardHandler), IPs: []net.IP{DefaultServiceIP}}
	if _, err := Ensure(opts); err != nil {
		b.Fatal(err)
	}
	for b.Loop() {
		if _, err := Ensure(opts); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkIssueClient isolates the crypto cost (key + signature) from the
// filesystem cost that dominates BenchmarkEnsureFresh on slow disks.
func BenchmarkIssueClient(b *testing.B) {
	bundle, err := Ensure(Options{Dir: b.TempDir(), Logger: slog.New(slog.DiscardHandler)})
	if err != nil {
		b.Fatal(err)
	}
	for b.Loop() {
		if _, _, err := bundle.IssueClient("bench", []string{"g"}, time.Hour); err != nil {
			b.Fatal(err)
		}
	}
}
