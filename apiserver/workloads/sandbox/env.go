package sandbox

import (
	"fmt"
	"maps"
	"math"
	"net"
	"path"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"unicode/utf8"

	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
)

// Expand replaces $(NAME) references in s as the kubelet does for env
// values, command and args: a defined NAME is replaced by its value, an
// undefined one stays as written, "$$" is a literal "$", and any other "$"
// is kept.
func Expand(s string, lookup func(name string) (string, bool)) string {
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		if s[i] != '$' || i+1 == len(s) {
			b.WriteByte(s[i])
			continue
		}
		switch next := s[i+1]; next {
		case '$':
			b.WriteByte('$')
			i++
		case '(':
			end := strings.IndexByte(s[i+2:], ')')
			if end < 0 {
				// Unclosed: "$(" stays, and scanning goes on after it.
				b.WriteString("$(")
				i++
				continue
			}
			name := s[i+2 : i+2+end]
			if value, ok := lookup(name); ok {
				b.WriteString(value)
			} else {
				b.WriteString("$(" + name + ")")
			}
			i += 2 + end
		default:
			_, size := utf8.DecodeRuneInString(s[i+1:])
			b.WriteString(s[i : i+1+size])
			i += size
		}
	}
	return b.String()
}

// EnvSources are what a container's environment is computed from besides
// its spec.
type EnvSources struct {
	Pod     *v1.Pod
	PodIPs  []string
	HostIPs []string
	// ConfigMap and Secret look up an object of the pod's namespace;
	// found is false when it does not exist.
	ConfigMap func(name string) (data map[string]string, found bool)
	Secret    func(name string) (data map[string][]byte, found bool)
	// Services are the service variables (ServiceEnv).
	Services map[string]string
	// NodeAllocatable stands in for limits a container does not set, in
	// resourceFieldRef.
	NodeAllocatable v1.ResourceList
}

// Environment computes a container's environment ("NAME=value", sorted)
// as the kubelet does: envFrom first (with prefixes), then env in order
// with $(VAR) expansion against what came before and the service
// variables, valueFrom sources resolved, then the service variables not
// otherwise set.
func Environment(container *v1.Container, src EnvSources) ([]string, error) {
	env := map[string]string{}
	namespace := ""
	if src.Pod != nil {
		namespace = src.Pod.Namespace
	}
	// fetch reads a ConfigMap's or Secret's data; found is false for a
	// missing optional one, an error for a missing required one.
	fetch := func(kind, name string, optional *bool) (data map[string]string, found bool, err error) {
		switch {
		case kind == "ConfigMap" && src.ConfigMap != nil:
			data, found = src.ConfigMap(name)
		case kind == "Secret" && src.Secret != nil:
			var raw map[string][]byte
			if raw, found = src.Secret(name); found {
				data = make(map[string]string, len(raw))
				for k, v := range raw {
					data[k] = string(v)
				}
			}
		}
		if !found && (optional == nil || !*optional) {
			return nil, false, fmt.Errorf("%s %q not found", strings.ToLower(kind), name)
		}
		return data, found, nil
	}
	// keyValue reads one key; set is false when an optional one is missing.
	keyValue := func(kind, name, key string, optional *bool) (value string, set bool, err error) {
		data, found, err := fetch(kind, name, optional)
		if err != nil || !found {
			return "", false, err
		}
		if value, set = data[key]; !set && (optional == nil || !*optional) {
			return "", false, fmt.Errorf("couldn't find key %v in %s %v/%v", key, kind, namespace, name)
		}
		return value, set, nil
	}
	for _, from := range container.EnvFrom {
		kind, name, optional := "ConfigMap", "", (*bool)(nil)
		switch {
		case from.ConfigMapRef != nil:
			name, optional = from.ConfigMapRef.Name, from.ConfigMapRef.Optional
		case from.SecretRef != nil:
			kind, name, optional = "Secret", from.SecretRef.Name, from.SecretRef.Optional
		default:
			continue
		}
		data, _, err := fetch(kind, name, optional)
		if err != nil {
			return nil, err
		}
		for k, v := range data {
			env[from.Prefix+k] = v
		}
	}
	lookup := func(name string) (string, bool) {
		if v, ok := env[name]; ok {
			return v, true
		}
		v, ok := src.Services[name]
		return v, ok
	}
	for _, e := range container.Env {
		value, set, err := e.Value, true, error(nil)
		switch {
		case value != "":
			value = Expand(value, lookup)
		case e.ValueFrom == nil:
		case e.ValueFrom.FieldRef != nil:
			value, err = fieldValue(e.ValueFrom.FieldRef.FieldPath, src)
		case e.ValueFrom.ResourceFieldRef != nil:
			value, err = resourceValue(e.ValueFrom.ResourceFieldRef, container, src)
		case e.ValueFrom.ConfigMapKeyRef != nil:
			ref := e.ValueFrom.ConfigMapKeyRef
			value, set, err = keyValue("ConfigMap", ref.Name, ref.Key, ref.Optional)
		case e.ValueFrom.SecretKeyRef != nil:
			ref := e.ValueFrom.SecretKeyRef
			value, set, err = keyValue("Secret", ref.Name, ref.Key, ref.Optional)
		}
		if err != nil {
			return nil, err
		}
		if set {
			env[e.Name] = value
		}
	}
	for name, value := range src.Services {
		if _, ok := env[name]; !ok {
			env[name] = value
		}
	}
	out := make([]string, 0, len(env))
	for _, name := range slices.Sorted(maps.Keys(env)) {
		out = append(out, name+"="+env[name])
	}
	return out, nil
}

