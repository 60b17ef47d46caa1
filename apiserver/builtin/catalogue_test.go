package builtin

import (
	"testing"

	"k8s.io/apimachinery/pkg/runtime/schema"
)

func TestKindsCoverEveryResource(t *testing.T) {
	type want struct {
		namespaced, hasStatus, scale bool
		shortNames                   string
	}
	expected := map[schema.GroupVersionResource]want{
		{Version: "v1", Resource: "namespaces"}:                                                               {false, true, false, "ns"},
		{Version: "v1", Resource: "configmaps"}:                                                               {true, false, false, "cm"},
		{Version: "v1", Resource: "secrets"}:                                                                  {true, false, false, ""},
		{Version: "v1", Resource: "services"}:                                                                 {true, true, false, "svc"},
		{Version: "v1", Resource: "serviceaccounts"}:                                                          {true, false, false, "sa"},
		{Version: "v1", Resource: "pods"}:                                                                     {true, true, false, "po"},
		{Version: "v1", Resource: "podtemplates"}:                                                             {true, false, false, ""},
		{Version: "v1", Resource: "events"}:                                                                   {true, false, false, "ev"},
		{Version: "v1", Resource: "endpoints"}:                                                                {true, false, false, "ep"},
		{Version: "v1", Resource: "nodes"}:                                                                    {false, true, false, "no"},
		{Version: "v1", Resource: "persistentvolumes"}:                                                        {false, true, false, "pv"},
		{Version: "v1", Resource: "persistentvolumeclaims"}:                                                   {true, true, false, "pvc"},
		{Version: "v1", Resource: "limitranges"}:                                                              {true, false, false, "limits"},
		{Version: "v1", Resource: "resourcequotas"}:                                                           {true, true, false, "quota"},
		{Version: "v1", Resource: "replicationcontrollers"}:                                                   {true, true, true, "rc"},
		{Group: "apps", Version: "v1", Resource: "deployments"}:                                               {true, true, true, "deploy"},
		{Group: "apps", Version: "v1", Resource: "replicasets"}:                                               {true, true, true, "rs"},
		{Group: "apps", Version: "v1", Resource: "statefulsets"}:                                              {true, true, true, "sts"},
		{Group: "apps", Version: "v1", Resource: "daemonsets"}:                                                {true, true, false, "ds"},
		{Group: "apps", Version: "v1", Resource: "controllerrevisions"}:                                       {true, false, false, ""},
		{Group: "batch", Version: "v1", Resource: "jobs"}:                                                     {true, true, false, ""},
		{Group: "batch", Version: "v1", Resource: "cronjobs"}:                                                 {true, true, false, "cj"},
		{Group: "autoscaling", Version: "v1", Resource: "horizontalpodautoscalers"}:                           {true, true, false, "hpa"},
		{Group: "autoscaling", Version: "v2", Resource: "horizontalpodautoscalers"}:                           {true, true, false, "hpa"},
		{Group: "coordination.k8s.io", Version: "v1", Resource: "leases"}:                                     {true, false, false, ""},
		{Group: "events.k8s.io", Version: "v1", Resource: "events"}:                                           {true, false, false, "ev"},
		{Group: "discovery.k8s.io", Version: "v1", Resource: "endpointslices"}:                                {true, false, false, ""},
		{Group: "networking.k8s.io", Version: "v1", Resource: "ingresses"}:                                    {true, true, false, "ing"},
		{Group: "networking.k8s.io", Version: "v1", Resource: "ingressclasses"}:                               {false, false, false, ""},
		{Group: "networking.k8s.io", Version: "v1", Resource: "networkpolicies"}:                              {true, false, false, "netpol"},
		{Group: "policy", Version: "v1", Resource: "poddisruptionbudgets"}:                                    {true, true, false, "pdb"},
		{Group: "rbac.authorization.k8s.io", Version: "v1", Resource: "roles"}:                                {true, false, false, ""},
		{Group: "rbac.authorization.k8s.io", Version: "v1", Resource: "rolebindings"}:                         {true, false, false, ""},
		{Group: "rbac.authorization.k8s.io", Version: "v1", Resource: "clusterroles"}:                         {false, false, false, ""},
		{Group: "rbac.authorization.k8s.io", Version: "v1", Resource: "clusterrolebindings"}:                  {false, false, false, ""},
		{Group: "storage.k8s.io", Version: "v1", Resource: "storageclasses"}:                                  {false, false, false, "sc"},
		{Group: "storage.k8s.io", Version: "v1", Resource: "csidrivers"}:                                      {false, false, false, ""},
		{Group: "storage.k8s.io", Version: "v1", Resource: "csinodes"}:                                        {false, true, false, ""},
		{Group: "storage.k8s.io", Version: "v1", Resource: "volumeattachments"}:                               {false, true, false, ""},
		{Group: "scheduling.k8s.io", Version: "v1", Resource: "priorityclasses"}:                              {false, false, false, "pc"},
		{Group: "node.k8s.io", Version: "v1", Resource: "runtimeclasses"}:                                     {false, false, false, ""},
		{Group: "admissionregistration.k8s.io", Version: "v1", Resource: "mutatingwebhookconfigurations"}:     {false, false, false, ""},
		{Group: "admissionregistration.k8s.io", Version: "v1", Resource: "validatingwebhookconfigurations"}:   {false, false, false, ""},
		{Group: "admissionregistration.k8s.io", Version: "v1", Resource: "validatingadmissionpolicies"}:       {false, true, false, ""},
		{Group: "admissionregistration.k8s.io", Version: "v1", Resource: "validatingadmissionpolicybindings"}: {false, false, false, ""},
		{Group: "certificates.k8s.io", Version: "v1", Resource: "certificatesigningrequests"}:                 {false, true, false, "csr"},
		{Group: "resource.k8s.io", Version: "v1", Resource: "deviceclasses"}:                                  {false, false, false, ""},
		{Group: "resource.k8s.io", Version: "v1", Resource: "resourceclaims"}:                                 {true, true, false, ""},
		{Group: "resource.k8s.io", Version: "v1", Resource: "resourceclaimtemplates"}:                         {true, false, false, ""},
		{Group: "resource.k8s.io", Version: "v1", Resource: "resourceslices"}:                                 {false, false, false, ""},
		{Group: "storage.k8s.io", Version: "v1", Resource: "csistoragecapacities"}:                            {true, false, false, ""},
		{Group: "storage.k8s.io", Version: "v1", Resource: "volumeattributesclasses"}:                         {false, false, false, "vac"},
		{Group: "flowcontrol.apiserver.k8s.io", Version: "v1", Resource: "flowschemas"}:                       {false, true, false, ""},
		{Group: "flowcontrol.apiserver.k8s.io", Version: "v1", Resource: "prioritylevelconfigurations"}:       {false, true, false, ""},
		{Group: "networking.k8s.io", Version: "v1", Resource: "ipaddresses"}:                                  {false, false, false, "ip"},
		{Group: "networking.k8s.io", Version: "v1", Resource: "servicecidrs"}:                                 {false, true, false, ""},
		{Group: "admissionregistration.k8s.io", Version: "v1", Resource: "mutatingadmissionpolicies"}:         {false, false, false, ""},
		{Group: "admissionregistration.k8s.io", Version: "v1", Resource: "mutatingadmissionpolicybindings"}:   {false, false, false, ""},
		{Group: "certificates.k8s.io", Version: "v1", Resource: "clustertrustbundles"}:                        {false, false, false, ""},
		{Group: "certificates.k8s.io", Version: "v1", Resource: "podcertificaterequests"}:                     {true, true, false, ""},
		{Group: "resource.k8s.io", Version: "v1", Resource: "devicetaintrules"}:                               {false, true, false, ""},
		{Group: "storagemigration.k8s.io", Version: "v1", Resource: "storageversionmigrations"}:               {false, true, false, ""},
	}
	kinds := Kinds()
	if len(kinds) != len(expected) {
		t.Errorf("Kinds() has %d entries, want %d", len(kinds), len(expected))
	}
	prefixes := map[string]string{}
	for _, k := range kinds {
		gvr := k.GroupVersion.WithResource(k.Resource)
		w, ok := expected[gvr]
		if !ok {
			t.Errorf("unexpected kind %v", gvr)
			continue
		}
		delete(expected, gvr)
		short := ""
		if len(k.ShortNames) > 0 {
			short = k.ShortNames[0]
		}
		if k.Namespaced != w.namespaced || k.HasStatus != w.hasStatus || (k.Scale != nil) != w.scale || short != w.shortNames {
			t.Errorf("%v: namespaced=%v hasStatus=%v scale=%v short=%q, want %+v", gvr, k.Namespaced, k.HasStatus, k.Scale != nil, short, w)
		}
		if got, ok := Lookup(gvr); !ok || got.Kind != k.Kind {
			t.Errorf("Lookup(%v) = %q, %v", gvr, got.Kind, ok)
		}
		if other, dup := prefixes[k.StoragePrefix]; dup {
			t.Errorf("%v and %s share storage prefix %s", gvr, other, k.StoragePrefix)
		}
		prefixes[k.StoragePrefix] = gvr.String()
		if k.New == nil || k.NewList == nil || k.Default == nil || k.Validate == nil || k.ValidateUpdate == nil || k.Fields == nil {
			t.Errorf("%v: missing behaviour func", gvr)
		}
		if k.ListKind != k.Kind+"List" {
			t.Errorf("%v: ListKind %q", gvr, k.ListKind)
		}
	}
	for gvr := range expected {
		t.Errorf("missing kind %v", gvr)
	}
	if _, ok := Lookup(schema.GroupVersionResource{Group: "apps", Version: "v1", Resource: "nope"}); ok {
		t.Error("Lookup found a resource that does not exist")
	}
}

