package controlplane_test

import (
	"context"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"slices"
	"strings"
	"testing"
	"time"

	authenticationv1 "k8s.io/api/authentication/v1"
	certificatesv1 "k8s.io/api/certificates/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"

	"github.com/devplane/devplane/apiserver/controlplane/controlplanetest"
)

// newCSR is a PEM certificate request for subject (and names), with its
// key in PEM.
func newCSR(t *testing.T, subject pkix.Name, dnsNames ...string) (csrPEM, keyPEM []byte) {
	t.Helper()
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	der, err := x509.CreateCertificateRequest(rand.Reader, &x509.CertificateRequest{Subject: subject, DNSNames: dnsNames}, key)
	if err != nil {
		t.Fatal(err)
	}
	keyDER, err := x509.MarshalECPrivateKey(key)
	if err != nil {
		t.Fatal(err)
	}
	return pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE REQUEST", Bytes: der}),
		pem.EncodeToMemory(&pem.Block{Type: "EC PRIVATE KEY", Bytes: keyDER})
}

func csrFor(name string, request []byte, signer string, usages ...certificatesv1.KeyUsage) *certificatesv1.CertificateSigningRequest {
	return &certificatesv1.CertificateSigningRequest{
		ObjectMeta: metav1.ObjectMeta{Name: name},
		Spec:       certificatesv1.CertificateSigningRequestSpec{Request: request, SignerName: signer, Usages: usages},
	}
}

