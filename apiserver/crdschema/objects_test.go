package crdschema

import (
	"context"
	"reflect"
	"testing"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
)

const validCronTab = `
apiVersion: stable.example.com/v1
kind: CronTab
metadata:
  name: nightly
  namespace: default
spec:
  cronSpec: "0 3 * * *"
  image: registry.example.com/backup:1.2
  replicas: 2
`

func TestDefaultNestedAndInsideArrays(t *testing.T) {
	v := compileVersion(t, loadCRD(t, "crontabs.yaml"), "v1")
	obj := object(t, `
apiVersion: stable.example.com/v1
kind: CronTab
metadata: {name: nightly, namespace: default}
spec:
  cronSpec: "0 3 * * *"
  image: backup
  resources:
    limits: {memory: 1Gi}
  containers:
  - name: main
  - name: sidecar
    pullPolicy: Always
`)
	v.Default(obj)
	spec := obj.Object["spec"].(map[string]any)
	for field, want := range map[string]any{"replicas": int64(1), "minReplicas": int64(0), "maxReplicas": int64(10), "concurrencyPolicy": "Allow"} {
		if got := spec[field]; got != want {
			t.Errorf("spec.%s = %#v, want %#v", field, got, want)
		}
	}
	wantLimits := map[string]any{"cpu": "500m", "memory": "1Gi"}
	if got := spec["resources"].(map[string]any)["limits"]; !reflect.DeepEqual(got, wantLimits) {
		t.Errorf("spec.resources.limits = %v, want %v", got, wantLimits)
	}
	containers := spec["containers"].([]any)
	if got := containers[0].(map[string]any)["pullPolicy"]; got != "IfNotPresent" {
		t.Errorf("containers[0].pullPolicy = %v, want the default IfNotPresent", got)
	}
	if got := containers[1].(map[string]any)["pullPolicy"]; got != "Always" {
		t.Errorf("containers[1].pullPolicy = %v, want the given Always", got)
	}

	// A default object ({}) is itself defaulted deeper down.
	empty := object(t, validCronTab)
	v.Default(empty)
	if got, _ := empty.Object["spec"].(map[string]any)["resources"].(map[string]any)["limits"].(map[string]any)["cpu"]; got != "500m" {
		t.Errorf("defaults below a defaulted {}: cpu = %v", got)
	}
}

func TestPruneUnknownFields(t *testing.T) {
	v := compileVersion(t, loadCRD(t, "crontabs.yaml"), "v1")
	obj := object(t, `
apiVersion: stable.example.com/v1
kind: CronTab
metadata:
  name: nightly
  namespace: default
  unknownMeta: x
spec:
  cronSpec: "0 3 * * *"
  image: backup
  foo: bar
  containers:
  - name: main
    bogus: 1
  config:
    anything: {goes: [1, 2]}
  template:
    apiVersion: v1
    kind: ConfigMap
    metadata:
      name: cm
      creationTimestamp: null
      notMeta: dropped
    data: {kept: "yes"}
  owner:
    apiVersion: v1
    kind: Secret
    metadata: {name: s}
    data: {k: v}
    extra: dropped
status:
  replicas: 1
  surprise: true
topLevel: 1
`)
	pruned, err := v.Prune(obj)
	if err != nil {
		t.Fatal(err)
	}
	want := []string{
		"metadata.unknownMeta",
		"spec.containers[0].bogus",
		"spec.foo",
		"spec.owner.extra",
		"status.surprise",
		"topLevel",
		"spec.template.metadata.notMeta",
	}
	if !sameSet(pruned, want) {
		t.Errorf("pruned = %q\nwant %q", pruned, want)
	}
	spec := obj.Object["spec"].(map[string]any)
	if _, ok := spec["foo"]; ok {
		t.Error("spec.foo survived pruning")
	}
	if !reflect.DeepEqual(spec["config"], map[string]any{"anything": map[string]any{"goes": []any{int64(1), int64(2)}}}) {
		t.Errorf("preserve-unknown-fields config was changed: %v", spec["config"])
	}
	template := spec["template"].(map[string]any)
	if template["data"] == nil || template["kind"] != "ConfigMap" {
		t.Errorf("embedded resource lost its content: %v", template)
	}
	if _, ok := template["metadata"].(map[string]any)["notMeta"]; ok {
		t.Error("unknown field in embedded metadata survived")
	}
	if obj.GetAPIVersion() != "stable.example.com/v1" || obj.GetKind() != "CronTab" || obj.GetName() != "nightly" {
		t.Errorf("type or object meta lost: %v", obj.Object)
	}
}

func TestPruneRejectsMalformedMetadataUnlessStored(t *testing.T) {
	v := compileVersion(t, loadCRD(t, "crontabs.yaml"), "v1")
	doc := `
apiVersion: stable.example.com/v1
kind: CronTab
metadata: {name: nightly, labels: {app: 5}}
spec: {cronSpec: "* * * * *", image: x}
`
	if _, err := v.Prune(object(t, doc)); err == nil {
		t.Error("Prune accepted a numeric label value")
	}
	stored := object(t, doc)
	if err := v.PruneStored(stored); err != nil {
		t.Fatal(err)
	}
	if stored.GetName() != "nightly" || len(stored.GetLabels()) != 0 {
		t.Errorf("PruneStored should drop the malformed labels only: %v", stored.Object["metadata"])
	}
}

