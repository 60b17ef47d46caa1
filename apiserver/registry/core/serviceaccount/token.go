package serviceaccount

import (
	"context"
	"fmt"
	"time"

	authenticationv1 "k8s.io/api/authentication/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/validation/field"

	"github.com/devplane/devplane/apiserver/registry"
	"github.com/devplane/devplane/apiserver/request"
	"github.com/devplane/devplane/apiserver/serviceaccount"
)

// InstallToken serves serviceaccounts/token (TokenRequest): tokens issued
// by issuer, optionally bound to a Pod or Secret of the namespace, or to a
// Node; a token bound to a scheduled pod also names the pod's node.
func InstallToken(reg *registry.Registry, issuer *serviceaccount.Issuer) {
	t := &tokens{reg: reg, issuer: issuer}
	reg.AddCreateSubresource(schema.GroupVersionResource{Version: "v1", Resource: "serviceaccounts"}, "token", &registry.SubresourceCreate{
		Kind:   authenticationv1.SchemeGroupVersion.WithKind("TokenRequest"),
		New:    func() runtime.Object { return &authenticationv1.TokenRequest{} },
		Create: t.request,
	})
}

type tokens struct {
	reg    *registry.Registry
	issuer *serviceaccount.Issuer
}

// store is the core v1 store of resource, or a 404 when none serves it.
func (t *tokens) store(resource string) (*registry.Store, error) {
	res, ok := t.reg.Lookup("", "v1", resource)
	if !ok || res.Store == nil {
		return nil, apierrors.NewNotFound(schema.GroupResource{Resource: resource}, "")
	}
	return res.Store, nil
}

// Token lifetimes TokenRequest accepts.
const (
	minTokenExpiration = 10 * time.Minute
	maxTokenExpiration = 1 << 32 * time.Second
)

func (t *tokens) request(ctx context.Context, namespace, name string, obj runtime.Object) (runtime.Object, error) {
	req := obj.(*authenticationv1.TokenRequest)
	ctx = request.AsAPIServer(ctx) // the filter already authorized serviceaccounts/token
	accounts, err := t.store("serviceaccounts")
	if err != nil {
		return nil, err
	}
	sa, err := accounts.Get(ctx, namespace, name, metav1.GetOptions{})
	if err != nil {
		return nil, err
	}
	gk := authenticationv1.SchemeGroupVersion.WithKind("TokenRequest").GroupKind()
	if req.Name != "" && req.Name != name {
		return nil, apierrors.NewBadRequest(fmt.Sprintf("metadata.name %q does not match the service account %q", req.Name, name))
	}
	var errs field.ErrorList
	expiration := serviceaccount.DefaultExpiration
	if es := req.Spec.ExpirationSeconds; es != nil {
		expiration = time.Duration(*es) * time.Second
		path := field.NewPath("spec", "expirationSeconds")
		switch {
		case expiration < minTokenExpiration:
			errs = append(errs, field.Invalid(path, *es, "may not specify a duration less than 10 minutes"))
		case expiration > maxTokenExpiration:
			errs = append(errs, field.Invalid(path, *es, "may not specify a duration larger than 2^32 seconds"))
		}
	}
	var bound *serviceaccount.BoundObjectRef
	if ref := req.Spec.BoundObjectRef; ref != nil {
		path := field.NewPath("spec", "boundObjectRef")
		resource, supported := map[string]string{"Pod": "pods", "Secret": "secrets", "Node": "nodes"}[ref.Kind]
		switch {
		case !supported:
			errs = append(errs, field.NotSupported(path.Child("kind"), ref.Kind, []string{"Pod", "Node", "Secret"}))
		case ref.APIVersion != "" && ref.APIVersion != "v1":
			errs = append(errs, field.Invalid(path.Child("apiVersion"), ref.APIVersion, `must be "v1"`))
		case ref.Name == "":
			errs = append(errs, field.Required(path.Child("name"), ""))
		}
		if len(errs) == 0 {
			store, err := t.store(resource)
			if err != nil {
				return nil, err
			}
			targetNamespace := namespace
			if ref.Kind == "Node" {
				targetNamespace = ""
			}
			target, err := store.Get(ctx, targetNamespace, ref.Name, metav1.GetOptions{})
			if err != nil {
				return nil, err
			}
			uid := uidOf(target)
			if ref.UID != "" && ref.UID != uid {
				return nil, apierrors.NewConflict(schema.GroupResource{Resource: resource}, ref.Name,
					fmt.Errorf("the UID in the bound object reference (%s) does not match the UID in record. The object might have been deleted and then recreated", ref.UID))
			}
			bound = &serviceaccount.BoundObjectRef{Kind: ref.Kind, Name: ref.Name, UID: string(uid)}
			if pod, ok := target.(*corev1.Pod); ok && pod.Spec.NodeName != "" {
				bound.Node = t.nodeOf(ctx, pod.Spec.NodeName)
			}
		}
	}
	if len(errs) > 0 {
		return nil, apierrors.NewInvalid(gk, name, errs)
	}
	audiences := req.Spec.Audiences
	if len(audiences) == 0 {
		audiences = []string{t.issuer.URL()}
	}
	token, expiresAt, err := t.issuer.Issue(serviceaccount.ServiceAccountRef{
		Namespace: namespace, Name: name, UID: string(uidOf(sa)),
	}, audiences, expiration, bound)
	if err != nil {
		return nil, apierrors.NewInternalError(err)
	}
	out := req.DeepCopy()
	out.Name, out.Namespace = name, namespace
	out.CreationTimestamp = metav1.Now()
	out.Spec.Audiences = audiences
	es := int64(expiration / time.Second)
	out.Spec.ExpirationSeconds = &es
	out.Status = authenticationv1.TokenRequestStatus{Token: token, ExpirationTimestamp: metav1.NewTime(expiresAt)}
	return out, nil
}

func uidOf(obj runtime.Object) types.UID {
	acc, err := meta.Accessor(obj)
	if err != nil {
		return ""
	}
	return acc.GetUID()
}

// nodeOf is the node a bound pod runs on, for the token's node claims; as
// kube, none when the node cannot be read.
func (t *tokens) nodeOf(ctx context.Context, name string) *serviceaccount.BoundObjectRef {
	store, err := t.store("nodes")
	if err != nil {
		return nil
	}
	node, err := store.Get(ctx, "", name, metav1.GetOptions{ResourceVersion: "0"})
	if err != nil {
		return nil
	}
	return &serviceaccount.BoundObjectRef{Kind: "Node", Name: name, UID: string(uidOf(node))}
}
