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
	claimsResource      = corev1.SchemeGroupVersion.WithResource("persistentvolumeclaims")
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

// readAs is one object of gvr from its watch cache, as type T.
func readAs[T runtime.Object](ctx context.Context, k *kubelet, gvr schema.GroupVersionResource, namespace, name string) (T, error) {
	var none T
	obj, err := k.read(ctx, gvr, namespace, name)
	if err != nil {
		return none, err
	}
	typed, ok := obj.(T)
	if !ok {
		return none, fmt.Errorf("%s %q: read a %T", gvr.Resource, name, obj)
	}
	return typed, nil
}

func (k *kubelet) configMap(ctx context.Context, namespace, name string) (*corev1.ConfigMap, error) {
	return readAs[*corev1.ConfigMap](ctx, k, configMapsResource, namespace, name)
}

func (k *kubelet) secret(ctx context.Context, namespace, name string) (*corev1.Secret, error) {
	return readAs[*corev1.Secret](ctx, k, secretsResource, namespace, name)
}

func (k *kubelet) trustBundle(ctx context.Context, name string) (*certificatesv1.ClusterTrustBundle, error) {
	return readAs[*certificatesv1.ClusterTrustBundle](ctx, k, trustBundleResource, "", name)
}

func (k *kubelet) claim(ctx context.Context, namespace, name string) (*corev1.PersistentVolumeClaim, error) {
	return readAs[*corev1.PersistentVolumeClaim](ctx, k, claimsResource, namespace, name)
}
