package sandbox

import (
	"slices"
	"strings"
	"testing"

	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"
)

func TestExpand(t *testing.T) {
	vars := map[string]string{"A": "a", "EMPTY": ""}
	lookup := func(name string) (string, bool) { v, ok := vars[name]; return v, ok }
	for in, want := range map[string]string{
		"$(A)":         "a",
		"x$(A)y$(A)":   "xaya",
		"$(EMPTY)!":    "!",
		"$(UNSET)":     "$(UNSET)",
		"$$(A)":        "$(A)",
		"$$$(A)":       "$a",
		"$A":           "$A",
		"$":            "$",
		"a$":           "a$",
		"$(A":          "$(A",
		"$(A $(A)":     "$(A $(A)",
		"${A}":         "${A}",
		"$é":           "$é",
		"$$$$":         "$$",
		"no refs here": "no refs here",
	} {
		if got := Expand(in, lookup); got != want {
			t.Errorf("Expand(%q) = %q, want %q", in, got, want)
		}
	}
}

func testPod() *v1.Pod {
	return &v1.Pod{
		ObjectMeta: metav1.ObjectMeta{
			Name: "web-0", Namespace: "shop", UID: "uid-1",
			Labels:      map[string]string{"app": "web", "tier": "front"},
			Annotations: map[string]string{"note": `say "hi"`},
		},
		Spec: v1.PodSpec{NodeName: "node-1", ServiceAccountName: "robot"},
	}
}

