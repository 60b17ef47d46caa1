package builtin

import (
	"strings"
	"testing"

	admissionregistrationv1 "k8s.io/api/admissionregistration/v1"
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/util/intstr"
	"k8s.io/apimachinery/pkg/util/validation/field"
)

func kindFor(t *testing.T, group, resource string) Kind {
	t.Helper()
	k, ok := Lookup(schema.GroupVersionResource{Group: group, Version: "v1", Resource: resource})
	if !ok {
		t.Fatalf("no kind %s/%s", group, resource)
	}
	return k
}

// createErrors defaults and validates obj as the REST layer does on create.
func createErrors(t *testing.T, group, resource string, obj runtime.Object) field.ErrorList {
	t.Helper()
	k := kindFor(t, group, resource)
	k.Default(obj)
	return k.Validate(obj)
}

// expectOneError asserts errs is exactly one error of the given type and
// field whose message contains detail.
func expectOneError(t *testing.T, errs field.ErrorList, typ field.ErrorType, fieldPath, detail string) {
	t.Helper()
	if len(errs) != 1 {
		t.Fatalf("want one error, got %d: %v", len(errs), errs)
	}
	e := errs[0]
	if e.Type != typ || e.Field != fieldPath || !strings.Contains(e.Error(), detail) {
		t.Errorf("got %q (type %s, field %s), want type %s field %s containing %q", e.Error(), e.Type, e.Field, typ, fieldPath, detail)
	}
}

func objectMeta(name string) metav1.ObjectMeta {
	return metav1.ObjectMeta{Name: name, Namespace: "default", ResourceVersion: "1"}
}

func validDeployment() *appsv1.Deployment {
	return &appsv1.Deployment{
		ObjectMeta: objectMeta("web"),
		Spec: appsv1.DeploymentSpec{
			Selector: &metav1.LabelSelector{MatchLabels: map[string]string{"app": "web"}},
			Template: corev1.PodTemplateSpec{
				ObjectMeta: metav1.ObjectMeta{Labels: map[string]string{"app": "web"}},
				Spec:       corev1.PodSpec{Containers: []corev1.Container{{Name: "web", Image: "nginx:1.27", Ports: []corev1.ContainerPort{{ContainerPort: 80}}}}},
			},
		},
	}
}

func TestValidObjectsPass(t *testing.T) {
	if errs := createErrors(t, "apps", "deployments", validDeployment()); len(errs) != 0 {
		t.Errorf("valid deployment: %v", errs)
	}
	svc := &corev1.Service{ObjectMeta: objectMeta("web"), Spec: corev1.ServiceSpec{Selector: map[string]string{"app": "web"}, Ports: []corev1.ServicePort{{Port: 80}}}}
	if errs := createErrors(t, "", "services", svc); len(errs) != 0 {
		t.Errorf("valid service: %v", errs)
	}
	ns := &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: "team-a"}}
	if errs := createErrors(t, "", "namespaces", ns); len(errs) != 0 {
		t.Errorf("valid namespace: %v", errs)
	}
	role := &rbacv1.ClusterRole{ObjectMeta: metav1.ObjectMeta{Name: "system:reader"}, Rules: []rbacv1.PolicyRule{{Verbs: []string{"get"}, APIGroups: []string{""}, Resources: []string{"pods"}}}}
	if errs := createErrors(t, "rbac.authorization.k8s.io", "clusterroles", role); len(errs) != 0 {
		t.Errorf("valid clusterrole with a path-segment name: %v", errs)
	}
}

func TestBadConfigMapName(t *testing.T) {
	errs := createErrors(t, "", "configmaps", &corev1.ConfigMap{ObjectMeta: objectMeta("Bad_Name")})
	expectOneError(t, errs, field.ErrorTypeInvalid, "metadata.name",
		`metadata.name: Invalid value: "Bad_Name": a lowercase RFC 1123 subdomain must consist of lower case alphanumeric characters, '-' or '.', and must start and end with an alphanumeric character`)
}

func TestNamespaceAndServiceNamesAreLabels(t *testing.T) {
	errs := createErrors(t, "", "namespaces", &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: "a.b"}})
	expectOneError(t, errs, field.ErrorTypeInvalid, "metadata.name", `Invalid value: "a.b": must not contain dots`)
	svc := &corev1.Service{ObjectMeta: objectMeta("1web"), Spec: corev1.ServiceSpec{Ports: []corev1.ServicePort{{Port: 80}}}}
	expectOneError(t, createErrors(t, "", "services", svc), field.ErrorTypeInvalid, "metadata.name", "a DNS-1035 label must consist of lower case alphanumeric characters")
}

