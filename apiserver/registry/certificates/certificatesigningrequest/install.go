// Package certificatesigningrequest holds CertificateSigningRequests as
// kube's strategies treat them: a request records who made it (whatever
// the body says), starts with no status and keeps its spec; its status
// takes a certificate once and keeps its approval, which only /approval
// changes, for a user who may approve for the signer. (Approved requests
// to kube's signers are signed by the csrsigning controller.)
package certificatesigningrequest

import (
	"context"
	"slices"

	certificatesv1 "k8s.io/api/certificates/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"

	"github.com/devplane/devplane/apiserver/authz"
	"github.com/devplane/devplane/apiserver/registry"
	"github.com/devplane/devplane/apiserver/request"
)

// Install sets the CSR store's create, update and status rules and serves
// /approval, asking authorizer who may approve.
func Install(reg *registry.Registry, authorizer authz.Authorizer) {
	csrs, ok := reg.Lookup(certificatesv1.GroupName, "v1", "certificatesigningrequests")
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
	installApproval(store, authorizer)
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