// subscripted matches "metadata.labels['key']".
var subscripted = regexp.MustCompile(`^(metadata\.(?:labels|annotations))\['(.*)'\]$`)

// fieldValue is a fieldRef's value, for env (and downwardAPI volumes).
func fieldValue(fieldPath string, src EnvSources) (string, error) {
	pod := src.Pod
	if pod == nil {
		return "", fmt.Errorf("fieldRef %s: no pod", fieldPath)
	}
	if m := subscripted.FindStringSubmatch(fieldPath); m != nil {
		if m[1] == "metadata.labels" {
			return pod.Labels[m[2]], nil
		}
		return pod.Annotations[m[2]], nil
	}
	first := func(list []string) string {
		if len(list) == 0 {
			return ""
		}
		return list[0]
	}
	switch fieldPath {
	case "metadata.name":
		return pod.Name, nil
	case "metadata.namespace":
		return pod.Namespace, nil
	case "metadata.uid":
		return string(pod.UID), nil
	case "metadata.labels":
		return FormatMap(pod.Labels), nil
	case "metadata.annotations":
		return FormatMap(pod.Annotations), nil
	case "spec.nodeName":
		return pod.Spec.NodeName, nil
	case "spec.serviceAccountName":
		return pod.Spec.ServiceAccountName, nil
	case "status.podIP":
		return first(src.PodIPs), nil
	case "status.podIPs":
		return strings.Join(src.PodIPs, ","), nil
	case "status.hostIP":
		return first(src.HostIPs), nil
	case "status.hostIPs":
		return strings.Join(src.HostIPs, ","), nil
	}
	return "", fmt.Errorf("unsupported fieldPath: %v", fieldPath)
}

// FormatMap writes labels or annotations as the downward API does:
// key="quoted value" lines, sorted by key.
func FormatMap(m map[string]string) string {
	lines := make([]string, 0, len(m))
	for _, k := range slices.Sorted(maps.Keys(m)) {
		lines = append(lines, k+"="+strconv.Quote(m[k]))
	}
	return strings.Join(lines, "\n")
}

// resourceValue is a resourceFieldRef's value: the container's limit or
// request divided by the divisor, rounded up; a limit the container does
// not set is the node's allocatable.
func resourceValue(ref *v1.ResourceFieldSelector, container *v1.Container, src EnvSources) (string, error) {
	target := container
	if ref.ContainerName != "" && src.Pod != nil {
		target = nil
		for _, list := range [][]v1.Container{src.Pod.Spec.Containers, src.Pod.Spec.InitContainers} {
			for i := range list {
				if list[i].Name == ref.ContainerName {
					target = &list[i]
				}
			}
		}
		if target == nil {
			return "", fmt.Errorf("container %s not found", ref.ContainerName)
		}
	}
	divisor := ref.Divisor
	if divisor.IsZero() {
		divisor = resource.MustParse("1")
	}
	kind, name, _ := strings.Cut(ref.Resource, ".")
	list := target.Resources.Requests
	if kind == "limits" {
		list = target.Resources.Limits
	}
	q, ok := list[v1.ResourceName(name)]
	if kind == "limits" && (!ok || q.IsZero()) && name != "" && !strings.HasPrefix(name, v1.ResourceHugePagesPrefix) {
		q = src.NodeAllocatable[v1.ResourceName(name)]
	}
	switch {
	case kind != "limits" && kind != "requests":
	case name == string(v1.ResourceCPU):
		return strconv.FormatInt(int64(math.Ceil(float64(q.MilliValue())/float64(divisor.MilliValue()))), 10), nil
	case name == string(v1.ResourceMemory), name == string(v1.ResourceEphemeralStorage),
		strings.HasPrefix(name, v1.ResourceHugePagesPrefix):
		return strconv.FormatInt(int64(math.Ceil(float64(q.Value())/float64(divisor.Value()))), 10), nil
	}
	return "", fmt.Errorf("unsupported container resource : %v", ref.Resource)
}