func TestSelectorMismatch(t *testing.T) {
	d := validDeployment()
	d.Spec.Template.Labels = map[string]string{"app": "other"}
	expectOneError(t, createErrors(t, "apps", "deployments", d), field.ErrorTypeInvalid, "spec.template.metadata.labels",
		// apimachinery v0.37 renders values as JSON, as current kube does.
		"spec.template.metadata.labels: Invalid value: {\"app\":\"other\"}: `selector` does not match template `labels`")

	d = validDeployment()
	d.Spec.Selector = nil
	expectOneError(t, createErrors(t, "apps", "deployments", d), field.ErrorTypeRequired, "spec.selector", "Required value")
}

func TestContainerErrors(t *testing.T) {
	d := validDeployment()
	d.Spec.Template.Spec.InitContainers = []corev1.Container{{Name: "web", Image: "busybox"}}
	expectOneError(t, createErrors(t, "apps", "deployments", d), field.ErrorTypeDuplicate, "spec.template.spec.containers[0].name", `Duplicate value: "web"`)

	d = validDeployment()
	d.Spec.Template.Spec.Containers[0].Image = ""
	expectOneError(t, createErrors(t, "apps", "deployments", d), field.ErrorTypeRequired, "spec.template.spec.containers[0].image", "Required value")

	d = validDeployment()
	d.Spec.Template.Spec.Containers[0].Ports[0].ContainerPort = 70000
	expectOneError(t, createErrors(t, "apps", "deployments", d), field.ErrorTypeInvalid, "spec.template.spec.containers[0].ports[0].containerPort",
		"Invalid value: 70000: must be between 1 and 65535, inclusive")

	d = validDeployment()
	d.Spec.Template.Spec.Containers[0].Ports[0].Protocol = "HTTP"
	expectOneError(t, createErrors(t, "apps", "deployments", d), field.ErrorTypeNotSupported, "spec.template.spec.containers[0].ports[0].protocol",
		`Unsupported value: "HTTP": supported values: "SCTP", "TCP", "UDP"`)

	d = validDeployment()
	d.Spec.Template.Spec.RestartPolicy = corev1.RestartPolicyNever
	expectOneError(t, createErrors(t, "apps", "deployments", d), field.ErrorTypeNotSupported, "spec.template.spec.restartPolicy", `supported values: "Always"`)

	pod := &corev1.Pod{ObjectMeta: objectMeta("p")}
	expectOneError(t, createErrors(t, "", "pods", pod), field.ErrorTypeRequired, "spec.containers", "Required value")
}

func TestDeploymentStrategyAndReplicas(t *testing.T) {
	d := validDeployment()
	zero := intstr.FromInt32(0)
	d.Spec.Strategy.RollingUpdate = &appsv1.RollingUpdateDeployment{MaxUnavailable: &zero, MaxSurge: &zero}
	expectOneError(t, createErrors(t, "apps", "deployments", d), field.ErrorTypeInvalid, "spec.strategy.rollingUpdate.maxUnavailable", "may not be 0 when `maxSurge` is 0")

	d = validDeployment()
	d.Spec.Replicas = ptrTo[int32](-1)
	expectOneError(t, createErrors(t, "apps", "deployments", d), field.ErrorTypeInvalid, "spec.replicas", "must be greater than or equal to 0")
}

func TestImmutableConfigMap(t *testing.T) {
	k := kindFor(t, "", "configmaps")
	old := &corev1.ConfigMap{ObjectMeta: objectMeta("cfg"), Immutable: ptrTo(true), Data: map[string]string{"a": "1"}}
	updated := old.DeepCopy()
	updated.Data["a"] = "2"
	expectOneError(t, k.ValidateUpdate(updated, old), field.ErrorTypeForbidden, "data", "Forbidden: field is immutable when `immutable` is set")

	same := old.DeepCopy()
	same.Labels = map[string]string{"x": "y"}
	if errs := k.ValidateUpdate(same, old); len(errs) != 0 {
		t.Errorf("metadata changes on an immutable configmap are allowed: %v", errs)
	}
	mutable := old.DeepCopy()
	mutable.Immutable = nil
	old.Immutable = nil
	mutable.Data["a"] = "3"
	if errs := k.ValidateUpdate(mutable, old); len(errs) != 0 {
		t.Errorf("mutable configmap update: %v", errs)
	}
}

