package workloads

import (
	"context"
	"fmt"

	certificatesv1 "k8s.io/api/certificates/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/fields"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
)

// The objects the kubelet reads for each container start (configMaps,
// secrets, ClusterTrustBundles) come from the server's watch caches in
// process, as the controllers' informers do: no request, no encoding.
// They are the cache's own objects: read, never changed.

var (
	configMapsResource  = corev1.SchemeGroupVersion.WithResource("configmaps")
	secretsResource     = corev1.SchemeGroupVersion.WithResource("secrets")
	trustBundleResource = certificatesv1.SchemeGroupVersion.WithResource("clustertrustbundles")
)

// read is one object from its watch cache, or kube's NotFound.
func (k *kubelet) read(ctx context.Context, gvr schema.GroupVersionResource, namespace, name string) (runtime.Object, error) {
	lr, ok := k.m.opts.Local(gvr)
	if !ok {
		return nil, fmt.Errorf("%s is not served here", gvr.GroupResource())
	}
	list, err := lr.List(ctx, namespace, metav1.ListOptions{ResourceVersion: "0",
		FieldSelector: fields.OneTermEqualSelector("metadata.name", name).String()})
	if err != nil {
		return nil, err
	}
	items, err := meta.ExtractList(list)
	if err != nil {
		return nil, err
	}
	if len(items) == 0 {
		return nil, apierrors.NewNotFound(gvr.GroupResource(), name)
	}
	return items[0], nil
}

func (k *kubelet) configMap(ctx context.Context, namespace, name string) (*corev1.ConfigMap, error) {
	obj, err := k.read(ctx, configMapsResource, namespace, name)
	if err != nil {
		return nil, err
	}
	cm, ok := obj.(*corev1.ConfigMap)
	if !ok {
		return nil, fmt.Errorf("configmap %q: read a %T", name, obj)
	}
	return cm, nil
}

func (k *kubelet) secret(ctx context.Context, namespace, name string) (*corev1.Secret, error) {
	obj, err := k.read(ctx, secretsResource, namespace, name)
	if err != nil {
		return nil, err
	}
	s, ok := obj.(*corev1.Secret)
	if !ok {
		return nil, fmt.Errorf("secret %q: read a %T", name, obj)
	}
	return s, nil
}

func (k *kubelet) trustBundle(ctx context.Context, name string) (*certificatesv1.ClusterTrustBundle, error) {
	obj, err := k.read(ctx, trustBundleResource, "", name)
	if err != nil {
		return nil, err
	}
	ctb, ok := obj.(*certificatesv1.ClusterTrustBundle)
	if !ok {
		return nil, fmt.Errorf("clustertrustbundle %q: read a %T", name, obj)
	}
	return ctb, nil
}
