package builtin

import "k8s.io/apimachinery/pkg/runtime"

// defaultObject fills kube's defaults into obj in place.
func defaultObject(obj runtime.Object) {}
