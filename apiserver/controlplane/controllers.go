package controlplane

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"os"
	"time"

	"github.com/devplane/devplane/apiserver/controllers"
	"github.com/devplane/devplane/apiserver/healthz"
	"github.com/devplane/devplane/apiserver/serviceaccount"
)

// installControllers runs the control-plane controllers (namespace
// deletion, garbage collection, service accounts, root CA, the kubernetes
// Service's endpoints) in-process against our own API.
func (cp *ControlPlane) installControllers() error {
	host, _ := os.Hostname()
	m, err := controllers.NewManager(cp.RESTConfig(), controllers.ManagerOptions{
		CA:          cp.Certs.CA.CertPEM,
		Identity:    fmt.Sprintf("devplane-%s-%s-%d", cp.opts.Name, host, cp.Port()),
		AdvertiseIP: cp.opts.AdvertiseAddress,
		Port:        int32(cp.Port()),
		// One process on its own etcd needs no election; replicas sharing
		// an external etcd take turns.
		DisableLeaderElection: len(cp.opts.EtcdServers) == 0,
		Local:                 cp.LocalReader,
		QuotaUsage:            cp.quotaUsage,
		SignCSR:               cp.Certs.SignRequest,
		LegacyTokens: func(namespace, account, uid, secret string) (string, error) {
			return cp.saIssuer.IssueLegacy(serviceaccount.ServiceAccountRef{Namespace: namespace, Name: account, UID: uid}, secret)
		},
		Logger: cp.logger.With("component", "controllers"),
	})
	if err != nil {
		return err
	}
	cp.controllers = m
	// New custom resources join the garbage collector's graph at once.
	cp.onExtensionsChange(m.GarbageCollector().Resync)
	stop, done := make(chan struct{}), make(chan struct{})
	if err := cp.Core.AddPostStartHook("start-kube-controllers", func(context.Context) error {
		// Not the hook's context: the controllers must outlive the drain
		// so this replica can take itself out of the endpoints.
		ctx, cancel := context.WithCancel(context.Background())
		go func() {
			<-stop
			cancel()
		}()
		go func() {
			defer close(done)
			if err := m.Run(ctx); err != nil && !errors.Is(err, context.Canceled) {
				cp.logger.Error("controllers stopped", "err", err)
			}
		}()
		return nil
	}); err != nil {
		return err
	}
	if err := cp.Core.AddReadyzChecks(healthz.NamedCheck("informer-sync", func(*http.Request) error {
		for name, synced := range m.SyncChecks() {
			if !synced() {
				return fmt.Errorf("%s has not synced", name)
			}
		}
		return nil
	})); err != nil {
		return err
	}
	// Stopping lets this replica take itself out of the endpoints.
	return cp.Core.AddPreShutdownHook("stop-kube-controllers", func() error {
		close(stop)
		select {
		case <-done:
		case <-time.After(3 * time.Second):
			return errors.New("controllers did not stop within 3s")
		}
		return nil
	})
}
