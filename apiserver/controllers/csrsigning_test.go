package controllers

import (
	"crypto/x509"
	"crypto/x509/pkix"
	"net"
	"net/url"
	"testing"
	"time"

	certificatesv1 "k8s.io/api/certificates/v1"
)

// Each built-in signer's rules, with kube's messages.
func TestSignerAccepts(t *testing.T) {
	node := pkix.Name{CommonName: "system:node:n1", Organization: []string{"system:nodes"}}
	ds, ke, ca, sa := certificatesv1.UsageDigitalSignature, certificatesv1.UsageKeyEncipherment, certificatesv1.UsageClientAuth, certificatesv1.UsageServerAuth
	for _, c := range []struct {
		name, signer string
		req          x509.CertificateRequest
		usages       []certificatesv1.KeyUsage
		want         string // "" accepted
	}{
		{"client", certificatesv1.KubeAPIServerClientSignerName, x509.CertificateRequest{Subject: pkix.Name{CommonName: "jane"}}, []certificatesv1.KeyUsage{ca}, ""},
		{"client with optional usages", certificatesv1.KubeAPIServerClientSignerName, x509.CertificateRequest{}, []certificatesv1.KeyUsage{ds, ke, ca}, ""},
		{"client without client auth", certificatesv1.KubeAPIServerClientSignerName, x509.CertificateRequest{}, []certificatesv1.KeyUsage{ds}, "missing required usage for client certificate: client auth"},
		{"client asking for more", certificatesv1.KubeAPIServerClientSignerName, x509.CertificateRequest{}, []certificatesv1.KeyUsage{ca, certificatesv1.UsageCodeSigning}, "invalid usage for client certificate: code signing"},
		{"kubelet client", certificatesv1.KubeAPIServerClientKubeletSignerName, x509.CertificateRequest{Subject: node}, []certificatesv1.KeyUsage{ds, ca}, ""},
		{"kubelet client, RSA usages", certificatesv1.KubeAPIServerClientKubeletSignerName, x509.CertificateRequest{Subject: node}, []certificatesv1.KeyUsage{ke, ds, ca}, ""},
		{"kubelet client not a node", certificatesv1.KubeAPIServerClientKubeletSignerName, x509.CertificateRequest{Subject: pkix.Name{CommonName: "system:node:n1", Organization: []string{"dev"}}}, []certificatesv1.KeyUsage{ds, ca}, "subject organization is not system:nodes"},
		{"kubelet client named otherwise", certificatesv1.KubeAPIServerClientKubeletSignerName, x509.CertificateRequest{Subject: pkix.Name{CommonName: "n1", Organization: []string{"system:nodes"}}}, []certificatesv1.KeyUsage{ds, ca}, "subject common name does not begin with system:node:"},
		{"kubelet client with a name", certificatesv1.KubeAPIServerClientKubeletSignerName, x509.CertificateRequest{Subject: node, DNSNames: []string{"n1"}}, []certificatesv1.KeyUsage{ds, ca}, "DNS subjectAltNames are not allowed"},
		{"kubelet client with an IP", certificatesv1.KubeAPIServerClientKubeletSignerName, x509.CertificateRequest{Subject: node, IPAddresses: []net.IP{net.IPv4(10, 0, 0, 1)}}, []certificatesv1.KeyUsage{ds, ca}, "IP subjectAltNames are not allowed"},
		{"kubelet client, client auth only", certificatesv1.KubeAPIServerClientKubeletSignerName, x509.CertificateRequest{Subject: node}, []certificatesv1.KeyUsage{ca}, "usages did not match [client auth digital signature key encipherment]"},
		{"serving", certificatesv1.KubeletServingSignerName, x509.CertificateRequest{Subject: node, IPAddresses: []net.IP{net.IPv4(10, 0, 0, 1)}}, []certificatesv1.KeyUsage{ds, sa}, ""},
		{"serving with a URI", certificatesv1.KubeletServingSignerName, x509.CertificateRequest{Subject: node, DNSNames: []string{"n1"}, URIs: []*url.URL{{Scheme: "spiffe", Host: "x"}}}, []certificatesv1.KeyUsage{ds, sa}, "URI subjectAltNames are not allowed"},
		{"serving for clients", certificatesv1.KubeletServingSignerName, x509.CertificateRequest{Subject: node, DNSNames: []string{"n1"}}, []certificatesv1.KeyUsage{ds, ca}, "usages did not match [digital signature key encipherment server auth]"},
	} {
		err := signerAccepts(c.signer, &c.req, c.usages)
		if got := errString(err); got != c.want {
			t.Errorf("%s: %q, want %q", c.name, got, c.want)
		}
	}
}

func errString(err error) string {
	if err == nil {
		return ""
	}
	return err.Error()
}

// A request's expirationSeconds within kube's bounds; usages onto x509's.
func TestCSRDurationAndUsages(t *testing.T) {
	for in, want := range map[int32]time.Duration{60: 10 * time.Minute, 3600: time.Hour, 1 << 30: maxCSRDuration} {
		if got := csrDuration(&in); got != want {
			t.Errorf("expirationSeconds %d: %v, want %v", in, got, want)
		}
	}
	if got := csrDuration(nil); got != maxCSRDuration {
		t.Errorf("no expirationSeconds: %v", got)
	}
	ku, ext, err := x509Usages([]certificatesv1.KeyUsage{certificatesv1.UsageSigning, certificatesv1.UsageKeyEncipherment,
		certificatesv1.UsageEmailProtection, certificatesv1.UsageSMIME, certificatesv1.UsageClientAuth})
	if err != nil || ku != x509.KeyUsageDigitalSignature|x509.KeyUsageKeyEncipherment ||
		len(ext) != 2 || ext[0] != x509.ExtKeyUsageEmailProtection || ext[1] != x509.ExtKeyUsageClientAuth {
		t.Errorf("usages: %v %v %v", ku, ext, err)
	}
	if _, _, err := x509Usages([]certificatesv1.KeyUsage{"flying"}); err == nil {
		t.Error("an unknown usage was mapped")
	}
}
