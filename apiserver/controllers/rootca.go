package controllers

import (
	"context"
	"log/slog"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/client-go/rest"
)

// Names of the root CA ConfigMap, as kube-controller-manager publishes it.
const (
	RootCAConfigMapName = "kube-root-ca.crt"
	RootCAConfigMapKey  = "ca.crt"
	rootCADescription   = "Contains a CA bundle that can be used to verify the kube-apiserver when using internal endpoints such as the internal service IP or kubernetes.default.svc. No other usage is guaranteed across distributions of Kubernetes clusters."
)

// NewRootCAPublisher keeps the kube-root-ca.crt ConfigMap (key ca.crt =
// caPEM) in every Active namespace, recreating or restoring it when it is
// deleted or changed.
func NewRootCAPublisher(cfg *rest.Config, local Local, caPEM []byte, logger *slog.Logger) (Controller, error) {
	c, err := clientsFor(cfg, local, "root-ca-cert-publisher")
	if err != nil {
		return nil, err
	}
	client := c.client
	ca := string(caPEM)
	return &perNamespaceObject{
		controllerName: "root-ca-cert-publisher",
		objectName:     RootCAConfigMapName,
		client:         client,
		reads:          c.reads,
		logger:         loggerOr(logger, "root-ca-cert-publisher"),
		resource:       "configmaps",
		newObject:      func() runtime.Object { return &corev1.ConfigMap{} },
		reconcile: func(ctx context.Context, namespace string, cached any) error {
			configMaps := client.CoreV1().ConfigMaps(namespace)
			if cached == nil {
				cm := &corev1.ConfigMap{
					ObjectMeta: metav1.ObjectMeta{
						Name:        RootCAConfigMapName,
						Namespace:   namespace,
						Annotations: map[string]string{"kubernetes.io/description": rootCADescription},
					},
					Data: map[string]string{RootCAConfigMapKey: ca},
				}
				_, err := configMaps.Create(ctx, cm, metav1.CreateOptions{})
				return err
			}
			cm := cached.(*corev1.ConfigMap)
			if len(cm.Data) == 1 && cm.Data[RootCAConfigMapKey] == ca && len(cm.BinaryData) == 0 {
				return nil
			}
			cm = cm.DeepCopy()
			cm.Data = map[string]string{RootCAConfigMapKey: ca}
			cm.BinaryData = nil
			_, err := configMaps.Update(ctx, cm, metav1.UpdateOptions{})
			return err
		},
	}, nil
}