func TestEnvironment(t *testing.T) {
	pod := testPod()
	container := &v1.Container{
		Name: "app",
		Resources: v1.ResourceRequirements{
			Limits:   v1.ResourceList{v1.ResourceMemory: resource.MustParse("128Mi")},
			Requests: v1.ResourceList{v1.ResourceCPU: resource.MustParse("250m")},
		},
		EnvFrom: []v1.EnvFromSource{
			{ConfigMapRef: &v1.ConfigMapEnvSource{LocalObjectReference: v1.LocalObjectReference{Name: "cfg"}}},
			{Prefix: "S_", SecretRef: &v1.SecretEnvSource{LocalObjectReference: v1.LocalObjectReference{Name: "sec"}}},
			{ConfigMapRef: &v1.ConfigMapEnvSource{LocalObjectReference: v1.LocalObjectReference{Name: "gone"}, Optional: ptr.To(true)}},
		},
		Env: []v1.EnvVar{
			{Name: "FIRST", Value: "one"},
			{Name: "SECOND", Value: "$(FIRST)-$(LATER)-$(FROM_CM)-$$(FIRST)-$(KUBERNETES_SERVICE_HOST)"},
			{Name: "LATER", Value: "late"},
			{Name: "COLOR", Value: "overridden"},
			{Name: "EMPTY"},
			{Name: "POD_NAME", ValueFrom: &v1.EnvVarSource{FieldRef: &v1.ObjectFieldSelector{FieldPath: "metadata.name"}}},
			{Name: "POD_NS", ValueFrom: &v1.EnvVarSource{FieldRef: &v1.ObjectFieldSelector{FieldPath: "metadata.namespace"}}},
			{Name: "POD_UID", ValueFrom: &v1.EnvVarSource{FieldRef: &v1.ObjectFieldSelector{FieldPath: "metadata.uid"}}},
			{Name: "APP", ValueFrom: &v1.EnvVarSource{FieldRef: &v1.ObjectFieldSelector{FieldPath: "metadata.labels['app']"}}},
			{Name: "NOTE", ValueFrom: &v1.EnvVarSource{FieldRef: &v1.ObjectFieldSelector{FieldPath: "metadata.annotations['note']"}}},
			{Name: "LABELS", ValueFrom: &v1.EnvVarSource{FieldRef: &v1.ObjectFieldSelector{FieldPath: "metadata.labels"}}},
			{Name: "NODE", ValueFrom: &v1.EnvVarSource{FieldRef: &v1.ObjectFieldSelector{FieldPath: "spec.nodeName"}}},
			{Name: "SA", ValueFrom: &v1.EnvVarSource{FieldRef: &v1.ObjectFieldSelector{FieldPath: "spec.serviceAccountName"}}},
			{Name: "POD_IP", ValueFrom: &v1.EnvVarSource{FieldRef: &v1.ObjectFieldSelector{FieldPath: "status.podIP"}}},
			{Name: "POD_IPS", ValueFrom: &v1.EnvVarSource{FieldRef: &v1.ObjectFieldSelector{FieldPath: "status.podIPs"}}},
			{Name: "HOST_IP", ValueFrom: &v1.EnvVarSource{FieldRef: &v1.ObjectFieldSelector{FieldPath: "status.hostIP"}}},
			{Name: "MEM_MI", ValueFrom: &v1.EnvVarSource{ResourceFieldRef: &v1.ResourceFieldSelector{Resource: "limits.memory", Divisor: resource.MustParse("1Mi")}}},
			{Name: "CPU_REQ_M", ValueFrom: &v1.EnvVarSource{ResourceFieldRef: &v1.ResourceFieldSelector{Resource: "requests.cpu", Divisor: resource.MustParse("1m")}}},
			{Name: "CPU_REQ", ValueFrom: &v1.EnvVarSource{ResourceFieldRef: &v1.ResourceFieldSelector{Resource: "requests.cpu"}}},
			{Name: "CPU_LIMIT", ValueFrom: &v1.EnvVarSource{ResourceFieldRef: &v1.ResourceFieldSelector{Resource: "limits.cpu"}}},
			{Name: "FROM_KEY", ValueFrom: &v1.EnvVarSource{ConfigMapKeyRef: &v1.ConfigMapKeySelector{LocalObjectReference: v1.LocalObjectReference{Name: "cfg"}, Key: "COLOR"}}},
			{Name: "PASSWORD", ValueFrom: &v1.EnvVarSource{SecretKeyRef: &v1.SecretKeySelector{LocalObjectReference: v1.LocalObjectReference{Name: "sec"}, Key: "password"}}},
			{Name: "OPTIONAL_KEY", ValueFrom: &v1.EnvVarSource{ConfigMapKeyRef: &v1.ConfigMapKeySelector{LocalObjectReference: v1.LocalObjectReference{Name: "cfg"}, Key: "nope", Optional: ptr.To(true)}}},
			{Name: "SECOND_VALUE_NOT_EXPANDED", ValueFrom: &v1.EnvVarSource{ConfigMapKeyRef: &v1.ConfigMapKeySelector{LocalObjectReference: v1.LocalObjectReference{Name: "cfg"}, Key: "REF"}}},
		},
	}
	src := EnvSources{
		Pod: pod, PodIPs: []string{"10.0.0.5", "fd00::5"}, HostIPs: []string{"192.168.1.2"},
		ConfigMap: func(name string) (map[string]string, bool) {
			if name == "cfg" {
				return map[string]string{"COLOR": "blue", "FROM_CM": "cm", "REF": "$(FIRST)"}, true
			}
			return nil, false
		},
		Secret: func(name string) (map[string][]byte, bool) {
			if name == "sec" {
				return map[string][]byte{"password": []byte("s3cret")}, true
			}
			return nil, false
		},
		Services:        map[string]string{"KUBERNETES_SERVICE_HOST": "10.96.0.1", "COLOR": "svc"},
		NodeAllocatable: v1.ResourceList{v1.ResourceCPU: resource.MustParse("4")},
	}
	env, err := Environment(container, src)
	if err != nil {
		t.Fatal(err)
	}
	want := []string{
		"APP=web", "COLOR=overridden", "CPU_LIMIT=4", "CPU_REQ=1", "CPU_REQ_M=250", "EMPTY=",
		"FIRST=one", "FROM_CM=cm", "FROM_KEY=blue", "HOST_IP=192.168.1.2",
		"KUBERNETES_SERVICE_HOST=10.96.0.1", `LABELS=app="web"` + "\n" + `tier="front"`, "LATER=late", "MEM_MI=128",
		"NODE=node-1", `NOTE=say "hi"`, "PASSWORD=s3cret", "POD_IP=10.0.0.5", "POD_IPS=10.0.0.5,fd00::5",
		"POD_NAME=web-0", "POD_NS=shop", "POD_UID=uid-1", "REF=$(FIRST)", "SA=robot", "SECOND=one-$(LATER)-cm-$(FIRST)-10.96.0.1",
		"SECOND_VALUE_NOT_EXPANDED=$(FIRST)", "S_password=s3cret",
	}
	if !slices.Equal(env, want) {
		t.Errorf("environment:\n got %q\nwant %q", env, want)
	}
}

