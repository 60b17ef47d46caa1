package printers

import (
	"k8s.io/apimachinery/pkg/runtime/schema"
)

// registry maps each built-in resource to its printer. Resources that kube
// prints with the default NAME/CREATED AT table (roles, clusterroles,
// limitranges, customresourcedefinitions) are deliberately absent so that
// For returns Default for them.
var registry = map[schema.GroupResource]TableConvertor{
	{Resource: "pods"}:                   newConvertor(podColumns, cellsOf(podCells)),
	{Resource: "podtemplates"}:           newConvertor(podTemplateColumns, cellsOf(podTemplateCells)),
	{Resource: "replicationcontrollers"}: newConvertor(replicaSetColumns, cellsOf(replicationControllerCells)),
	{Resource: "services"}:               newConvertor(serviceColumns, cellsOf(serviceCells)),
	{Resource: "endpoints"}:              newConvertor(endpointsColumns, cellsOf(endpointsCells)),
	{Resource: "configmaps"}:             newConvertor(configMapColumns, cellsOf(configMapCells)),
	{Resource: "secrets"}:                newConvertor(secretColumns, cellsOf(secretCells)),
	{Resource: "serviceaccounts"}:        newConvertor(serviceAccountColumns, cellsOf(serviceAccountCells)),
	{Resource: "namespaces"}:             newConvertor(namespaceColumns, cellsOf(namespaceCells)),
	{Resource: "nodes"}:                  newConvertor(nodeColumns, cellsOf(nodeCells)),
	{Resource: "events"}:                 newConvertor(eventColumns, cellsOf(coreEventCells), cellsOf(eventsV1EventCells)),
	{Resource: "persistentvolumes"}:      newConvertor(persistentVolumeColumns, cellsOf(persistentVolumeCells)),
	{Resource: "persistentvolumeclaims"}: newConvertor(persistentVolumeClaimColumns, cellsOf(persistentVolumeClaimCells)),
	{Resource: "resourcequotas"}:         newConvertor(resourceQuotaColumns, cellsOf(resourceQuotaCells)),

	{Group: "apps", Resource: "deployments"}:         newConvertor(deploymentColumns, cellsOf(deploymentCells)),
	{Group: "apps", Resource: "replicasets"}:         newConvertor(replicaSetColumns, cellsOf(replicaSetCells)),
	{Group: "apps", Resource: "statefulsets"}:        newConvertor(statefulSetColumns, cellsOf(statefulSetCells)),
	{Group: "apps", Resource: "daemonsets"}:          newConvertor(daemonSetColumns, cellsOf(daemonSetCells)),
	{Group: "apps", Resource: "controllerrevisions"}: newConvertor(controllerRevisionColumns, cellsOf(controllerRevisionCells)),

	{Group: "batch", Resource: "jobs"}:     newConvertor(jobColumns, cellsOf(jobCells)),
	{Group: "batch", Resource: "cronjobs"}: newConvertor(cronJobColumns, cellsOf(cronJobCells)),

	{Group: "autoscaling", Resource: "horizontalpodautoscalers"}: newConvertor(horizontalPodAutoscalerColumns, cellsOf(hpaV2Cells), cellsOf(hpaV1Cells)),

	{Group: "coordination.k8s.io", Resource: "leases"}:        newConvertor(leaseColumns, cellsOf(leaseCells)),
	{Group: "events.k8s.io", Resource: "events"}:              newConvertor(eventColumns, cellsOf(eventsV1EventCells), cellsOf(coreEventCells)),
	{Group: "discovery.k8s.io", Resource: "endpointslices"}:   newConvertor(endpointSliceColumns, cellsOf(endpointSliceCells)),
	{Group: "networking.k8s.io", Resource: "ingresses"}:       newConvertor(ingressColumns, cellsOf(ingressCells)),
	{Group: "networking.k8s.io", Resource: "ingressclasses"}:  newConvertor(ingressClassColumns, cellsOf(ingressClassCells)),
	{Group: "networking.k8s.io", Resource: "networkpolicies"}: newConvertor(networkPolicyColumns, cellsOf(networkPolicyCells)),
	{Group: "policy", Resource: "poddisruptionbudgets"}:       newConvertor(podDisruptionBudgetColumns, cellsOf(podDisruptionBudgetCells)),

	{Group: "rbac.authorization.k8s.io", Resource: "rolebindings"}:        newConvertor(roleBindingColumns, cellsOf(roleBindingCells)),
	{Group: "rbac.authorization.k8s.io", Resource: "clusterrolebindings"}: newConvertor(roleBindingColumns, cellsOf(clusterRoleBindingCells)),

	{Group: "storage.k8s.io", Resource: "storageclasses"}:    newConvertor(storageClassColumns, cellsOf(storageClassCells)),
	{Group: "storage.k8s.io", Resource: "csidrivers"}:        newConvertor(csiDriverColumns, cellsOf(csiDriverCells)),
	{Group: "storage.k8s.io", Resource: "csinodes"}:          newConvertor(csiNodeColumns, cellsOf(csiNodeCells)),
	{Group: "storage.k8s.io", Resource: "volumeattachments"}: newConvertor(volumeAttachmentColumns, cellsOf(volumeAttachmentCells)),

	{Group: "scheduling.k8s.io", Resource: "priorityclasses"}: newConvertor(priorityClassColumns, cellsOf(priorityClassCells)),
	{Group: "node.k8s.io", Resource: "runtimeclasses"}:        newConvertor(runtimeClassColumns, cellsOf(runtimeClassCells)),

	{Group: "admissionregistration.k8s.io", Resource: "mutatingwebhookconfigurations"}:   newConvertor(webhookConfigurationColumns, cellsOf(mutatingWebhookCells)),
	{Group: "admissionregistration.k8s.io", Resource: "validatingwebhookconfigurations"}: newConvertor(webhookConfigurationColumns, cellsOf(validatingWebhookCells)),

	{Group: "certificates.k8s.io", Resource: "certificatesigningrequests"}: newConvertor(certificateSigningRequestColumns, cellsOf(certificateSigningRequestCells)),

	{Resource: "componentstatuses"}:                                                      newConvertor(componentStatusColumns, cellsOf(componentStatusCells)),
	{Group: "resource.k8s.io", Resource: "deviceclasses"}:                                newConvertor(nameAgeColumns, cellsOf(deviceClassCells)),
	{Group: "resource.k8s.io", Resource: "resourceclaims"}:                               newConvertor(resourceClaimColumns, cellsOf(resourceClaimCells)),
	{Group: "resource.k8s.io", Resource: "resourceclaimtemplates"}:                       newConvertor(nameAgeColumns, cellsOf(resourceClaimTemplateCells)),
	{Group: "resource.k8s.io", Resource: "resourceslices"}:                               newConvertor(resourceSliceColumns, cellsOf(resourceSliceCells)),
	{Group: "storage.k8s.io", Resource: "volumeattributesclasses"}:                       newConvertor(volumeAttributesClassColumns, cellsOf(volumeAttributesClassCells)),
	{Group: "flowcontrol.apiserver.k8s.io", Resource: "flowschemas"}:                     newConvertor(flowSchemaColumns, cellsOf(flowSchemaCells)),
	{Group: "flowcontrol.apiserver.k8s.io", Resource: "prioritylevelconfigurations"}:     newConvertor(priorityLevelColumns, cellsOf(priorityLevelCells)),
	{Group: "networking.k8s.io", Resource: "ipaddresses"}:                                newConvertor(ipAddressColumns, cellsOf(ipAddressCells)),
	{Group: "networking.k8s.io", Resource: "servicecidrs"}:                               newConvertor(serviceCIDRColumns, cellsOf(serviceCIDRCells)),
	{Group: "admissionregistration.k8s.io", Resource: "mutatingadmissionpolicies"}:       newConvertor(mutatingPolicyColumns, cellsOf(mutatingPolicyCells)),
	{Group: "admissionregistration.k8s.io", Resource: "mutatingadmissionpolicybindings"}: newConvertor(mutatingPolicyBindingColumns, cellsOf(mutatingPolicyBindingCells)),

	// Served by default since kube 1.37.
	{Group: "certificates.k8s.io", Resource: "clustertrustbundles"}:          newConvertor(clusterTrustBundleColumns, cellsOf(clusterTrustBundleCells)),
	{Group: "certificates.k8s.io", Resource: "podcertificaterequests"}:       newConvertor(podCertificateRequestColumns, cellsOf(podCertificateRequestCells)),
	{Group: "resource.k8s.io", Resource: "devicetaintrules"}:                 newConvertor(deviceTaintRuleColumns, cellsOf(deviceTaintRuleCells)),
	{Group: "storagemigration.k8s.io", Resource: "storageversionmigrations"}: newConvertor(storageVersionMigrationColumns, cellsOf(storageVersionMigrationCells)),
}