func TestConfigMapKeyAndSize(t *testing.T) {
	cm := &corev1.ConfigMap{ObjectMeta: objectMeta("cfg"), Data: map[string]string{"bad key": "x"}}
	expectOneError(t, createErrors(t, "", "configmaps", cm), field.ErrorTypeInvalid, "data[bad key]", "a valid config key must consist of alphanumeric characters")
	big := &corev1.ConfigMap{ObjectMeta: objectMeta("cfg"), Data: map[string]string{"k": strings.Repeat("x", corev1.MaxSecretSize+1)}}
	expectOneError(t, createErrors(t, "", "configmaps", big), field.ErrorTypeTooLong, "[]", "[]: Too long: may not be more than 1048576 bytes")
}

func TestSecretTypeImmutable(t *testing.T) {
	k := kindFor(t, "", "secrets")
	old := &corev1.Secret{ObjectMeta: objectMeta("s"), Type: corev1.SecretTypeOpaque}
	updated := old.DeepCopy()
	updated.Type = "example.com/other"
	expectOneError(t, k.ValidateUpdate(updated, old), field.ErrorTypeInvalid, "type", "field is immutable")
}

func TestAnnotationsTooLong(t *testing.T) {
	cm := &corev1.ConfigMap{ObjectMeta: objectMeta("cfg")}
	cm.Annotations = map[string]string{"big": strings.Repeat("x", 300*1024)}
	expectOneError(t, createErrors(t, "", "configmaps", cm), field.ErrorTypeTooLong, "metadata.annotations",
		"metadata.annotations: Too long: may not be more than 262144 bytes")
}

func TestServiceValidation(t *testing.T) {
	dup := &corev1.Service{ObjectMeta: objectMeta("web"), Spec: corev1.ServiceSpec{Ports: []corev1.ServicePort{{Name: "a", Port: 80}, {Name: "b", Port: 80}}}}
	expectOneError(t, createErrors(t, "", "services", dup), field.ErrorTypeDuplicate, "spec.ports[1]", "Duplicate value")

	sameName := &corev1.Service{ObjectMeta: objectMeta("web"), Spec: corev1.ServiceSpec{Ports: []corev1.ServicePort{{Name: "a", Port: 80}, {Name: "a", Port: 81}}}}
	expectOneError(t, createErrors(t, "", "services", sameName), field.ErrorTypeDuplicate, "spec.ports[1].name", `Duplicate value: "a"`)

	unnamed := &corev1.Service{ObjectMeta: objectMeta("web"), Spec: corev1.ServiceSpec{Ports: []corev1.ServicePort{{Port: 80}, {Name: "b", Port: 81}}}}
	expectOneError(t, createErrors(t, "", "services", unnamed), field.ErrorTypeRequired, "spec.ports[0].name", "Required value")

	ext := &corev1.Service{ObjectMeta: objectMeta("ext"), Spec: corev1.ServiceSpec{Type: corev1.ServiceTypeExternalName}}
	expectOneError(t, createErrors(t, "", "services", ext), field.ErrorTypeRequired, "spec.externalName", "Required value")

	noPorts := &corev1.Service{ObjectMeta: objectMeta("web")}
	expectOneError(t, createErrors(t, "", "services", noPorts), field.ErrorTypeRequired, "spec.ports", "Required value")

	k := kindFor(t, "", "services")
	old := &corev1.Service{ObjectMeta: objectMeta("web"), Spec: corev1.ServiceSpec{ClusterIP: "10.96.0.10", Ports: []corev1.ServicePort{{Port: 80}}}}
	k.Default(old)
	moved := old.DeepCopy()
	moved.Spec.ClusterIP, moved.Spec.ClusterIPs = "10.96.0.11", []string{"10.96.0.11"}
	expectOneError(t, k.ValidateUpdate(moved, old), field.ErrorTypeInvalid, "spec.clusterIPs[0]", "may not change once set")
}

func TestWorkloadSelectorImmutable(t *testing.T) {
	k := kindFor(t, "apps", "deployments")
	old := validDeployment()
	k.Default(old)
	updated := old.DeepCopy()
	updated.Spec.Selector.MatchLabels["tier"] = "front"
	updated.Spec.Template.Labels["tier"] = "front"
	expectOneError(t, k.ValidateUpdate(updated, old), field.ErrorTypeInvalid, "spec.selector", "field is immutable")
}

