package builtin

// Validation of certificates.k8s.io/v1 CertificateSigningRequests, with
// kube's messages.

import (
	"bytes"
	"crypto/x509"
	"encoding/pem"
	"errors"
	"fmt"
	"slices"

	certificatesv1 "k8s.io/api/certificates/v1"
	corev1 "k8s.io/api/core/v1"
	apiequality "k8s.io/apimachinery/pkg/api/equality"
	"k8s.io/apimachinery/pkg/util/validation/field"
)

// csrUsages are the usages a request may name.
var csrUsages = []string{
	string(certificatesv1.UsageAny), string(certificatesv1.UsageCertSign), string(certificatesv1.UsageClientAuth),
	string(certificatesv1.UsageCodeSigning), string(certificatesv1.UsageContentCommitment), string(certificatesv1.UsageCRLSign),
	string(certificatesv1.UsageDataEncipherment), string(certificatesv1.UsageDecipherOnly), string(certificatesv1.UsageDigitalSignature),
	string(certificatesv1.UsageEmailProtection), string(certificatesv1.UsageEncipherOnly), string(certificatesv1.UsageIPsecEndSystem),
	string(certificatesv1.UsageIPsecTunnel), string(certificatesv1.UsageIPsecUser), string(certificatesv1.UsageKeyAgreement),
	string(certificatesv1.UsageKeyEncipherment), string(certificatesv1.UsageMicrosoftSGC), string(certificatesv1.UsageNetscapeSGC),
	string(certificatesv1.UsageOCSPSigning), string(certificatesv1.UsageSMIME), string(certificatesv1.UsageServerAuth),
	string(certificatesv1.UsageSigning), string(certificatesv1.UsageTimestamping),
}

// legacyUnknownSigner is the v1beta1 default, refused by v1.
const legacyUnknownSigner = "kubernetes.io/legacy-unknown"

func validateCSR(csr *certificatesv1.CertificateSigningRequest) field.ErrorList {
	var errs field.ErrorList
	if err := checkCSRRequest(csr.Spec.Request); err != nil {
		errs = append(errs, field.Invalid(specPath.Child("request"), csr.Spec.Request, err.Error()))
	}
	usagesPath := specPath.Child("usages")
	if len(csr.Spec.Usages) == 0 {
		errs = append(errs, field.Required(usagesPath, ""))
	}
	seen := map[certificatesv1.KeyUsage]bool{}
	for i, u := range csr.Spec.Usages {
		if !slices.Contains(csrUsages, string(u)) {
			errs = append(errs, field.NotSupported(usagesPath.Index(i), u, csrUsages))
		}
		if seen[u] {
			errs = append(errs, field.Duplicate(usagesPath.Index(i), u))
		}
		seen[u] = true
	}
	switch signer := csr.Spec.SignerName; signer {
	case "":
		errs = append(errs, field.Required(specPath.Child("signerName"), ""))
	case legacyUnknownSigner:
		errs = append(errs, field.Invalid(specPath.Child("signerName"), signer, "the legacy signerName is not allowed via this API version"))
	default:
		errs = append(errs, validateSignerName(specPath.Child("signerName"), signer)...)
	}
	if s := csr.Spec.ExpirationSeconds; s != nil && *s < 600 {
		errs = append(errs, field.Invalid(specPath.Child("expirationSeconds"), *s, "may not specify a duration less than 600 seconds (10 minutes)"))
	}
	errs = append(errs, validateCSRConditions(csr.Status.Conditions)...)
	if err := checkCSRCertificate(csr.Status.Certificate); err != nil {
		errs = append(errs, field.Invalid(field.NewPath("status", "certificate"), "<certificate data>", err.Error()))
	}
	return errs
}

// checkCSRRequest wants one PEM CERTIFICATE REQUEST whose signature holds.
func checkCSRRequest(data []byte) error {
	block, _ := pem.Decode(data)
	if block == nil || block.Type != "CERTIFICATE REQUEST" {
		return errors.New("PEM block type must be CERTIFICATE REQUEST")
	}
	req, err := x509.ParseCertificateRequest(block.Bytes)
	if err != nil {
		return err
	}
	return req.CheckSignature()
}

