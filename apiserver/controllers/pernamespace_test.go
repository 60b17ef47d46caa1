package controllers_test

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/devplane/devplane/apiserver/controllers"
	"github.com/devplane/devplane/apiserver/controlplane/controlplanetest"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

func TestServiceAccountsAndRootCA(t *testing.T) {
	s := startServer(t)
	ctx := context.Background()
	caPEM := s.cp.Certs.CA.CertPEM
	sa, err := controllers.NewServiceAccountsController(s.cfg, s.cp.LocalReader, nil)
	if err != nil {
		t.Fatal(err)
	}
	ca, err := controllers.NewRootCAPublisher(s.cfg, s.cp.LocalReader, caPEM, nil)
	if err != nil {
		t.Fatal(err)
	}
	run(t, sa)
	run(t, ca)

	serviceAccountExists := func(ns string) func() (bool, string) {
		return func() (bool, string) {
			_, err := s.client.CoreV1().ServiceAccounts(ns).Get(ctx, controllers.DefaultServiceAccountName, metav1.GetOptions{})
			return err == nil, fmt.Sprint(err)
		}
	}
	rootCAPublished := func(ns string) func() (bool, string) {
		return func() (bool, string) {
			cm, err := s.client.CoreV1().ConfigMaps(ns).Get(ctx, controllers.RootCAConfigMapName, metav1.GetOptions{})
			if err != nil {
				return false, err.Error()
			}
			return cm.Data[controllers.RootCAConfigMapKey] == string(caPEM) && len(cm.Data) == 1, fmt.Sprintf("%v", cm.Data)
		}
	}

	// Namespaces that existed before the controllers started, and new ones.
	createNamespace(t, s, "team-a")
	for _, ns := range []string{"default", "kube-system", "kube-public", "team-a"} {
		controlplanetest.Eventually(t, 20*time.Second, "default service account in "+ns, serviceAccountExists(ns))
		controlplanetest.Eventually(t, 20*time.Second, "root CA in "+ns, rootCAPublished(ns))
	}

	if err := s.client.CoreV1().ServiceAccounts("team-a").Delete(ctx, controllers.DefaultServiceAccountName, metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	if err := s.client.CoreV1().ConfigMaps("team-a").Delete(ctx, controllers.RootCAConfigMapName, metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	controlplanetest.Eventually(t, 20*time.Second, "default service account recreated", serviceAccountExists("team-a"))
	controlplanetest.Eventually(t, 20*time.Second, "root CA recreated", rootCAPublished("team-a"))

	cm, err := s.client.CoreV1().ConfigMaps("team-a").Get(ctx, controllers.RootCAConfigMapName, metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	cm.Data = map[string]string{controllers.RootCAConfigMapKey: "tampered", "extra": "x"}
	if _, err := s.client.CoreV1().ConfigMaps("team-a").Update(ctx, cm, metav1.UpdateOptions{}); err != nil {
		t.Fatal(err)
	}
	controlplanetest.Eventually(t, 20*time.Second, "root CA restored", rootCAPublished("team-a"))

	// A terminating namespace gets nothing back (no namespace controller
	// runs here: the namespace stays Terminating).
	if err := s.client.CoreV1().Namespaces().Delete(ctx, "team-a", metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	controlplanetest.Eventually(t, 20*time.Second, "namespace terminating", func() (bool, string) {
		ns, err := s.client.CoreV1().Namespaces().Get(ctx, "team-a", metav1.GetOptions{})
		return err == nil && ns.DeletionTimestamp != nil, fmt.Sprint(err)
	})
	if err := s.client.CoreV1().ServiceAccounts("team-a").Delete(ctx, controllers.DefaultServiceAccountName, metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	time.Sleep(300 * time.Millisecond)
	if _, err := s.client.CoreV1().ServiceAccounts("team-a").Get(ctx, controllers.DefaultServiceAccountName, metav1.GetOptions{}); !apierrors.IsNotFound(err) {
		t.Errorf("service account recreated in a terminating namespace: %v", err)
	}
}
