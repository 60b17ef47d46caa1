// Package crdgen generates CRDs for tests and benchmarks shaped like a
// cloud provider's, as maps (for kubectl, Manifest) or typed.
package crdgen

import (
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"strings"

	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
)

// ProviderCRDs returns Provider(n, seed) typed; not defaulted.
func ProviderCRDs(n int, seed uint64) []*apiextensionsv1.CustomResourceDefinition {
	out := make([]*apiextensionsv1.CustomResourceDefinition, n)
	for i, m := range Provider(n, seed) {
		data, err := json.Marshal(m)
		if err != nil {
			panic(err)
		}
		crd := &apiextensionsv1.CustomResourceDefinition{}
		if err := json.Unmarshal(data, crd); err != nil {
			panic(err)
		}
		out[i] = crd
	}
	return out
}

// Provider generates n CRDs shaped like the ones cloud-provider packages
// generate (Crossplane's upjet providers, ACK, Config Connector): groups of
// about ten kinds, two versions with a ~50 KB schema each (forProvider,
// initProvider and atProvider trees with long descriptions, references and
// selectors to other resources, management policies, conditions), four
// printer columns, both scopes, and CEL rules on every third kind. The same
// n and seed always give the same CRDs.
func Provider(n int, seed uint64) []map[string]any {
	out := make([]map[string]any, n)
	for i := range n {
		g := &crdGen{r: rand.New(rand.NewPCG(seed, uint64(i)))}
		out[i] = g.crd(i)
	}
	return out
}

type crdGen struct{ r *rand.Rand }

var genWords = strings.Fields(`the of a to and resource instance configuration value
	name identifier provider cloud region zone network subnet policy rule access key secret account storage
	bucket volume disk snapshot backup encryption certificate endpoint address port protocol target group
	listener route table gateway interface security role permission principal service cluster node pool
	version engine parameter option setting schedule window retention period maximum minimum number of days
	hours when is set enabled disabled must be specified if only one can this field that which will used for
	by default in on with from as are or not any each all list map set tags applied updated created deleted`)

func (g *crdGen) word() string { return genWords[g.r.IntN(len(genWords))] }

// sentence is a description of 12–40 words, as generated docs are.
func (g *crdGen) sentence() string {
	n := 12 + g.r.IntN(29)
	w := make([]string, n)
	for i := range w {
		w[i] = g.word()
	}
	w[0] = strings.ToUpper(w[0][:1]) + w[0][1:]
	return strings.Join(w, " ") + "."
}

func (g *crdGen) fieldName() string {
	n := 1 + g.r.IntN(3)
	var sb strings.Builder
	for i := range n {
		w := g.word()
		if i > 0 {
			w = strings.ToUpper(w[:1]) + w[1:]
		}
		sb.WriteString(w)
	}
	return sb.String()
}

func (g *crdGen) describe(s map[string]any) map[string]any {
	s["description"] = g.sentence()
	return s
}

// params is a provider's parameter block: scalars, lists, maps, nested
// blocks, and a reference + selector pair for some string fields.
func (g *crdGen) params(depth, fields int) map[string]any {
	props := map[string]any{}
	for len(props) < fields {
		name := g.fieldName()
		if _, dup := props[name]; dup {
			continue
		}
		switch k := g.r.IntN(10); {
		case k < 3:
			props[name] = g.describe(map[string]any{"type": "string"})
		case k == 3:
			props[name] = g.describe(map[string]any{"type": "number"})
		case k == 4:
			props[name] = g.describe(map[string]any{"type": "boolean"})
		case k == 5:
			props[name] = g.describe(map[string]any{"type": "array", "items": map[string]any{"type": "string"}, "x-kubernetes-list-type": "set"})
		case k == 6:
			props[name] = g.describe(map[string]any{"type": "object", "additionalProperties": map[string]any{"type": "string"},
				"x-kubernetes-map-type": "granular"})
		case k == 7 && depth < 2:
			props[name] = g.describe(map[string]any{"type": "array", "items": g.params(depth+1, 3+g.r.IntN(6))})
		case k == 8 && depth < 2:
			props[name] = g.describe(g.params(depth+1, 3+g.r.IntN(6)))
		default:
			props[name] = g.describe(map[string]any{"type": "string"})
			props[name+"Ref"] = g.describe(reference())
			props[name+"Selector"] = g.describe(selector())
		}
	}
	return map[string]any{"type": "object", "properties": props}
}

