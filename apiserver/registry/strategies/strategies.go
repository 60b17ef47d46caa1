// Package strategies says which strategy serves which built-in kind: the
// per-resource packages (apiserver/registry/<group>/<resource>) for kinds
// with behaviour of their own, and kube's storage flags for the others.
package strategies

import (
	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/devplane/devplane/apiserver/registry"
	"github.com/devplane/devplane/apiserver/registry/apps/deployment"
	"github.com/devplane/devplane/apiserver/registry/core/namespace"
	"github.com/devplane/devplane/apiserver/registry/core/node"
	"github.com/devplane/devplane/apiserver/registry/core/persistentvolume"
	"github.com/devplane/devplane/apiserver/registry/core/pod"
)

// configured are the kinds whose kube strategy differs in logic.
var configured = map[schema.GroupResource]func(*registry.Strategy){
	{Resource: "pods"}:                       pod.Configure,
	{Resource: "namespaces"}:                 namespace.Configure,
	{Resource: "nodes"}:                      node.Configure,
	{Resource: "persistentvolumes"}:          persistentvolume.Configure,
	{Group: "apps", Resource: "deployments"}: deployment.Configure,
}

// returnDeletedObject are the kinds whose kube storage answers an immediate
// delete with the deleted object (ReturnDeletedObject: true in
// pkg/registry/<group>/<resource>/storage, for the versions served here).
var returnDeletedObject = map[schema.GroupResource]bool{
	{Resource: "pods"}:                   true,
	{Resource: "namespaces"}:             true,
	{Resource: "services"}:               true,
	{Resource: "serviceaccounts"}:        true,
	{Resource: "persistentvolumes"}:      true,
	{Resource: "persistentvolumeclaims"}: true,
	{Resource: "podtemplates"}:           true,
	{Resource: "resourcequotas"}:         true,

	{Group: "storage.k8s.io", Resource: "storageclasses"}:          true,
	{Group: "storage.k8s.io", Resource: "csidrivers"}:              true,
	{Group: "storage.k8s.io", Resource: "csinodes"}:                true,
	{Group: "storage.k8s.io", Resource: "volumeattachments"}:       true,
	{Group: "storage.k8s.io", Resource: "volumeattributesclasses"}: true,

	{Group: "resource.k8s.io", Resource: "deviceclasses"}:          true,
	{Group: "resource.k8s.io", Resource: "resourceclaims"}:         true,
	{Group: "resource.k8s.io", Resource: "resourceclaimtemplates"}: true,
	{Group: "resource.k8s.io", Resource: "resourceslices"}:         true,
	// devicetaintrules: only the pre-v1 versions do; v1 is served here.
}

// statusResetsMetadata are the kinds whose kube status strategy calls
// metav1.ResetObjectMetaForStatus: a status write keeps the stored labels,
// annotations, finalizers and owners.
var statusResetsMetadata = map[schema.GroupResource]bool{
	{Group: "storage.k8s.io", Resource: "csinodes"}:                                  true,
	{Group: "storage.k8s.io", Resource: "volumeattachments"}:                         true,
	{Group: "resource.k8s.io", Resource: "resourceclaims"}:                           true,
	{Group: "resource.k8s.io", Resource: "devicetaintrules"}:                         true,
	{Group: "networking.k8s.io", Resource: "servicecidrs"}:                           true,
	{Group: "storagemigration.k8s.io", Resource: "storageversionmigrations"}:         true,
	{Group: "admissionregistration.k8s.io", Resource: "validatingadmissionpolicies"}: true,
	{Group: "certificates.k8s.io", Resource: "podcertificaterequests"}:               true,
}

// statusKeepsMetadata are the kinds whose kube status strategy keeps all of
// the stored metadata but managedFields (flowcontrol's).
var statusKeepsMetadata = map[schema.GroupResource]bool{
	{Group: "flowcontrol.apiserver.k8s.io", Resource: "flowschemas"}:                 true,
	{Group: "flowcontrol.apiserver.k8s.io", Resource: "prioritylevelconfigurations"}: true,
}

// For is the option that gives the built-in kind gr its kube strategy.
func For(gr schema.GroupResource) registry.BuiltinOption {
	return registry.WithStrategy(func(s *registry.Strategy) {
		s.ReturnDeletedObject = returnDeletedObject[gr]
		switch {
		case statusResetsMetadata[gr]:
			s.PrepareStatusUpdate = registry.ResetMetadataForStatus
			s.StatusResetFields = []string{"metadata"}
		case statusKeepsMetadata[gr]:
			s.PrepareStatusUpdate = registry.KeepStoredMetadata
			s.StatusResetFields = []string{"metadata"}
		}
		if configure := configured[gr]; configure != nil {
			configure(s)
		}
	})
}
