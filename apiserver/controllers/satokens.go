package controllers

import (
	"bytes"
	"context"
	"log/slog"
	"sync/atomic"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/fields"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/cache"
)

// LegacyTokenIssuer signs the long-lived token kept in a
// service-account-token Secret.
type LegacyTokenIssuer func(namespace, serviceAccount, uid, secret string) (string, error)

// saTokens fills Secrets of type kubernetes.io/service-account-token, as
// kube-controller-manager's token controller does: a token for the
// service account the Secret names, the cluster's CA and the namespace,
// and the account's uid as an annotation. A token Secret whose account is
// gone (or was re-created) is deleted, and so are an account's token
// Secrets when it is deleted.
type saTokens struct {
	client kubernetes.Interface
	reads  reads
	issue  LegacyTokenIssuer
	ca     []byte
	logger *slog.Logger
	synced atomic.Bool
}

// NewServiceAccountTokensController fills service-account-token Secrets
// with tokens from issue and caPEM.
func NewServiceAccountTokensController(cfg *rest.Config, local Local, issue LegacyTokenIssuer, caPEM []byte, logger *slog.Logger) (Controller, error) {
	c, err := clientsFor(cfg, local, "serviceaccount-token-controller")
	if err != nil {
		return nil, err
	}
	return &saTokens{client: c.client, reads: c.reads, issue: issue, ca: caPEM, logger: loggerOr(logger, "serviceaccount-token")}, nil
}

func (c *saTokens) Name() string    { return "serviceaccount-token-controller" }
func (c *saTokens) HasSynced() bool { return c.synced.Load() }

// byAccount indexes token Secrets by "namespace/service account".
const byAccount = "serviceAccount"

func (c *saTokens) Run(ctx context.Context) error {
	defer c.synced.Store(false)
	queue := newQueue[string]("serviceaccount-token", 10*time.Millisecond, 10*time.Second)
	onlyTokens := func(o *metav1.ListOptions) {
		o.FieldSelector = fields.OneTermEqualSelector("type", string(corev1.SecretTypeServiceAccountToken)).String()
	}
	secrets := cache.NewSharedIndexInformer(c.reads.typed("secrets", onlyTokens), &corev1.Secret{}, 0, cache.Indexers{
		byAccount: func(obj any) ([]string, error) {
			s, ok := obj.(*corev1.Secret)
			if !ok || s.Annotations[corev1.ServiceAccountNameKey] == "" {
				return nil, nil
			}
			return []string{s.Namespace + "/" + s.Annotations[corev1.ServiceAccountNameKey]}, nil
		},
	})
	accounts := cache.NewSharedIndexInformer(c.reads.typed("serviceaccounts", nil), &corev1.ServiceAccount{}, 0, cache.Indexers{})
	enqueueSecret := func(obj any) {
		if key, err := cache.MetaNamespaceKeyFunc(obj); err == nil {
			queue.Add(key)
		}
	}
	// A change of account (created, deleted, re-created) concerns the
	// Secrets that name it.
	enqueueAccount := func(obj any) {
		key, err := cache.DeletionHandlingMetaNamespaceKeyFunc(obj)
		if err != nil {
			return
		}
		held, _ := secrets.GetIndexer().ByIndex(byAccount, key)
		for _, s := range held {
			enqueueSecret(s)
		}
	}
	if _, err := secrets.AddEventHandler(cache.ResourceEventHandlerFuncs{
		AddFunc:    enqueueSecret,
		UpdateFunc: func(_, obj any) { enqueueSecret(obj) },
	}); err != nil {
		return err
	}
	if _, err := accounts.AddEventHandler(cache.ResourceEventHandlerFuncs{
		AddFunc:    enqueueAccount,
		UpdateFunc: func(_, obj any) { enqueueAccount(obj) },
		DeleteFunc: enqueueAccount,
	}); err != nil {
		return err
	}
	synced, stopped := runInformers(ctx, secrets, accounts)
	defer stopped()
	if !synced {
		queue.ShutDown()
		return nil
	}
	c.synced.Store(true)
	runWorkers(ctx, queue, 1, c.logger, func(ctx context.Context, key string) error {
		obj, exists, err := secrets.GetIndexer().GetByKey(key)
		if err != nil || !exists {
			return err
		}
		secret := obj.(*corev1.Secret)
		if secret.Type != corev1.SecretTypeServiceAccountToken || secret.DeletionTimestamp != nil {
			return nil
		}
		cached, _, _ := accounts.GetIndexer().GetByKey(secret.Namespace + "/" + secret.Annotations[corev1.ServiceAccountNameKey])
		account, _ := cached.(*corev1.ServiceAccount)
		err = c.sync(ctx, secret, account)
		if apierrors.IsConflict(err) {
			return errRequeue // the informer brings the newer one
		}
		if apierrors.IsNotFound(err) {
			return nil
		}
		return err
	})
	return nil
}

// sync fills secret for account (nil: not in the cache), or deletes it
// when its account is gone or is another one.
func (c *saTokens) sync(ctx context.Context, secret *corev1.Secret, account *corev1.ServiceAccount) error {
	name := secret.Annotations[corev1.ServiceAccountNameKey]
	if name == "" {
		return nil // refused by validation; nothing to fill
	}
	if account == nil {
		// The cache may lag a new account: ask the server before deleting.
		live, err := c.client.CoreV1().ServiceAccounts(secret.Namespace).Get(ctx, name, metav1.GetOptions{})
		switch {
		case err == nil:
			account = live
		case !apierrors.IsNotFound(err):
			return err
		}
	}
	wantUID := secret.Annotations[corev1.ServiceAccountUIDKey]
	if account == nil || (wantUID != "" && wantUID != string(account.UID)) {
		c.logger.Debug("deleting a token secret whose service account is gone", "secret", secret.Namespace+"/"+secret.Name)
		uid := secret.UID
		return c.client.CoreV1().Secrets(secret.Namespace).Delete(ctx, secret.Name, metav1.DeleteOptions{Preconditions: &metav1.Preconditions{UID: &uid}})
	}
	if wantUID != "" && len(secret.Data[corev1.ServiceAccountTokenKey]) > 0 &&
		bytes.Equal(secret.Data[corev1.ServiceAccountRootCAKey], c.ca) && string(secret.Data[corev1.ServiceAccountNamespaceKey]) == secret.Namespace {
		return nil
	}
	filled := secret.DeepCopy()
	if filled.Data == nil {
		filled.Data = map[string][]byte{}
	}
	if filled.Annotations == nil {
		filled.Annotations = map[string]string{}
	}
	if len(filled.Data[corev1.ServiceAccountTokenKey]) == 0 || wantUID == "" {
		token, err := c.issue(secret.Namespace, name, string(account.UID), secret.Name)
		if err != nil {
			return err
		}
		filled.Data[corev1.ServiceAccountTokenKey] = []byte(token)
	}
	filled.Data[corev1.ServiceAccountRootCAKey] = c.ca
	filled.Data[corev1.ServiceAccountNamespaceKey] = []byte(secret.Namespace)
	filled.Annotations[corev1.ServiceAccountUIDKey] = string(account.UID)
	_, err := c.client.CoreV1().Secrets(secret.Namespace).Update(ctx, filled, metav1.UpdateOptions{})
	return err
}