// A request records who made it, whatever its body says, and cannot be
// created approved or with a certificate; its spec does not change
// afterwards. (kubectl shows the requester as REQUESTOR.)
func TestCSRRecordsItsRequester(t *testing.T) {
	s := startControlPlane(t, "")
	cs := s.clientset(t, false)
	ctx := context.Background()
	request, _ := newCSR(t, pkix.Name{CommonName: "jane"})
	forged := csrFor("forged", request, certificatesv1.KubeAPIServerClientSignerName, certificatesv1.UsageClientAuth)
	forged.Spec.Username, forged.Spec.UID, forged.Spec.Groups = "mallory", "123", []string{"system:masters", "evil"}
	forged.Spec.Extra = map[string]certificatesv1.ExtraValue{"scopes": {"all"}}
	forged.Status = certificatesv1.CertificateSigningRequestStatus{
		Conditions:  []certificatesv1.CertificateSigningRequestCondition{{Type: certificatesv1.CertificateApproved, Status: corev1.ConditionTrue, Reason: "Forged"}},
		Certificate: s.cp.Certs.Admin.CertPEM,
	}
	created, err := cs.CertificatesV1().CertificateSigningRequests().Create(ctx, forged, metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	admin := s.cp.Certs.Admin.Cert.Subject
	if created.Spec.Username != admin.CommonName || created.Spec.UID != "" || created.Spec.Extra != nil ||
		!slices.Contains(created.Spec.Groups, "system:masters") || !slices.Contains(created.Spec.Groups, "system:authenticated") ||
		slices.Contains(created.Spec.Groups, "evil") {
		t.Errorf("requester: %q %q %v %v, want the admin %q with its groups", created.Spec.Username, created.Spec.UID, created.Spec.Groups, created.Spec.Extra, admin.CommonName)
	}
	if len(created.Status.Conditions) != 0 || len(created.Status.Certificate) != 0 {
		t.Errorf("created with status %+v", created.Status)
	}

	// Impersonated: the requester is the user impersonated, with its groups.
	cfg := s.restConfig(false)
	cfg.Impersonate = rest.ImpersonationConfig{UserName: "jane", Groups: []string{"dev"}, Extra: map[string][]string{"team": {"a"}}}
	jane, err := kubernetes.NewForConfig(cfg)
	if err != nil {
		t.Fatal(err)
	}
	s.mustKubectl(t, "create", "clusterrole", "csr-creator", "--verb=create,get", "--resource=certificatesigningrequests")
	s.mustKubectl(t, "create", "clusterrolebinding", "jane-csr", "--clusterrole=csr-creator", "--user=jane")
	mine, err := jane.CertificatesV1().CertificateSigningRequests().Create(ctx, csrFor("janes", request, "example.com/signer", certificatesv1.UsageClientAuth), metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if mine.Spec.Username != "jane" || !slices.Equal(mine.Spec.Groups, []string{"dev", "system:authenticated"}) || !slices.Equal(mine.Spec.Extra["team"], certificatesv1.ExtraValue{"a"}) {
		t.Errorf("impersonated requester: %q %v %v", mine.Spec.Username, mine.Spec.Groups, mine.Spec.Extra)
	}
	if out := s.mustKubectl(t, "get", "csr", "janes", "--no-headers"); !strings.Contains(out, " jane ") {
		t.Errorf("kubectl get csr does not show the requester: %q", out)
	}

	// An update of the request itself changes metadata only.
	mine.Spec.SignerName = "example.com/other"
	mine.Spec.Usages = []certificatesv1.KeyUsage{certificatesv1.UsageServerAuth}
	mine.Spec.Username = "mallory"
	mine.Labels = map[string]string{"edited": "yes"}
	updated, err := cs.CertificatesV1().CertificateSigningRequests().Update(ctx, mine, metav1.UpdateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if updated.Spec.SignerName != "example.com/signer" || updated.Spec.Username != "jane" ||
		!slices.Equal(updated.Spec.Usages, []certificatesv1.KeyUsage{certificatesv1.UsageClientAuth}) || updated.Labels["edited"] != "yes" {
		t.Errorf("update changed the spec or dropped the label: %+v %v", updated.Spec, updated.Labels)
	}
}

// Requests that kube would refuse are refused with its messages, each a
// cause of one 422.
func TestCSRValidation(t *testing.T) {
	s := startControlPlane(t, "")
	cs := s.clientset(t, false)
	ctx := context.Background()
	request, _ := newCSR(t, pkix.Name{CommonName: "jane"})
	// The same request with its signature's last byte changed.
	block, _ := pem.Decode(request)
	der := slices.Clone(block.Bytes)
	der[len(der)-1] ^= 0xff
	tampered := pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE REQUEST", Bytes: der})
	for _, c := range []struct {
		name      string
		csr       *certificatesv1.CertificateSigningRequest
		field     string
		substring string
	}{
		{"not-pem", csrFor("x", []byte("hello"), "example.com/s", certificatesv1.UsageClientAuth), "spec.request", "PEM block type must be CERTIFICATE REQUEST"},
		{"tampered", csrFor("x", tampered, "example.com/s", certificatesv1.UsageClientAuth), "spec.request", "verification failure"},
		{"no-usages", csrFor("x", request, "example.com/s"), "spec.usages", "Required value"},
		{"unknown-usage", csrFor("x", request, "example.com/s", "flying"), "spec.usages[0]", `Unsupported value: "flying"`},
		{"duplicate-usage", csrFor("x", request, "example.com/s", certificatesv1.UsageClientAuth, certificatesv1.UsageClientAuth), "spec.usages[1]", "Duplicate value"},
		{"no-signer", csrFor("x", request, "", certificatesv1.UsageClientAuth), "spec.signerName", "Required value"},
		{"legacy-signer", csrFor("x", request, "kubernetes.io/legacy-unknown", certificatesv1.UsageClientAuth), "spec.signerName", "the legacy signerName is not allowed via this API version"},
		{"bad-signer", csrFor("x", request, "nodomain", certificatesv1.UsageClientAuth), "spec.signerName", "must be a fully qualified domain and path of the form 'example.com/signer-name'"},
		{"short", func() *certificatesv1.CertificateSigningRequest {
			c := csrFor("x", request, "example.com/s", certificatesv1.UsageClientAuth)
			c.Spec.ExpirationSeconds = ptr(int32(60))
			return c
		}(), "spec.expirationSeconds", "may not specify a duration less than 600 seconds (10 minutes)"},
	} {
		t.Run(c.name, func(t *testing.T) {
			_, err := cs.CertificatesV1().CertificateSigningRequests().Create(ctx, c.csr, metav1.CreateOptions{})
			if !apierrors.IsInvalid(err) {
				t.Fatalf("want 422 Invalid, got %v", err)
			}
			status := err.(apierrors.APIStatus).Status()
			found := false
			for _, cause := range status.Details.Causes {
				found = found || cause.Field == c.field && strings.Contains(cause.Message, c.substring)
			}
			if !found {
				t.Errorf("no cause for %s containing %q in %+v", c.field, c.substring, status.Details.Causes)
			}
			if _, err := cs.CertificatesV1().CertificateSigningRequests().Get(ctx, "x", metav1.GetOptions{}); !apierrors.IsNotFound(err) {
				t.Errorf("the refused request was stored: %v", err)
			}
		})
	}
}

// Approved requests to kube's signers get a certificate from the cluster
// CA that authenticates as the request's subject; requests the signer
// refuses fail with a reason; denied ones and other signers' stay
// unsigned; and a certificate, once issued, stays.
func TestCSRSigning(t *testing.T) {
	s := startControlPlane(t, "")
	cs := s.clientset(t, false)
	csrs := cs.CertificatesV1().CertificateSigningRequests()
	ctx := context.Background()

	userRequest, userKey := newCSR(t, pkix.Name{CommonName: "jane", Organization: []string{"dev"}})
	user := csrFor("jane", userRequest, certificatesv1.KubeAPIServerClientSignerName, certificatesv1.UsageDigitalSignature, certificatesv1.UsageClientAuth)
	user.Spec.ExpirationSeconds = ptr(int32(3600))
	servingRequest, _ := newCSR(t, pkix.Name{CommonName: "system:node:node-a", Organization: []string{"system:nodes"}}, "node-a.example")
	refusedRequest, _ := newCSR(t, pkix.Name{CommonName: "system:node:node-a", Organization: []string{"system:nodes"}})
	for _, csr := range []*certificatesv1.CertificateSigningRequest{
		user,
		csrFor("serving", servingRequest, certificatesv1.KubeletServingSignerName, certificatesv1.UsageDigitalSignature, certificatesv1.UsageServerAuth),
		csrFor("server-usage", userRequest, certificatesv1.KubeAPIServerClientSignerName, certificatesv1.UsageServerAuth),
		csrFor("serving-without-names", refusedRequest, certificatesv1.KubeletServingSignerName, certificatesv1.UsageDigitalSignature, certificatesv1.UsageServerAuth),
		csrFor("denied", userRequest, certificatesv1.KubeAPIServerClientSignerName, certificatesv1.UsageClientAuth),
		csrFor("others", userRequest, "example.com/signer", certificatesv1.UsageClientAuth),
		csrFor("pending", userRequest, certificatesv1.KubeAPIServerClientSignerName, certificatesv1.UsageClientAuth),
	} {
		if _, err := csrs.Create(ctx, csr, metav1.CreateOptions{}); err != nil {
			t.Fatal(err)
		}
	}
	s.mustKubectl(t, "certificate", "approve", "jane", "serving", "server-usage", "serving-without-names", "others")
	s.mustKubectl(t, "certificate", "deny", "denied")

	issued := func(name string) *certificatesv1.CertificateSigningRequest {
		t.Helper()
		var csr *certificatesv1.CertificateSigningRequest
		controlplanetest.Eventually(t, 10*time.Second, name+" issued", func() (bool, string) {
			var err error
			csr, err = csrs.Get(ctx, name, metav1.GetOptions{})
			return err == nil && len(csr.Status.Certificate) > 0, ""
		})
		return csr
	}
	failed := func(name, message string) {
		t.Helper()
		controlplanetest.Eventually(t, 10*time.Second, name+" failed", func() (bool, string) {
			csr, err := csrs.Get(ctx, name, metav1.GetOptions{})
			if err != nil {
				return false, err.Error()
			}
			for _, c := range csr.Status.Conditions {
				if c.Type == certificatesv1.CertificateFailed && c.Status == corev1.ConditionTrue {
					ok := c.Reason == "SignerValidationFailure" && c.Message == message && len(csr.Status.Certificate) == 0 && !c.LastTransitionTime.IsZero()
					return ok, c.Reason + ": " + c.Message
				}
			}
			return false, "no Failed condition"
		})
	}

	// The user's certificate: its subject, client auth, an hour, the CA.
	cert := parseCertificate(t, issued("jane").Status.Certificate)
	if cert.Subject.CommonName != "jane" || !slices.Equal(cert.Subject.Organization, []string{"dev"}) ||
		!slices.Equal(cert.ExtKeyUsage, []x509.ExtKeyUsage{x509.ExtKeyUsageClientAuth}) || cert.KeyUsage != x509.KeyUsageDigitalSignature {
		t.Errorf("certificate: %v usages %v %v", cert.Subject, cert.ExtKeyUsage, cert.KeyUsage)
	}
	if life := time.Until(cert.NotAfter); life < 55*time.Minute || life > 61*time.Minute {
		t.Errorf("certificate expires in %v, want the hour asked for", life)
	}
	if _, err := cert.Verify(x509.VerifyOptions{Roots: s.cp.Certs.CAPool(), KeyUsages: []x509.ExtKeyUsage{x509.ExtKeyUsageClientAuth}}); err != nil {
		t.Errorf("not signed by the cluster CA: %v", err)
	}
	// ... and it is how jane signs in.
	cfg := s.restConfig(false)
	cfg.CertData, cfg.KeyData = issued("jane").Status.Certificate, userKey
	asJane, err := kubernetes.NewForConfig(cfg)
	if err != nil {
		t.Fatal(err)
	}
	review, err := asJane.AuthenticationV1().SelfSubjectReviews().Create(ctx, &authenticationv1.SelfSubjectReview{}, metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if got := review.Status.UserInfo; got.Username != "jane" || !slices.Contains(got.Groups, "dev") {
		t.Errorf("signed in as %+v", got)
	}

	serving := parseCertificate(t, issued("serving").Status.Certificate)
	if !slices.Equal(serving.DNSNames, []string{"node-a.example"}) || !slices.Equal(serving.ExtKeyUsage, []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth}) {
		t.Errorf("serving certificate: %v %v", serving.DNSNames, serving.ExtKeyUsage)
	}
	if life := time.Until(serving.NotAfter); life < 364*24*time.Hour {
		t.Errorf("without expirationSeconds the certificate lives %v, want a year", life)
	}
	failed("server-usage", "invalid usage for client certificate: server auth")
	failed("serving-without-names", "DNS or IP subjectAltName is required")
	for _, name := range []string{"denied", "others", "pending"} {
		if csr, err := csrs.Get(ctx, name, metav1.GetOptions{}); err != nil || len(csr.Status.Certificate) > 0 {
			t.Errorf("%s: signed (%v)", name, err)
		}
	}

	// Through /status the certificate is set once and the approval stays.
	csr := issued("jane")
	csr.Status.Certificate = s.cp.Certs.Admin.CertPEM
	if _, err := csrs.UpdateStatus(ctx, csr, metav1.UpdateOptions{}); !apierrors.IsInvalid(err) || !strings.Contains(err.Error(), "updates may not modify existing certificate content") {
		t.Errorf("replacing the certificate: %v", err)
	}
	pending, err := csrs.Get(ctx, "pending", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	pending.Status.Conditions = append(pending.Status.Conditions, certificatesv1.CertificateSigningRequestCondition{Type: certificatesv1.CertificateApproved, Status: corev1.ConditionTrue, Reason: "ByStatus"})
	if _, err := csrs.UpdateStatus(ctx, pending, metav1.UpdateOptions{}); !apierrors.IsInvalid(err) || !strings.Contains(err.Error(), `updates may not add a condition of type "Approved"`) {
		t.Errorf("approving through /status: %v", err)
	}
	// Nor does /approval take a decision back.
	csr = issued("jane")
	csr.Status.Conditions = nil
	if _, err := csrs.UpdateApproval(ctx, "jane", csr, metav1.UpdateOptions{}); !apierrors.IsInvalid(err) || !strings.Contains(err.Error(), `updates may not remove a condition of type "Approved"`) {
		t.Errorf("un-approving: %v", err)
	}
	csr = issued("jane")
	csr.Status.Conditions[0].Reason = "Rewritten"
	csr.Status.Conditions = append(csr.Status.Conditions, certificatesv1.CertificateSigningRequestCondition{Type: "Audited", Status: corev1.ConditionTrue, Reason: "Checked"})
	updated, err := csrs.UpdateStatus(ctx, csr, metav1.UpdateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if len(updated.Status.Conditions) != 2 || updated.Status.Conditions[0].Reason != "KubectlApprove" ||
		updated.Status.Conditions[1].Type != "Audited" || updated.Status.Conditions[1].LastUpdateTime.IsZero() {
		t.Errorf("status write: conditions %+v", updated.Status.Conditions)
	}
}

func parseCertificate(t *testing.T, data []byte) *x509.Certificate {
	t.Helper()
	block, _ := pem.Decode(data)
	if block == nil || block.Type != "CERTIFICATE" {
		t.Fatalf("not a PEM certificate: %q", data)
	}
	cert, err := x509.ParseCertificate(block.Bytes)
	if err != nil {
		t.Fatal(err)
	}
	return cert
}

// /approval is kube's approval strategy: the request's conditions are
// validated as any write's (a condition type of the approver's own is
// fine; Approved with status False is not), and its metadata is kept
// while its spec and the rest of its status stay as stored.
func TestCSRApprovalAsKube(t *testing.T) {
	s := startControlPlane(t, "")
	csrs := s.clientset(t, false).CertificatesV1().CertificateSigningRequests()
	ctx := context.Background()
	request, _ := newCSR(t, pkix.Name{CommonName: "jane"})
	for _, name := range []string{"custom", "false", "labelled"} {
		if _, err := csrs.Create(ctx, csrFor(name, request, "example.com/signer", certificatesv1.UsageClientAuth), metav1.CreateOptions{}); err != nil {
			t.Fatal(err)
		}
	}
	get := func(name string) *certificatesv1.CertificateSigningRequest {
		t.Helper()
		csr, err := csrs.Get(ctx, name, metav1.GetOptions{})
		if err != nil {
			t.Fatal(err)
		}
		return csr
	}

	// A condition of the approver's own type goes in beside the decision.
	csr := get("custom")
	csr.Status.Conditions = []certificatesv1.CertificateSigningRequestCondition{
		{Type: "Reviewed", Status: corev1.ConditionTrue, Reason: "ByTeam"},
		{Type: certificatesv1.CertificateApproved, Status: corev1.ConditionTrue, Reason: "Approver"},
	}
	approved, err := csrs.UpdateApproval(ctx, "custom", csr, metav1.UpdateOptions{})
	if err != nil {
		t.Errorf("approval with a custom condition type: %v", err)
	} else if len(approved.Status.Conditions) != 2 || approved.Status.Conditions[0].Type != "Reviewed" || approved.Status.Conditions[0].LastUpdateTime.IsZero() {
		t.Errorf("conditions after approval: %+v", approved.Status.Conditions)
	}

	// Approved, Denied and Failed are True or absent.
	csr = get("false")
	csr.Status.Conditions = []certificatesv1.CertificateSigningRequestCondition{{Type: certificatesv1.CertificateApproved, Status: corev1.ConditionFalse, Reason: "NotYet"}}
	_, err = csrs.UpdateApproval(ctx, "false", csr, metav1.UpdateOptions{})
	want := `status.conditions[0].status: Unsupported value: "False": supported values: "True"`
	if !apierrors.IsInvalid(err) || !strings.Contains(err.Error(), want) {
		t.Errorf("Approved=False: want 422 with %q, got %v", want, err)
	}
	if conditions := get("false").Status.Conditions; len(conditions) != 0 {
		t.Errorf("the refused approval was stored: %+v", conditions)
	}

	// Metadata comes from the request; spec and certificate do not.
	csr = get("labelled")
	csr.Labels = map[string]string{"reviewed-by": "team-a"}
	csr.Spec.SignerName = "example.com/other"
	csr.Status.Conditions = []certificatesv1.CertificateSigningRequestCondition{{Type: certificatesv1.CertificateDenied, Status: corev1.ConditionTrue, Reason: "Nope"}}
	if _, err := csrs.UpdateApproval(ctx, "labelled", csr, metav1.UpdateOptions{}); err != nil {
		t.Errorf("denying through /approval: %v", err)
	}
	stored := get("labelled")
	if stored.Labels["reviewed-by"] != "team-a" || stored.Spec.SignerName != "example.com/signer" ||
		len(stored.Status.Conditions) != 1 || stored.Status.Conditions[0].Type != certificatesv1.CertificateDenied {
		t.Errorf("after /approval: labels %v, signer %q, conditions %+v", stored.Labels, stored.Spec.SignerName, stored.Status.Conditions)
	}
}