func TestCatalogueDetails(t *testing.T) {
	deploy, _ := Lookup(schema.GroupVersionResource{Group: "apps", Version: "v1", Resource: "deployments"})
	if deploy.Kind != "Deployment" || deploy.Singular != "deployment" || deploy.StoragePrefix != "/registry/apps/deployments" {
		t.Errorf("deployments: %q %q %q", deploy.Kind, deploy.Singular, deploy.StoragePrefix)
	}
	if len(deploy.Categories) != 1 || deploy.Categories[0] != "all" {
		t.Errorf("deployments categories %v", deploy.Categories)
	}
	cm, _ := Lookup(schema.GroupVersionResource{Version: "v1", Resource: "configmaps"})
	if cm.StoragePrefix != "/registry/configmaps" || len(cm.Categories) != 0 {
		t.Errorf("configmaps: %q %v", cm.StoragePrefix, cm.Categories)
	}
	hook, _ := Lookup(schema.GroupVersionResource{Group: "admissionregistration.k8s.io", Version: "v1", Resource: "validatingwebhookconfigurations"})
	if len(hook.Categories) != 1 || hook.Categories[0] != "api-extensions" {
		t.Errorf("webhook categories %v", hook.Categories)
	}
}

// TestGenerationRulesNameServedKinds guards the generation table against
// a misspelt resource (which would silently keep no generation).
func TestGenerationRulesNameServedKinds(t *testing.T) {
	served := map[schema.GroupResource]bool{}
	for _, k := range Kinds() {
		served[k.GroupVersion.WithResource(k.Resource).GroupResource()] = true
	}
	for gr := range generationRules {
		if !served[gr] {
			t.Errorf("generation rule for %v, which is not served", gr)
		}
	}
	for _, k := range Kinds() {
		gr := k.GroupVersion.WithResource(k.Resource).GroupResource()
		want := gr.Resource == "deployments" || gr.Resource == "pods" || gr.Resource == "horizontalpodautoscalers"
		if want && !k.GenerationOnCreate {
			t.Errorf("%v must set generation on create", gr)
		}
		for _, none := range []string{"configmaps", "secrets", "services", "namespaces", "serviceaccounts", "events", "leases"} {
			if gr.Resource == none && (k.GenerationOnCreate || k.GenerationChanged != nil) {
				t.Errorf("%v must keep no generation", gr)
			}
		}
	}
}
