package certificatesigningrequest

import (
	"context"
	"fmt"
	"strings"

	certificatesv1 "k8s.io/api/certificates/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/util/validation/field"

	"github.com/devplane/devplane/apiserver/authz"
	"github.com/devplane/devplane/apiserver/registry"
	"github.com/devplane/devplane/apiserver/request"
)

// installApproval serves certificatesigningrequests/approval: only the
// Approved and Denied conditions change, and only for a user who may
// approve for the request's signer (verb approve on
// certificates.k8s.io/signers, named after the signer or its domain's
// wildcard), as kube checks.
func installApproval(store *registry.Store, authorizer authz.Authorizer) {
	if store.UpdateSubresources == nil {
		store.UpdateSubresources = map[string]registry.SubresourceUpdate{}
	}
	store.UpdateSubresources["approval"] = func(ctx context.Context, requested, current runtime.Object) (runtime.Object, error) {
		req, ok1 := requested.(*certificatesv1.CertificateSigningRequest)
		cur, ok2 := current.(*certificatesv1.CertificateSigningRequest)
		if !ok1 || !ok2 {
			return nil, apierrors.NewBadRequest("approval takes a CertificateSigningRequest")
		}
		if err := mayApprove(ctx, authorizer, cur.Spec.SignerName); err != nil {
			return nil, err
		}
		var errs field.ErrorList
		approved, denied := false, false
		for i, c := range req.Status.Conditions {
			cp := field.NewPath("status", "conditions").Index(i)
			switch c.Type {
			case certificatesv1.CertificateApproved:
				approved = true
			case certificatesv1.CertificateDenied:
				denied = true
			case certificatesv1.CertificateFailed:
			default:
				errs = append(errs, field.NotSupported(cp.Child("type"), c.Type, []string{"Approved", "Denied", "Failed"}))
			}
			if c.Status != corev1.ConditionTrue && c.Status != corev1.ConditionFalse && c.Status != corev1.ConditionUnknown {
				errs = append(errs, field.NotSupported(cp.Child("status"), c.Status, []string{"False", "True", "Unknown"}))
			}
		}
		if approved && denied {
			errs = append(errs, field.Invalid(field.NewPath("status", "conditions"), req.Status.Conditions, "Approved and Denied conditions are mutually exclusive"))
		}
		// A decision, or a signer's failure, stays once made.
		for _, t := range []certificatesv1.RequestConditionType{certificatesv1.CertificateApproved, certificatesv1.CertificateDenied, certificatesv1.CertificateFailed} {
			if countConditions(req, t) < countConditions(cur, t) {
				errs = append(errs, field.Forbidden(field.NewPath("status", "conditions"), fmt.Sprintf("updates may not remove a condition of type %q", t)))
			}
		}
		if len(errs) > 0 {
			return nil, apierrors.NewInvalid(certificatesv1.SchemeGroupVersion.WithKind("CertificateSigningRequest").GroupKind(), cur.Name, errs)
		}
		stampConditions(req, cur)
		cur.Status.Conditions = req.Status.Conditions
		return cur, nil
	}
}

// mayApprove asks the authorizer whether the requester may approve for
// signerName: the signer itself, or "<domain>/*".
func mayApprove(ctx context.Context, authorizer authz.Authorizer, signerName string) error {
	user, ok := request.UserFrom(ctx)
	if !ok {
		return apierrors.NewInternalError(fmt.Errorf("no user on the request"))
	}
	names := []string{signerName}
	if domain, _, ok := strings.Cut(signerName, "/"); ok {
		names = append(names, domain+"/*")
	}
	for _, name := range names {
		decision, _, _ := authorizer.Authorize(ctx, authz.Attributes{User: user, Verb: "approve", APIGroup: certificatesv1.GroupName, APIVersion: "*",
			Resource: "signers", Name: name, ResourceRequest: true})
		if decision == authz.Allow {
			return nil
		}
	}
	return apierrors.NewForbidden(schema.GroupResource{Group: certificatesv1.GroupName, Resource: "certificatesigningrequests"}, "",
		fmt.Errorf("user not permitted to approve requests with signerName %q", signerName))
}