// ExpandCommand expands $(VAR) in a container's command and args with its
// environment, as the kubelet does before starting it.
func ExpandCommand(container *v1.Container, env []string) (command, args []string) {
	vars := envMap(env)
	lookup := func(name string) (string, bool) {
		v, ok := vars[name]
		return v, ok
	}
	for _, c := range container.Command {
		command = append(command, Expand(c, lookup))
	}
	for _, a := range container.Args {
		args = append(args, Expand(a, lookup))
	}
	return command, args
}

// SubPath is a volume mount's subPath as the kubelet resolves it: its
// subPathExpr expanded with the environment (every variable it names must
// have a value), never absolute, never stepping out with "..".
func SubPath(mount v1.VolumeMount, env []string) (string, error) {
	subPath := mount.SubPath
	if mount.SubPathExpr != "" {
		vars := envMap(env)
		var missing []string
		subPath = Expand(mount.SubPathExpr, func(name string) (string, bool) {
			v, ok := vars[name]
			if v == "" && !slices.Contains(missing, name) {
				missing = append(missing, name)
			}
			return v, ok
		})
		if len(missing) > 0 {
			slices.Sort(missing)
			return "", fmt.Errorf("missing value for %s", strings.Join(missing, ", "))
		}
	}
	if subPath == "" {
		return "", nil
	}
	if path.IsAbs(subPath) {
		return "", fmt.Errorf("error SubPath `%s` must not be an absolute path", subPath)
	}
	if slices.Contains(strings.Split(subPath, "/"), "..") {
		return "", fmt.Errorf("unable to provision SubPath `%s`: must not contain '..'", subPath)
	}
	return subPath, nil
}

// envMap is "NAME=value" pairs by name.
func envMap(env []string) map[string]string {
	vars := make(map[string]string, len(env))
	for _, kv := range env {
		name, value, _ := strings.Cut(kv, "=")
		vars[name] = value
	}
	return vars
}

// envName is a service name as an environment variable prefix.
func envName(s string) string { return strings.ToUpper(strings.ReplaceAll(s, "-", "_")) }

// ServiceEnv computes the service variables the kubelet adds: for the
// default namespace's "kubernetes" service always, and for the pod's
// namespace's services with enableServiceLinks; services without a
// cluster IP are skipped.
func ServiceEnv(namespace string, enableServiceLinks bool, services []*v1.Service) map[string]string {
	chosen := map[string]*v1.Service{}
	for _, svc := range services {
		if svc.Spec.ClusterIP == "" || svc.Spec.ClusterIP == v1.ClusterIPNone || len(svc.Spec.Ports) == 0 {
			continue
		}
		switch {
		case svc.Namespace == "default" && svc.Name == "kubernetes":
			if _, ok := chosen[svc.Name]; !ok {
				chosen[svc.Name] = svc
			}
		case svc.Namespace == namespace && enableServiceLinks:
			chosen[svc.Name] = svc
		}
	}
	env := map[string]string{}
	for _, svc := range chosen {
		prefix, ip := envName(svc.Name), svc.Spec.ClusterIP
		env[prefix+"_SERVICE_HOST"] = ip
		env[prefix+"_SERVICE_PORT"] = strconv.Itoa(int(svc.Spec.Ports[0].Port))
		for i, sp := range svc.Spec.Ports {
			port := strconv.Itoa(int(sp.Port))
			if sp.Name != "" {
				env[prefix+"_SERVICE_PORT_"+envName(sp.Name)] = port
			}
			protocol := string(sp.Protocol)
			if protocol == "" {
				protocol = string(v1.ProtocolTCP)
			}
			url := strings.ToLower(protocol) + "://" + net.JoinHostPort(ip, port)
			if i == 0 {
				env[prefix+"_PORT"] = url
			}
			portPrefix := prefix + "_PORT_" + port + "_" + strings.ToUpper(protocol)
			env[portPrefix] = url
			env[portPrefix+"_PROTO"] = strings.ToLower(protocol)
			env[portPrefix+"_PORT"] = port
			env[portPrefix+"_ADDR"] = ip
		}
	}
	return env
}
