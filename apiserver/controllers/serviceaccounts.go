package controllers

import (
	"context"
	"log/slog"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/client-go/rest"
)

// DefaultServiceAccountName is the service account every namespace gets.
const DefaultServiceAccountName = "default"

// NewServiceAccountsController keeps a "default" ServiceAccount in every
// Active namespace, recreating it when deleted.
func NewServiceAccountsController(cfg *rest.Config, local Local, logger *slog.Logger) (Controller, error) {
	c, err := clientsFor(cfg, local, "serviceaccount-controller")
	if err != nil {
		return nil, err
	}
	client := c.client
	return &perNamespaceObject{
		controllerName: "serviceaccount-controller",
		objectName:     DefaultServiceAccountName,
		client:         client,
		reads:          c.reads,
		logger:         loggerOr(logger, "serviceaccount"),
		resource:       "serviceaccounts",
		newObject:      func() runtime.Object { return &corev1.ServiceAccount{} },
		reconcile: func(ctx context.Context, namespace string, cached any) error {
			if cached != nil {
				return nil // exists; its content is the user's
			}
			sa := &corev1.ServiceAccount{ObjectMeta: metav1.ObjectMeta{Name: DefaultServiceAccountName, Namespace: namespace}}
			_, err := client.CoreV1().ServiceAccounts(namespace).Create(ctx, sa, metav1.CreateOptions{})
			return err
		},
	}, nil
}