func TestEnvironmentErrors(t *testing.T) {
	none := func(string) (map[string]string, bool) { return nil, false }
	cases := map[string]v1.Container{
		"missing configMap": {EnvFrom: []v1.EnvFromSource{{ConfigMapRef: &v1.ConfigMapEnvSource{LocalObjectReference: v1.LocalObjectReference{Name: "x"}}}}},
		"missing secret":    {Env: []v1.EnvVar{{Name: "A", ValueFrom: &v1.EnvVarSource{SecretKeyRef: &v1.SecretKeySelector{LocalObjectReference: v1.LocalObjectReference{Name: "x"}, Key: "k"}}}}},
		"missing key":       {Env: []v1.EnvVar{{Name: "A", ValueFrom: &v1.EnvVarSource{ConfigMapKeyRef: &v1.ConfigMapKeySelector{LocalObjectReference: v1.LocalObjectReference{Name: "cm"}, Key: "k"}}}}},
		"bad field":         {Env: []v1.EnvVar{{Name: "A", ValueFrom: &v1.EnvVarSource{FieldRef: &v1.ObjectFieldSelector{FieldPath: "spec.bogus"}}}}},
		"bad resource":      {Env: []v1.EnvVar{{Name: "A", ValueFrom: &v1.EnvVarSource{ResourceFieldRef: &v1.ResourceFieldSelector{Resource: "limits.gpu"}}}}},
	}
	for name, c := range cases {
		_, err := Environment(&c, EnvSources{Pod: testPod(), ConfigMap: func(n string) (map[string]string, bool) {
			if n == "cm" {
				return map[string]string{}, true
			}
			return none(n)
		}})
		if err == nil {
			t.Errorf("%s: no error", name)
		}
	}
	// Optional sources that are missing are skipped.
	env, err := Environment(&v1.Container{Env: []v1.EnvVar{
		{Name: "A", ValueFrom: &v1.EnvVarSource{SecretKeyRef: &v1.SecretKeySelector{LocalObjectReference: v1.LocalObjectReference{Name: "x"}, Key: "k", Optional: ptr.To(true)}}},
	}}, EnvSources{Pod: testPod()})
	if err != nil || len(env) != 0 {
		t.Errorf("optional secret: env %q err %v", env, err)
	}
}

func TestResourceFieldOfAnotherContainer(t *testing.T) {
	pod := testPod()
	pod.Spec.Containers = []v1.Container{
		{Name: "app"},
		{Name: "side", Resources: v1.ResourceRequirements{Limits: v1.ResourceList{v1.ResourceCPU: resource.MustParse("1500m")}}},
	}
	app := pod.Spec.Containers[0]
	app.Env = []v1.EnvVar{{
		Name: "SIDE_CPU", ValueFrom: &v1.EnvVarSource{ResourceFieldRef: &v1.ResourceFieldSelector{
			ContainerName: "side", Resource: "limits.cpu", Divisor: resource.MustParse("1m")}},
	}}
	env, err := Environment(&app, EnvSources{Pod: pod})
	if err != nil || !slices.Equal(env, []string{"SIDE_CPU=1500"}) {
		t.Errorf("env %q err %v", env, err)
	}
}

func TestExpandCommand(t *testing.T) {
	c := &v1.Container{Command: []string{"sh", "-c", "echo $(MSG) $$(MSG) $(NOPE)"}, Args: []string{"$(MSG)"}}
	cmd, args := ExpandCommand(c, []string{"MSG=hello world"})
	if strings.Join(cmd, "|") != "sh|-c|echo hello world $(MSG) $(NOPE)" || strings.Join(args, "|") != "hello world" {
		t.Errorf("command %q args %q", cmd, args)
	}
}

