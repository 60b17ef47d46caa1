package aggregator

import (
	"context"
	"encoding/json"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/equality"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"

	"github.com/devplane/devplane/certs"
)

// AuthConfigMapName is the ConfigMap in kube-system that tells extension
// API servers how to authenticate the aggregator and clients.
const AuthConfigMapName = "extension-apiserver-authentication"

// authConfigInterval is how often the ConfigMap is put back if changed.
var authConfigInterval = 30 * time.Second

// AuthConfigData is the ConfigMap's content, in kube's format (JSON arrays
// as strings).
func AuthConfigData(b *certs.Bundle) map[string]string {
	list := func(v ...string) string {
		out, _ := json.Marshal(v)
		return string(out)
	}
	return map[string]string{
		"client-ca-file":                     string(b.CA.CertPEM),
		"requestheader-client-ca-file":       string(b.FrontProxyCA.CertPEM),
		"requestheader-allowed-names":        list(certs.FrontProxyClientCommonName),
		"requestheader-extra-headers-prefix": list(headerExtraPrefix),
		"requestheader-group-headers":        list(headerGroup),
		"requestheader-username-headers":     list(headerUser),
		"requestheader-uid-headers":          list(headerUID),
	}
}

// runAuthConfig is the hook that writes the ConfigMap (returning once it
// exists) and keeps it current.
func (a *Aggregator) runAuthConfig(ctx context.Context) error {
	sctx := systemContext(ctx)
	deadline := time.Now().Add(30 * time.Second)
	// kube-system appears a few milliseconds after start: retry soon, then
	// back off, so readiness does not wait on a fixed sleep.
	delay := 5 * time.Millisecond
	for {
		err := a.syncAuthConfig(sctx)
		if err == nil {
			break
		}
		if time.Now().After(deadline) || ctx.Err() != nil {
			return err
		}
		sleep(ctx, delay)
		delay = min(2*delay, 200*time.Millisecond)
	}
	go func() {
		for ctx.Err() == nil {
			sleep(ctx, authConfigInterval)
			if err := a.syncAuthConfig(sctx); err != nil && ctx.Err() == nil {
				a.logger.Warn("updating "+AuthConfigMapName, "err", err)
			}
		}
	}()
	return nil
}

func (a *Aggregator) syncAuthConfig(ctx context.Context) error {
	store := a.lookup("", "v1", "configmaps")
	if store == nil {
		return nil // nothing to write to (a registry-less test)
	}
	want := AuthConfigData(a.deps.Certs)
	obj, err := store.Get(ctx, metav1.NamespaceSystem, AuthConfigMapName, metav1.GetOptions{})
	if apierrors.IsNotFound(err) {
		_, err = store.Create(ctx, metav1.NamespaceSystem, &corev1.ConfigMap{
			ObjectMeta: metav1.ObjectMeta{Name: AuthConfigMapName, Namespace: metav1.NamespaceSystem},
			Data:       want,
		}, metav1.CreateOptions{})
		return err
	}
	if err != nil {
		return err
	}
	if equality.Semantic.DeepEqual(obj.(*corev1.ConfigMap).Data, want) {
		return nil
	}
	_, _, err = store.Update(ctx, metav1.NamespaceSystem, AuthConfigMapName, "", func(_ context.Context, cur runtime.Object) (runtime.Object, error) {
		cm := cur.(*corev1.ConfigMap)
		cm.Data = want
		return cm, nil
	}, metav1.UpdateOptions{})
	return err
}