func sameSet(a, b []string) bool {
	count := map[string]int{}
	for _, s := range a {
		count[s]++
	}
	for _, s := range b {
		count[s]--
	}
	for _, n := range count {
		if n != 0 {
			return false
		}
	}
	return true
}

func TestValidateSchemaErrors(t *testing.T) {
	v := compileVersion(t, loadCRD(t, "crontabs.yaml"), "v1")
	ctx := context.Background()

	valid := object(t, validCronTab)
	v.Default(valid)
	if errs := v.Validate(ctx, valid, nil); len(errs) > 0 {
		t.Fatalf("valid CronTab rejected: %v", errs.ToAggregate())
	}

	tests := []struct {
		name string
		doc  string
		want []string
	}{{
		name: "maximum",
		doc:  `{spec: {cronSpec: "* * * * *", image: x, replicas: 500, maxReplicas: 1000}}`,
		want: []string{`spec.replicas: Invalid value: 500: spec.replicas in body should be less than or equal to 100`},
	}, {
		name: "minimum",
		doc:  `{spec: {cronSpec: "* * * * *", image: x, replicas: -1, minReplicas: -5}}`,
		want: []string{
			`spec.replicas: Invalid value: -1: spec.replicas in body should be greater than or equal to 0`,
			// The scale subresource's own check, as kube reports it too.
			`.spec.replicas: Invalid value: -1: should be a non-negative integer`,
		},
	}, {
		name: "enum",
		doc:  `{spec: {cronSpec: "* * * * *", image: x, replicas: 1, concurrencyPolicy: Sometimes}}`,
		want: []string{
			`spec.concurrencyPolicy: Unsupported value: "Sometimes": supported values: "Allow", "Forbid", "Replace"`,
			`<nil>: Invalid value: null: some validation rules were not checked because the object was invalid; correct the existing errors to complete validation`,
		},
	}, {
		name: "pattern",
		doc:  `{spec: {cronSpec: "every day", image: x, replicas: 1}}`,
		want: []string{`spec.cronSpec: Invalid value: "every day": spec.cronSpec in body should match '^(\d+|\*)(/\d+)?(\s+(\d+|\*)(/\d+)?){4}$'`},
	}, {
		name: "required",
		doc:  `{spec: {cronSpec: "* * * * *", replicas: 1}}`,
		want: []string{
			`spec.image: Required value`,
			`<nil>: Invalid value: null: some validation rules were not checked because the object was invalid; correct the existing errors to complete validation`,
		},
	}, {
		name: "type",
		doc:  `{spec: {cronSpec: "* * * * *", image: x, replicas: "two"}}`,
		want: []string{
			`spec.replicas: Invalid value: "string": spec.replicas in body must be of type integer: "string"`,
			`.spec.replicas: Invalid value: 0: .spec.replicas accessor error: two is of the type string, expected int64`,
			`<nil>: Invalid value: null: some validation rules were not checked because the object was invalid; correct the existing errors to complete validation`,
		},
	}, {
		name: "int-or-string accepts both",
		doc:  `{spec: {cronSpec: "* * * * *", image: x, replicas: 1, port: http}}`,
	}, {
		name: "int-or-string rejects others",
		doc:  `{spec: {cronSpec: "* * * * *", image: x, replicas: 1, port: true}}`,
		want: []string{
			`spec.port: Invalid value: "boolean": spec.port in body must be of type integer,string: "boolean"`,
			`<nil>: Invalid value: "": "spec.port" must validate at least one schema (anyOf)`,
			`spec.port: Invalid value: "boolean": spec.port in body must be of type integer: "boolean"`,
			`<nil>: Invalid value: null: some validation rules were not checked because the object was invalid; correct the existing errors to complete validation`,
		},
	}, {
		name: "list-type map keys unique",
		doc:  `{spec: {cronSpec: "* * * * *", image: x, replicas: 1, containers: [{name: a}, {name: a}]}}`,
		want: []string{`spec.containers[1]: Duplicate value: {"name":"a"}`},
	}, {
		name: "list-type set unique",
		doc:  `{spec: {cronSpec: "* * * * *", image: x, replicas: 1, tags: [a, b, a]}}`,
		want: []string{`spec.tags[2]: Duplicate value: "a"`},
	}, {
		name: "embedded resource needs kind and apiVersion",
		doc:  `{spec: {cronSpec: "* * * * *", image: x, replicas: 1, template: {metadata: {name: x}}}}`,
		want: []string{
			`spec.template.apiVersion: Required value`,
			`spec.template.kind: Required value`,
			`<nil>: Invalid value: null: some validation rules were not checked because the object was invalid; correct the existing errors to complete validation`,
		},
	}, {
		name: "embedded resource name",
		doc:  `{spec: {cronSpec: "* * * * *", image: x, replicas: 1, owner: {apiVersion: v1, kind: Secret, metadata: {name: "bad/name"}}}}`,
		// Embedded names only need to be path segments, as in kube.
		want: []string{`spec.owner.metadata.name: Invalid value: "bad/name": may not contain '/'`},
	}, {
		name: "format date-time",
		doc:  `{spec: {cronSpec: "* * * * *", image: x, replicas: 1}, status: {lastScheduleTime: yesterday}}`,
		want: []string{
			`status.lastScheduleTime: Invalid value: "yesterday": status.lastScheduleTime in body must be of type date-time: "yesterday"`,
			`<nil>: Invalid value: null: some validation rules were not checked because the object was invalid; correct the existing errors to complete validation`,
		},
	}}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			obj := object(t, tt.doc)
			obj.SetAPIVersion("stable.example.com/v1")
			obj.SetKind("CronTab")
			obj.SetName("nightly")
			obj.SetNamespace("default")
			v.Default(obj)
			requireErrors(t, v.Validate(ctx, obj, nil), tt.want...)
		})
	}
}

