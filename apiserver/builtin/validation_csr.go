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
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/util/validation/field"
)

// CSRUsages are the usages a CertificateSigningRequest may name, and what
// each is in the certificate signed for it: a key usage, or an extended
// key usage (Extended).
var CSRUsages = map[certificatesv1.KeyUsage]CSRUsage{
	certificatesv1.UsageSigning:           {Key: x509.KeyUsageDigitalSignature},
	certificatesv1.UsageDigitalSignature:  {Key: x509.KeyUsageDigitalSignature},
	certificatesv1.UsageContentCommitment: {Key: x509.KeyUsageContentCommitment},
	certificatesv1.UsageKeyEncipherment:   {Key: x509.KeyUsageKeyEncipherment},
	certificatesv1.UsageKeyAgreement:      {Key: x509.KeyUsageKeyAgreement},
	certificatesv1.UsageDataEncipherment:  {Key: x509.KeyUsageDataEncipherment},
	certificatesv1.UsageCertSign:          {Key: x509.KeyUsageCertSign},
	certificatesv1.UsageCRLSign:           {Key: x509.KeyUsageCRLSign},
	certificatesv1.UsageEncipherOnly:      {Key: x509.KeyUsageEncipherOnly},
	certificatesv1.UsageDecipherOnly:      {Key: x509.KeyUsageDecipherOnly},
	certificatesv1.UsageAny:               {Extended: true, Ext: x509.ExtKeyUsageAny},
	certificatesv1.UsageServerAuth:        {Extended: true, Ext: x509.ExtKeyUsageServerAuth},
	certificatesv1.UsageClientAuth:        {Extended: true, Ext: x509.ExtKeyUsageClientAuth},
	certificatesv1.UsageCodeSigning:       {Extended: true, Ext: x509.ExtKeyUsageCodeSigning},
	certificatesv1.UsageEmailProtection:   {Extended: true, Ext: x509.ExtKeyUsageEmailProtection},
	certificatesv1.UsageSMIME:             {Extended: true, Ext: x509.ExtKeyUsageEmailProtection},
	certificatesv1.UsageIPsecEndSystem:    {Extended: true, Ext: x509.ExtKeyUsageIPSECEndSystem},
	certificatesv1.UsageIPsecTunnel:       {Extended: true, Ext: x509.ExtKeyUsageIPSECTunnel},
	certificatesv1.UsageIPsecUser:         {Extended: true, Ext: x509.ExtKeyUsageIPSECUser},
	certificatesv1.UsageTimestamping:      {Extended: true, Ext: x509.ExtKeyUsageTimeStamping},
	certificatesv1.UsageOCSPSigning:       {Extended: true, Ext: x509.ExtKeyUsageOCSPSigning},
	certificatesv1.UsageMicrosoftSGC:      {Extended: true, Ext: x509.ExtKeyUsageMicrosoftServerGatedCrypto},
	certificatesv1.UsageNetscapeSGC:       {Extended: true, Ext: x509.ExtKeyUsageNetscapeServerGatedCrypto},
}

// CSRUsage is one usage's meaning in a certificate.
type CSRUsage struct {
	Key      x509.KeyUsage
	Extended bool
	Ext      x509.ExtKeyUsage
}

// csrUsageNames are CSRUsages' names, sorted, as a NotSupported error
// lists them.
var csrUsageNames = func() []string {
	names := make([]string, 0, len(CSRUsages))
	for u := range CSRUsages {
		names = append(names, string(u))
	}
	slices.Sort(names)
	return names
}()

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
		if _, ok := CSRUsages[u]; !ok {
			errs = append(errs, field.NotSupported(usagesPath.Index(i), u, csrUsageNames))
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

// ValidateCSRApprovalUpdate is kube's validation of a write through
// certificatesigningrequests/approval: a request's update validation,
// except that Approved and Denied conditions may be added and changed.
func ValidateCSRApprovalUpdate(csr, old *certificatesv1.CertificateSigningRequest) field.ErrorList {
	k, _ := Lookup(certificatesv1.SchemeGroupVersion.WithResource("certificatesigningrequests"))
	return updateValidatorWith(k, func(obj, old runtime.Object) field.ErrorList {
		return validateCSRUpdate(obj.(*certificatesv1.CertificateSigningRequest), old.(*certificatesv1.CertificateSigningRequest), true)
	})(csr, old)
}

// validateCSRUpdate is what an update may not do to a request's status
// (its spec is the stored one on every path): remove an Approved, Denied
// or Failed condition, add or change an Approved or Denied one unless
// through /approval (approval), or change a certificate once issued.
func validateCSRUpdate(csr, old *certificatesv1.CertificateSigningRequest, approval bool) field.ErrorList {
	p := field.NewPath("status", "conditions")
	var errs field.ErrorList
	for _, t := range []certificatesv1.RequestConditionType{certificatesv1.CertificateApproved, certificatesv1.CertificateDenied, certificatesv1.CertificateFailed} {
		was, is := conditionsOf(old, t), conditionsOf(csr, t)
		switch {
		case len(is) < len(was):
			errs = append(errs, field.Forbidden(p, fmt.Sprintf("updates may not remove a condition of type %q", t)))
		case t == certificatesv1.CertificateFailed, approval:
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
