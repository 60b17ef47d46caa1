package controlplane

import (
	"time"

	"k8s.io/client-go/rest"
	clientcmdapi "k8s.io/client-go/tools/clientcmd/api"
)

// ContextName is the kubeconfig context of an instance: devplane-<name>.
func ContextName(instance string) string { return "devplane-" + instance }

// Kubeconfig returns a kubeconfig for the admin (client certificate in
// system:masters), with cluster, user and context all named devplane-<name>.
func (cp *ControlPlane) Kubeconfig() *clientcmdapi.Config {
	return cp.kubeconfigFor(cp.Certs.Admin.CertPEM, cp.Certs.Admin.KeyPEM)
}

// KubeconfigFor returns a kubeconfig for another identity, with a client
// certificate signed by devplane's CA.
func (cp *ControlPlane) KubeconfigFor(user string, groups []string) (*clientcmdapi.Config, error) {
	certPEM, keyPEM, err := cp.Certs.IssueClient(user, groups, 365*24*time.Hour)
	if err != nil {
		return nil, err
	}
	return cp.kubeconfigFor(certPEM, keyPEM), nil
}

func (cp *ControlPlane) kubeconfigFor(certPEM, keyPEM []byte) *clientcmdapi.Config {
	name := ContextName(cp.opts.Name)
	cfg := clientcmdapi.NewConfig()
	cfg.Clusters[name] = &clientcmdapi.Cluster{
		Server:                   cp.URL(),
		CertificateAuthorityData: cp.Certs.CA.CertPEM,
	}
	cfg.AuthInfos[name] = &clientcmdapi.AuthInfo{
		ClientCertificateData: certPEM,
		ClientKeyData:         keyPEM,
	}
	cfg.Contexts[name] = &clientcmdapi.Context{Cluster: name, AuthInfo: name, Namespace: "default"}
	cfg.CurrentContext = name
	return cfg
}

// RESTConfig returns a client-go config for the admin.
func (cp *ControlPlane) RESTConfig() *rest.Config {
	return &rest.Config{
		Host: cp.URL(),
		TLSClientConfig: rest.TLSClientConfig{
			CAData:   cp.Certs.CA.CertPEM,
			CertData: cp.Certs.Admin.CertPEM,
			KeyData:  cp.Certs.Admin.KeyPEM,
		},
		QPS:   -1, // no client-side throttling against a local server
		Burst: -1,
	}
}