func TestRBACAndWebhookValidation(t *testing.T) {
	role := &rbacv1.Role{ObjectMeta: objectMeta("r"), Rules: []rbacv1.PolicyRule{{APIGroups: []string{""}, Resources: []string{"pods"}}}}
	expectOneError(t, createErrors(t, "rbac.authorization.k8s.io", "roles", role), field.ErrorTypeRequired, "rules[0].verbs", "verbs must contain at least one value")

	hooks := &admissionregistrationv1.ValidatingWebhookConfiguration{
		ObjectMeta: metav1.ObjectMeta{Name: "hooks"},
		Webhooks: []admissionregistrationv1.ValidatingWebhook{{
			Name:                    "check",
			ClientConfig:            admissionregistrationv1.WebhookClientConfig{URL: ptrTo("https://example.com/check")},
			AdmissionReviewVersions: []string{"v1"},
			SideEffects:             ptrTo(admissionregistrationv1.SideEffectClassNone),
		}},
	}
	expectOneError(t, createErrors(t, "admissionregistration.k8s.io", "validatingwebhookconfigurations", hooks), field.ErrorTypeInvalid, "webhooks[0].name", "at least three segments")
	hooks.Webhooks[0].Name = "check.example.com"
	hooks.Webhooks[0].SideEffects = nil
	expectOneError(t, createErrors(t, "admissionregistration.k8s.io", "validatingwebhookconfigurations", hooks), field.ErrorTypeRequired, "webhooks[0].sideEffects", "must specify one of None, NoneOnDryRun")
}

func TestJobRestartPolicy(t *testing.T) {
	k := kindFor(t, "batch", "jobs")
	job := k.New()
	m, _ := metaOf(job)
	m.SetName("pi")
	m.SetNamespace("default")
	m.SetUID("u1")
	k.Default(job)
	errs := k.Validate(job)
	found := false
	for _, e := range errs {
		if e.Field == "spec.template.spec.restartPolicy" && e.Type == field.ErrorTypeRequired && strings.Contains(e.Detail, `"OnFailure", "Never"`) {
			found = true
		}
	}
	if !found {
		t.Errorf("want a required restartPolicy error for a Job, got %v", errs)
	}
}

func TestStatefulSetMountsItsClaimTemplates(t *testing.T) {
	d := validDeployment()
	sts := &appsv1.StatefulSet{ObjectMeta: objectMeta("db"), Spec: appsv1.StatefulSetSpec{
		Selector: d.Spec.Selector, Template: d.Spec.Template,
		VolumeClaimTemplates: []corev1.PersistentVolumeClaim{{ObjectMeta: metav1.ObjectMeta{Name: "data"}}},
	}}
	sts.Spec.Template.Spec.Containers[0].VolumeMounts = []corev1.VolumeMount{{Name: "data", MountPath: "/data"}}
	if errs := createErrors(t, "apps", "statefulsets", sts); len(errs) != 0 {
		t.Errorf("a mount of a claim template is refused: %v", errs)
	}
	sts.Spec.Template.Spec.Containers[0].VolumeMounts[0].Name = "other"
	expectOneError(t, createErrors(t, "apps", "statefulsets", sts), field.ErrorTypeNotFound,
		"spec.template.spec.containers[0].volumeMounts[0].name", "")
}

// A match condition stored before its expression was checked does not
// block updates that leave it alone; changing it checks it again.
func TestKeptMatchConditionsAccepted(t *testing.T) {
	k := kindFor(t, admissionregistrationv1.GroupName, "validatingwebhookconfigurations")
	none := admissionregistrationv1.SideEffectClassNone
	url := "https://127.0.0.1:1/validate"
	old := &admissionregistrationv1.ValidatingWebhookConfiguration{
		ObjectMeta: metav1.ObjectMeta{Name: "stored", ResourceVersion: "1"},
		Webhooks: []admissionregistrationv1.ValidatingWebhook{{
			Name:                    "one.example.com",
			ClientConfig:            admissionregistrationv1.WebhookClientConfig{URL: &url},
			SideEffects:             &none,
			AdmissionReviewVersions: []string{"v1"},
			MatchConditions:         []admissionregistrationv1.MatchCondition{{Name: "broken", Expression: "object.metadata.name =="}},
		}},
	}
	k.Default(old)
	labelled := old.DeepCopy()
	labelled.Labels = map[string]string{"team": "a"}
	if errs := k.ValidateUpdate(labelled, old); len(errs) != 0 {
		t.Errorf("update keeping the match condition: %v", errs)
	}
	changed := old.DeepCopy()
	changed.Webhooks[0].MatchConditions[0].Expression = "object.metadata.name == 1 +"
	expectOneError(t, k.ValidateUpdate(changed, old), field.ErrorTypeInvalid, "webhooks[0].matchConditions[0].expression", "compilation failed")
}