func TestServiceEnv(t *testing.T) {
	svc := func(ns, name, ip string, ports ...v1.ServicePort) *v1.Service {
		return &v1.Service{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name}, Spec: v1.ServiceSpec{ClusterIP: ip, Ports: ports}}
	}
	services := []*v1.Service{
		svc("default", "kubernetes", "10.96.0.1", v1.ServicePort{Name: "https", Port: 443, Protocol: v1.ProtocolTCP}),
		svc("shop", "redis-main", "10.96.0.9", v1.ServicePort{Port: 6379}, v1.ServicePort{Name: "metrics", Port: 9121, Protocol: v1.ProtocolUDP}),
		svc("shop", "headless", "None", v1.ServicePort{Port: 80}),
		svc("other", "elsewhere", "10.96.0.10", v1.ServicePort{Port: 80}),
	}
	env := ServiceEnv("shop", true, services)
	want := map[string]string{
		"KUBERNETES_SERVICE_HOST": "10.96.0.1", "KUBERNETES_SERVICE_PORT": "443", "KUBERNETES_SERVICE_PORT_HTTPS": "443",
		"KUBERNETES_PORT": "tcp://10.96.0.1:443", "KUBERNETES_PORT_443_TCP": "tcp://10.96.0.1:443",
		"KUBERNETES_PORT_443_TCP_PROTO": "tcp", "KUBERNETES_PORT_443_TCP_PORT": "443", "KUBERNETES_PORT_443_TCP_ADDR": "10.96.0.1",
		"REDIS_MAIN_SERVICE_HOST": "10.96.0.9", "REDIS_MAIN_SERVICE_PORT": "6379", "REDIS_MAIN_SERVICE_PORT_METRICS": "9121",
		"REDIS_MAIN_PORT": "tcp://10.96.0.9:6379", "REDIS_MAIN_PORT_6379_TCP": "tcp://10.96.0.9:6379",
		"REDIS_MAIN_PORT_6379_TCP_PROTO": "tcp", "REDIS_MAIN_PORT_6379_TCP_PORT": "6379", "REDIS_MAIN_PORT_6379_TCP_ADDR": "10.96.0.9",
		"REDIS_MAIN_PORT_9121_UDP": "udp://10.96.0.9:9121", "REDIS_MAIN_PORT_9121_UDP_PROTO": "udp",
		"REDIS_MAIN_PORT_9121_UDP_PORT": "9121", "REDIS_MAIN_PORT_9121_UDP_ADDR": "10.96.0.9",
	}
	if len(env) != len(want) {
		t.Errorf("got %d variables, want %d: %v", len(env), len(want), env)
	}
	for k, v := range want {
		if env[k] != v {
			t.Errorf("%s = %q, want %q", k, env[k], v)
		}
	}
	if env := ServiceEnv("shop", false, services); len(env) != 8 || env["KUBERNETES_SERVICE_HOST"] == "" {
		t.Errorf("without service links only the kubernetes service's variables: %v", env)
	}
}

// The environment reaches the script: $(VAR) expansion in the spec, then
// the shell's own.
func TestEnvironmentInAContainer(t *testing.T) {
	container := &v1.Container{
		Command: []string{"sh", "-c", `echo "$(GREETING) $GREETING ${NAME}"`},
		Env: []v1.EnvVar{
			{Name: "NAME", ValueFrom: &v1.EnvVarSource{FieldRef: &v1.ObjectFieldSelector{FieldPath: "metadata.name"}}},
			{Name: "GREETING", Value: "hello $(NAME)"},
		},
	}
	env, err := Environment(container, EnvSources{Pod: testPod()})
	if err != nil {
		t.Fatal(err)
	}
	cmd, args := ExpandCommand(container, env)
	pod, clk := newTestPod(t)
	res, out := run(t, pod, clk, ContainerConfig{Argv: Argv(nil, nil, cmd, args), Env: env})
	if res.ExitCode != 0 || out != "hello web-0 hello web-0 web-0\n" {
		t.Errorf("code %d log %q", res.ExitCode, out)
	}
}

// A volume mount's subPath as the kubelet resolves it: subPathExpr
// expanded, every variable set, never absolute, never "..".
func TestSubPath(t *testing.T) {
	env := []string{"POD=web-0", "ABS=/etc", "UP=..", "EMPTY="}
	for _, tc := range []struct {
		mount   v1.VolumeMount
		want    string
		wantErr string
	}{
		{mount: v1.VolumeMount{}, want: ""},
		{mount: v1.VolumeMount{SubPath: "data"}, want: "data"},
		{mount: v1.VolumeMount{SubPathExpr: "logs/$(POD)"}, want: "logs/web-0"},
		{mount: v1.VolumeMount{SubPathExpr: "$$(POD)"}, want: "$(POD)"},
		{mount: v1.VolumeMount{SubPathExpr: "$(ABS)"}, wantErr: "error SubPath `/etc` must not be an absolute path"},
		{mount: v1.VolumeMount{SubPath: "/etc"}, wantErr: "error SubPath `/etc` must not be an absolute path"},
		{mount: v1.VolumeMount{SubPathExpr: "a/$(UP)/b"}, wantErr: "unable to provision SubPath `a/../b`: must not contain '..'"},
		{mount: v1.VolumeMount{SubPathExpr: "$(UNSET)/$(EMPTY)/$(POD)"}, wantErr: "missing value for EMPTY, UNSET"},
		{mount: v1.VolumeMount{SubPathExpr: "a..b"}, want: "a..b"},
	} {
		got, err := SubPath(tc.mount, env)
		switch {
		case tc.wantErr != "" && (err == nil || err.Error() != tc.wantErr):
			t.Errorf("%+v: error %v, want %q", tc.mount, err, tc.wantErr)
		case tc.wantErr == "" && (err != nil || got != tc.want):
			t.Errorf("%+v: %q, %v; want %q", tc.mount, got, err, tc.want)
		}
	}
}
