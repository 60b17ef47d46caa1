package certificatesigningrequest

import (
	"context"
	"fmt"
	"strings"

	certificatesv1 "k8s.io/api/certificates/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/devplane/devplane/apiserver/authz"
	"github.com/devplane/devplane/apiserver/builtin"
	"github.com/devplane/devplane/apiserver/registry"
	"github.com/devplane/devplane/apiserver/request"
)

// installApproval serves certificatesigningrequests/approval as kube's
// approval strategy: the request's metadata and conditions are taken, its
// spec and the rest of its status stay as stored, and the result is
// validated as any update of a request, but that Approved and Denied
// conditions may come and change. Then, as kube's CertificateApproval
// admission, only a user who may approve for the request's signer (verb
// approve on certificates.k8s.io/signers, named after the signer or its
// domain's wildcard) gets through.
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
		stampConditions(req, cur)
		conditions := req.Status.Conditions
		req.Spec, req.Status = cur.Spec, cur.Status
		req.Status.Conditions = conditions
		keepSystemFields(req, cur)
		if errs := builtin.ValidateCSRApprovalUpdate(req, cur); len(errs) > 0 {
			return nil, apierrors.NewInvalid(certificatesv1.SchemeGroupVersion.WithKind("CertificateSigningRequest").GroupKind(), cur.Name, errs)
		}
		if err := mayApprove(ctx, authorizer, cur.Spec.SignerName); err != nil {
			return nil, err
		}
		return req, nil
	}
}

// keepSystemFields gives csr the stored object's uid (when it has none),
// creation and deletion times, which validation then finds unchanged: the
// store restores them after this subresource's merge, which validates.
func keepSystemFields(csr, stored *certificatesv1.CertificateSigningRequest) {
	if csr.UID == "" {
		csr.UID = stored.UID
	}
	csr.CreationTimestamp = stored.CreationTimestamp
	csr.DeletionTimestamp, csr.DeletionGracePeriodSeconds = stored.DeletionTimestamp, stored.DeletionGracePeriodSeconds
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