func resolutionPolicy() map[string]any {
	return map[string]any{"type": "object", "description": "Policies for referencing.", "properties": map[string]any{
		"resolution": map[string]any{"type": "string", "default": "Required", "enum": []any{"Required", "Optional"},
			"description": "Resolution specifies whether resolution of this reference is required."},
		"resolve": map[string]any{"type": "string", "enum": []any{"Always", "IfNotPresent"},
			"description": "Resolve specifies when this reference should be resolved."},
	}}
}

func reference() map[string]any {
	return map[string]any{"type": "object", "required": []any{"name"}, "properties": map[string]any{
		"name":   map[string]any{"type": "string", "description": "Name of the referenced object."},
		"policy": resolutionPolicy(),
	}}
}

func selector() map[string]any {
	return map[string]any{"type": "object", "properties": map[string]any{
		"matchControllerRef": map[string]any{"type": "boolean", "description": "MatchControllerRef ensures an object with the same controller reference as the selecting object is selected."},
		"matchLabels": map[string]any{"type": "object", "additionalProperties": map[string]any{"type": "string"},
			"description": "MatchLabels ensures an object with matching labels is selected."},
		"policy": resolutionPolicy(),
	}}
}

func conditions() map[string]any {
	str := func(d string) map[string]any { return map[string]any{"type": "string", "description": d} }
	return map[string]any{"type": "array", "description": "Conditions of the resource.",
		"x-kubernetes-list-type": "map", "x-kubernetes-list-map-keys": []any{"type"},
		"items": map[string]any{"type": "object", "required": []any{"lastTransitionTime", "reason", "status", "type"},
			"description": "A Condition that may apply to a resource.",
			"properties": map[string]any{
				"lastTransitionTime": map[string]any{"type": "string", "format": "date-time",
					"description": "LastTransitionTime is the last time this condition transitioned from one status to another."},
				"message":            str("A Message containing details about this condition's last transition from one status to another, if any."),
				"observedGeneration": map[string]any{"type": "integer", "format": "int64", "description": "ObservedGeneration represents the .metadata.generation that the condition was set based upon."},
				"reason":             str("A Reason for this condition's last transition from one status to another."),
				"status":             str("Status of this condition; is it currently True, False, or Unknown?"),
				"type":               str("Type of this condition. At most one of each condition type may apply to a resource at any point in time."),
			}}}
}

// schema is one version's openAPIV3Schema.
func (g *crdGen) schema(kind string, cel bool) map[string]any {
	forProvider := g.params(0, 8+g.r.IntN(4))
	// Like upjet's providers: region is required unless only observed (CEL).
	forProvider["properties"].(map[string]any)["region"] = map[string]any{"type": "string", "description": "Region is the region you'd like your resource to be created in."}
	initProvider := map[string]any{"type": "object", "properties": forProvider["properties"],
		"description": "THIS IS A BETA FIELD. It will be honored unless the Management Policies feature flag is disabled. InitProvider holds the same fields as ForProvider, with the exception of Identifier and other resource reference fields."}
	atProvider := g.params(0, 5+g.r.IntN(3))
	atProvider["properties"].(map[string]any)["id"] = map[string]any{"type": "string", "description": "The provider's identifier of the resource."}
	spec := map[string]any{
		"type":        "object",
		"description": kind + "Spec defines the desired state of " + kind,
		"required":    []any{"forProvider"},
		"properties": map[string]any{
			"deletionPolicy": map[string]any{"type": "string", "default": "Delete", "enum": []any{"Orphan", "Delete"},
				"description": "DeletionPolicy specifies what will happen to the underlying external when this managed resource is deleted."},
			"forProvider":  g.describe(forProvider),
			"initProvider": initProvider,
			"managementPolicies": map[string]any{"type": "array", "default": []any{"*"},
				"description": "THIS IS A BETA FIELD. ManagementPolicies specify the array of actions Crossplane is allowed to take on the managed and external resources.",
				"items":       map[string]any{"type": "string", "enum": []any{"Observe", "Create", "Update", "Delete", "LateInitialize", "*"}}},
			"providerConfigRef": map[string]any{"type": "object", "default": map[string]any{"name": "default"},
				"description": "ProviderConfigReference specifies how the provider that will be used to create, observe, update, and delete this managed resource should be configured.",
				"required":    []any{"name"},
				"properties": map[string]any{"name": map[string]any{"type": "string", "description": "Name of the referenced object."},
					"policy": resolutionPolicy()}},
			"writeConnectionSecretToRef": map[string]any{"type": "object", "required": []any{"name", "namespace"},
				"description": "WriteConnectionSecretToReference specifies the namespace and name of a Secret to which any connection details for this managed resource should be written.",
				"properties": map[string]any{
					"name":      map[string]any{"type": "string", "description": "Name of the secret."},
					"namespace": map[string]any{"type": "string", "description": "Namespace of the secret."}}},
		},
	}
	if cel {
		spec["x-kubernetes-validations"] = []any{map[string]any{
			"message": "spec.forProvider.region is a required parameter",
			"rule":    "!('*' in self.managementPolicies || 'Create' in self.managementPolicies || 'Update' in self.managementPolicies) || has(self.forProvider.region) || (has(self.initProvider) && has(self.initProvider.region))",
		}}
	}
	return map[string]any{
		"type":        "object",
		"description": kind + " is the Schema for the " + kind + "s API. " + g.sentence(),
		"required":    []any{"spec"},
		"properties": map[string]any{
			"apiVersion": map[string]any{"type": "string", "description": "APIVersion defines the versioned schema of this representation of an object."},
			"kind":       map[string]any{"type": "string", "description": "Kind is a string value representing the REST resource this object represents."},
			"metadata":   map[string]any{"type": "object"},
			"spec":       spec,
			"status": map[string]any{"type": "object", "description": kind + "Status defines the observed state of " + kind + ".",
				"properties": map[string]any{
					"atProvider":         atProvider,
					"conditions":         conditions(),
					"observedGeneration": map[string]any{"type": "integer", "format": "int64", "description": "ObservedGeneration is the latest metadata.generation which resulted in either a ready state, or stalled due to error it can not recover from without human intervention."},
				}},
		},
	}
}