func TestValidateObjectMetaAndTypeMeta(t *testing.T) {
	v := compileVersion(t, loadCRD(t, "crontabs.yaml"), "v1")
	obj := object(t, validCronTab)
	v.Default(obj)
	obj.SetName("Nightly_Backup")
	requireErrors(t, v.Validate(context.Background(), obj, nil),
		`metadata.name: Invalid value: "Nightly_Backup": a lowercase RFC 1123 subdomain must consist of lower case alphanumeric characters, '-' or '.', and must start and end with an alphanumeric character (e.g. 'example.com', regex used for validation is '[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*')`)

	obj = object(t, validCronTab)
	v.Default(obj)
	obj.SetNamespace("")
	requireErrors(t, v.Validate(context.Background(), obj, nil), `metadata.namespace: Required value`, `<nil>: Invalid value: null: some validation rules were not checked because the object was invalid; correct the existing errors to complete validation`)

	obj = object(t, validCronTab)
	obj.SetAPIVersion("stable.example.com/v2")
	requireErrors(t, v.Validate(context.Background(), obj, nil), `apiVersion: Invalid value: "stable.example.com/v2": must be stable.example.com/v1`)
}

func TestValidateCELRules(t *testing.T) {
	v := compileVersion(t, loadCRD(t, "crontabs.yaml"), "v1")
	ctx := context.Background()
	newObj := func(spec string) *cronTab {
		obj := object(t, validCronTab)
		extra := object(t, spec)
		for k, val := range extra.Object {
			obj.Object["spec"].(map[string]any)[k] = val
		}
		v.Default(obj)
		obj.SetResourceVersion("7")
		return &cronTab{obj}
	}

	t.Run("message", func(t *testing.T) {
		obj := newObj(`{replicas: 1, minReplicas: 3}`)
		requireErrors(t, v.Validate(ctx, obj.u, nil),
			`spec: Invalid value: replicas should be greater than or equal to minReplicas`)
	})
	t.Run("messageExpression", func(t *testing.T) {
		obj := newObj(`{replicas: 20, maxReplicas: 5}`)
		requireErrors(t, v.Validate(ctx, obj.u, nil),
			`spec: Invalid value: replicas exceeds maxReplicas for image registry.example.com/backup:1.2`)
	})
	t.Run("transition rule with oldSelf", func(t *testing.T) {
		old := newObj(`{version: "1.4"}`)
		downgrade := newObj(`{version: "1.3"}`)
		requireErrors(t, v.Validate(ctx, downgrade.u, old.u),
			`spec.version: Invalid value: "1.3": version may only increase`)
		upgrade := newObj(`{version: "1.5"}`)
		requireErrors(t, v.Validate(ctx, upgrade.u, old.u))
		// On create there is no oldSelf: transition rules do not run.
		requireErrors(t, v.Validate(ctx, downgrade.u, nil))
	})
	t.Run("optional oldSelf in an object rule", func(t *testing.T) {
		old := newObj(`{}`)
		changed := newObj(`{image: other}`)
		requireErrors(t, v.Validate(ctx, changed.u, old.u),
			`spec: Invalid value: image is immutable unless allowImageChange is set`)
		allowed := newObj(`{image: other, allowImageChange: true}`)
		requireErrors(t, v.Validate(ctx, allowed.u, old.u))
	})
	t.Run("ratcheting keeps unchanged invalid values", func(t *testing.T) {
		old := newObj(`{replicas: 1, minReplicas: 3}`)
		sameButRelabelled := newObj(`{replicas: 1, minReplicas: 3}`)
		sameButRelabelled.u.SetLabels(map[string]string{"touched": "yes"})
		requireErrors(t, v.Validate(ctx, sameButRelabelled.u, old.u))
	})
}

type cronTab struct{ u *unstructured.Unstructured }
