package controlplane

// CertificateSigningRequests as kube's strategies treat them: a request
// records who made it (whatever the body says), starts with no status and
// keeps its spec; its status takes a certificate once and keeps its
// approval, which only /approval changes, for a user who may approve for
// the signer. (Approved requests to kube's signers are signed by the
// csrsigning controller.)

import (
	"context"
	"fmt"
	"slices"
	"strings"

	certificatesv1 "k8s.io/api/certificates/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/util/validation/field"

	"github.com/devplane/devplane/apiserver/authz"
	"github.com/devplane/devplane/apiserver/registry"
	"github.com/devplane/devplane/apiserver/request"
)

// installCSRs sets the CSR store's create, update and status rules and
// serves /approval.
func (s *security) installCSRs() {
	csrs, ok := s.cp.CoreRegistry.Lookup(certificatesv1.GroupName, "v1", "certificatesigningrequests")
	if !ok || csrs.Store == nil {
		return
	}
	store := csrs.Store
	store.Hooks.BeforeCreate = func(ctx context.Context, obj runtime.Object) (func(), error) {
		csr, ok := obj.(*certificatesv1.CertificateSigningRequest)
		if !ok {
			return nil, apierrors.NewBadRequest("expected a CertificateSigningRequest")
		}
		// The requester is the authenticated user, never what was sent
		// (an approver reads it to decide). The status is already empty.
		csr.Spec.Username, csr.Spec.UID, csr.Spec.Groups, csr.Spec.Extra = "", "", nil, nil
		if user, ok := request.UserFrom(ctx); ok {
			csr.Spec.Username, csr.Spec.UID = user.Name, user.UID
			csr.Spec.Groups = slices.Clone(user.Groups)
			if len(user.Extra) > 0 {
				csr.Spec.Extra = map[string]certificatesv1.ExtraValue{}
				for k, v := range user.Extra {
					csr.Spec.Extra[k] = slices.Clone(v)
				}
			}
		}
		return nil, nil
	}
	store.Hooks.BeforeUpdate = func(_ context.Context, obj, old runtime.Object) (func(), func(), error) {
		csr, ok1 := obj.(*certificatesv1.CertificateSigningRequest)
		prev, ok2 := old.(*certificatesv1.CertificateSigningRequest)
		if !ok1 || !ok2 {
			return nil, nil, apierrors.NewBadRequest("expected a CertificateSigningRequest")
		}
		// A request is immutable but through its subresources; the status
		// is the stored one already.
		csr.Spec = prev.Spec
		return nil, nil, nil
	}
	store.PrepareStatusUpdate = func(obj, old runtime.Object) {
		csr, ok1 := obj.(*certificatesv1.CertificateSigningRequest)
		prev, ok2 := old.(*certificatesv1.CertificateSigningRequest)
		if !ok1 || !ok2 {
			return
		}
		// The approval stays as it was (validation refuses adding or
		// removing one); new conditions get their times.
		keepConditions(csr, prev, certificatesv1.CertificateApproved)
		keepConditions(csr, prev, certificatesv1.CertificateDenied)
		stampConditions(csr, prev)
	}
	s.installCSRApproval(store)
}

// keepConditions puts prev's conditions of type t back in csr's places
// for them, when csr has as many.
func keepConditions(csr, prev *certificatesv1.CertificateSigningRequest, t certificatesv1.RequestConditionType) {
	var was, is []int
	for i, c := range prev.Status.Conditions {
		if c.Type == t {
			was = append(was, i)
		}
	}
	for i, c := range csr.Status.Conditions {
		if c.Type == t {
			is = append(is, i)
		}
	}
	if len(was) != len(is) {
		return
	}
	for k, i := range is {
		csr.Status.Conditions[i] = prev.Status.Conditions[was[k]]
	}
}

func countConditions(csr *certificatesv1.CertificateSigningRequest, t certificatesv1.RequestConditionType) int {
	n := 0
	for _, c := range csr.Status.Conditions {
		if c.Type == t {
			n++
		}
	}
	return n
}

// stampConditions sets the times a condition came without: updated now,
// transitioned when the same type and status was first seen (or now).
func stampConditions(csr, prev *certificatesv1.CertificateSigningRequest) {
	now := metav1.Now()
	for i := range csr.Status.Conditions {
		c := &csr.Status.Conditions[i]
		if c.LastUpdateTime.IsZero() {
			c.LastUpdateTime = now
		}
		if c.LastTransitionTime.IsZero() {
			c.LastTransitionTime = now
			for _, p := range prev.Status.Conditions {
				if p.Type == c.Type && p.Status == c.Status && !p.LastTransitionTime.IsZero() {
					c.LastTransitionTime = p.LastTransitionTime
					break
				}
			}
		}
	}
}

// installCSRApproval serves certificatesigningrequests/approval: only the
// Approved and Denied conditions change, and only for a user who may
// approve for the request's signer (verb approve on
// certificates.k8s.io/signers, named after the signer or its domain's
// wildcard), as kube checks.
func (s *security) installCSRApproval(store *registry.Store) {
	if store.UpdateSubresources == nil {
		store.UpdateSubresources = map[string]registry.SubresourceUpdate{}
	}
	store.UpdateSubresources["approval"] = func(ctx context.Context, requested, current runtime.Object) (runtime.Object, error) {
		req, ok1 := requested.(*certificatesv1.CertificateSigningRequest)
		cur, ok2 := current.(*certificatesv1.CertificateSigningRequest)
		if !ok1 || !ok2 {
			return nil, apierrors.NewBadRequest("approval takes a CertificateSigningRequest")
		}
		if err := s.mayApprove(ctx, cur.Spec.SignerName); err != nil {
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
func (s *security) mayApprove(ctx context.Context, signerName string) error {
	user, ok := request.UserFrom(ctx)
	if !ok {
		return apierrors.NewInternalError(fmt.Errorf("no user on the request"))
	}
	names := []string{signerName}
	if domain, _, ok := strings.Cut(signerName, "/"); ok {
		names = append(names, domain+"/*")
	}
	for _, name := range names {
		if s.decide(ctx, authz.Attributes{User: user, Verb: "approve", APIGroup: certificatesv1.GroupName, APIVersion: "*",
			Resource: "signers", Name: name, ResourceRequest: true}).Allowed {
			return nil
		}
	}
	return apierrors.NewForbidden(schema.GroupResource{Group: certificatesv1.GroupName, Resource: "certificatesigningrequests"}, "",
		fmt.Errorf("user not permitted to approve requests with signerName %q", signerName))
}