var printerColumns = []any{
	map[string]any{"name": "READY", "type": "string", "jsonPath": ".status.conditions[?(@.type=='Ready')].status"},
	map[string]any{"name": "SYNCED", "type": "string", "jsonPath": ".status.conditions[?(@.type=='Synced')].status"},
	map[string]any{"name": "EXTERNAL-NAME", "type": "string", "jsonPath": ".metadata.annotations.crossplane\\.io/external-name"},
	map[string]any{"name": "AGE", "type": "date", "jsonPath": ".metadata.creationTimestamp"},
}

// Group is the group of the i-th generated CRD: ten kinds a group.
func Group(i int) string { return fmt.Sprintf("svc%02d.provider.example.io", i/10) }

// Kind is the i-th generated CRD's kind; its plural is lowercase + "s".
func Kind(i int) string { return fmt.Sprintf("Resource%03d", i) }

func (g *crdGen) crd(i int) map[string]any {
	kind := Kind(i)
	plural := strings.ToLower(kind) + "s"
	group := Group(i)
	scope := "Cluster"
	if i%2 == 1 {
		scope = "Namespaced"
	}
	cel := i%3 == 0
	version := func(name string, storage bool) map[string]any {
		return map[string]any{
			"name": name, "served": true, "storage": storage,
			"subresources":             map[string]any{"status": map[string]any{}},
			"additionalPrinterColumns": printerColumns,
			"schema":                   map[string]any{"openAPIV3Schema": g.schema(kind, cel)},
		}
	}
	return map[string]any{
		"apiVersion": "apiextensions.k8s.io/v1",
		"kind":       "CustomResourceDefinition",
		"metadata": map[string]any{"name": plural + "." + group,
			"annotations": map[string]any{"controller-gen.kubebuilder.io/version": "v0.16.0"}},
		"spec": map[string]any{
			"group": group,
			"scope": scope,
			"names": map[string]any{"kind": kind, "listKind": kind + "List", "plural": plural, "singular": strings.ToLower(kind),
				"categories": []any{"crossplane", "managed", "provider"}},
			"versions": []any{version("v1beta1", false), version("v1beta2", true)},
		},
	}
}

// Manifest joins CRDs into one multi-document stream for kubectl apply -f
// (each document is JSON, which is YAML).
func Manifest(crds []map[string]any) []byte {
	var sb strings.Builder
	for _, c := range crds {
		b, err := json.Marshal(c)
		if err != nil {
			panic(err)
		}
		sb.WriteString("---\n")
		sb.Write(b)
		sb.WriteString("\n")
	}
	return []byte(sb.String())
}