// checkCSRCertificate wants PEM CERTIFICATE blocks only (none is fine).
func checkCSRCertificate(data []byte) error {
	if len(data) == 0 {
		return nil
	}
	blocks := 0
	for {
		block, rest := pem.Decode(data)
		if block == nil {
			break
		}
		if block.Type != "CERTIFICATE" {
			return fmt.Errorf("only CERTIFICATE PEM blocks are allowed, found %q", block.Type)
		}
		if len(block.Headers) != 0 {
			return errors.New("no PEM block headers are permitted")
		}
		certs, err := x509.ParseCertificates(block.Bytes)
		if err != nil {
			return err
		}
		if len(certs) == 0 {
			return errors.New("found CERTIFICATE PEM block containing 0 certificates")
		}
		blocks++
		data = rest
	}
	if blocks == 0 {
		return errors.New("must contain at least one CERTIFICATE PEM block")
	}
	return nil
}

func validateCSRConditions(conditions []certificatesv1.CertificateSigningRequestCondition) field.ErrorList {
	p := field.NewPath("status", "conditions")
	var errs field.ErrorList
	seen := map[certificatesv1.RequestConditionType]bool{}
	approved, denied := false, false
	for i, c := range conditions {
		if c.Type == "" {
			errs = append(errs, field.Required(p.Index(i).Child("type"), ""))
		}
		allowed := []string{string(corev1.ConditionFalse), string(corev1.ConditionTrue), string(corev1.ConditionUnknown)}
		switch c.Type {
		case certificatesv1.CertificateApproved, certificatesv1.CertificateDenied, certificatesv1.CertificateFailed:
			allowed = []string{string(corev1.ConditionTrue)}
		}
		switch {
		case c.Status == "":
			errs = append(errs, field.Required(p.Index(i).Child("status"), ""))
		case !slices.Contains(allowed, string(c.Status)):
			errs = append(errs, field.NotSupported(p.Index(i).Child("status"), c.Status, allowed))
		}
		switch c.Type {
		case certificatesv1.CertificateApproved:
			approved = true
			if denied {
				errs = append(errs, field.Invalid(p, c.Type, "Approved and Denied conditions are mutually exclusive"))
			}
		case certificatesv1.CertificateDenied:
			denied = true
			if approved {
				errs = append(errs, field.Invalid(p, c.Type, "Approved and Denied conditions are mutually exclusive"))
			}
		}
		if seen[c.Type] {
			errs = append(errs, field.Duplicate(p.Index(i).Child("type"), c.Type))
		}
		seen[c.Type] = true
	}
	return errs
}

// validateCSRUpdate is what an update may not do to a request's status
// (its spec is the stored one on every path): remove an Approved, Denied
// or Failed condition, add or change an Approved or Denied one (approval
// is its own subresource), or change a certificate once issued.
func validateCSRUpdate(csr, old *certificatesv1.CertificateSigningRequest) field.ErrorList {
	p := field.NewPath("status", "conditions")
	var errs field.ErrorList
	for _, t := range []certificatesv1.RequestConditionType{certificatesv1.CertificateApproved, certificatesv1.CertificateDenied, certificatesv1.CertificateFailed} {
		was, is := conditionsOf(old, t), conditionsOf(csr, t)
		switch {
		case len(is) < len(was):
			errs = append(errs, field.Forbidden(p, fmt.Sprintf("updates may not remove a condition of type %q", t)))
		case t == certificatesv1.CertificateFailed:
		case len(is) > len(was):
			errs = append(errs, field.Forbidden(p, fmt.Sprintf("updates may not add a condition of type %q", t)))
		case !apiequality.Semantic.DeepEqual(was, is):
			errs = append(errs, field.Forbidden(p, fmt.Sprintf("updates may not modify a condition of type %q", t)))
		}
	}
	if len(old.Status.Certificate) > 0 && !bytes.Equal(csr.Status.Certificate, old.Status.Certificate) {
		errs = append(errs, field.Forbidden(field.NewPath("status", "certificate"), "updates may not modify existing certificate content"))
	}
	return errs
}

func conditionsOf(csr *certificatesv1.CertificateSigningRequest, t certificatesv1.RequestConditionType) []certificatesv1.CertificateSigningRequestCondition {
	var out []certificatesv1.CertificateSigningRequestCondition
	for _, c := range csr.Status.Conditions {
		if c.Type == t {
			out = append(out, c)
		}
	}
	return out
}
