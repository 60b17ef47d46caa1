package admission

import "github.com/devplane/devplane/apiserver/authz"

// ChainOptions are the plugins that depend on what else runs.
type ChainOptions struct {
	// StorageProtection enables StorageObjectInUseProtection: only where
	// the pvc- and pv-protection controllers run to take its finalizers
	// off (with the workload controllers), else claims could never go.
	StorageProtection bool
	// Authorizer answers the authorizer variable of policies' and webhook
	// match conditions' CEL expressions.
	Authorizer authz.Authorizer
}

// NewChain is kube-apiserver's default admission order: the built-in
// plugins (RuntimeClass last of them), then mutating admission policies and mutating webhooks; in the validation phase (each plugin's
// Validate in the same order), PodSecurity, ResourceQuota,
// ValidatingAdmissionPolicies and validating webhooks. NamespaceLifecycle
// is the REST store's own check.
func NewChain(src Source, opts ChainOptions) (Chain, error) {
	podSecurity, err := PodSecurity(src)
	if err != nil {
		return nil, err
	}
	chain := Chain{
		ServiceAccount(src),
		LimitRanger(src),
		DefaultTolerationSeconds(),
		Priority(src),
		DefaultStorageClass(src),
	}
	if opts.StorageProtection {
		chain = append(chain, StorageObjectInUseProtection())
	}
	return append(chain,
		podSecurity,
		RuntimeClass(src),
		MutatingAdmissionPolicies(src, opts.Authorizer),
		NewMutatingWebhooks(src, opts.Authorizer),
		ValidatingAdmissionPolicies(src, opts.Authorizer),
		NewValidatingWebhooks(src, opts.Authorizer),
		ResourceQuota(src),
	), nil
}
